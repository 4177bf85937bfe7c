/** The `file-cert:`/`file-root:` SDS names: written by proxygen, parsed by the agent's SDS, one spelling. */
import { describe, expect, it } from "vitest"
import {
  fileCertName,
  fileRootName,
  filesOf,
  isFileSecretName,
  parseFileSecretName,
} from "../../../src/services/credentials/file-secret-name.js"

describe("file secret names", () => {
  it("spells the reference's names and reads them back", () => {
    const cert = fileCertName("/etc/certs/cert.pem", "/etc/certs/key.pem")
    expect(cert).toBe("file-cert:/etc/certs/cert.pem~/etc/certs/key.pem")
    expect(parseFileSecretName(cert)).toEqual({ kind: "cert", cert: "/etc/certs/cert.pem", key: "/etc/certs/key.pem" })
    const root = fileRootName("/etc/certs/ca.pem")
    expect(root).toBe("file-root:/etc/certs/ca.pem")
    expect(parseFileSecretName(root)).toEqual({ kind: "root", ca: "/etc/certs/ca.pem" })
    expect(filesOf(parseFileSecretName(cert)!)).toEqual(["/etc/certs/cert.pem", "/etc/certs/key.pem"])
    expect(filesOf(parseFileSecretName(root)!)).toEqual(["/etc/certs/ca.pem"])
  })

  it("keeps relative paths and paths with colons as named", () => {
    expect(parseFileSecretName("file-cert:certs/a:b.pem~key.pem")).toEqual({
      kind: "cert",
      cert: "certs/a:b.pem",
      key: "key.pem",
    })
  })

  it.each([
    "file-cert:/a.pem",
    "file-cert:/a.pem~",
    "file-cert:~/b.pem",
    "file-cert:/a~/b~/c",
    "file-cert:",
    "file-root:",
    "file-root:/a~/b",
  ])("%s is spelled as a file secret but names no files", (name) => {
    expect(isFileSecretName(name)).toBe(true)
    expect(parseFileSecretName(name)).toBeUndefined()
  })

  it.each(["default", "ROOTCA", "kubernetes://web", "file:/a", "FILE-CERT:/a~/b"])(
    "%s is not a file secret",
    (name) => {
      expect(isFileSecretName(name)).toBe(false)
      expect(parseFileSecretName(name)).toBeUndefined()
    },
  )
})
