import { describe, expect, it } from "@effect/vitest"
import {
  decodeSecretData,
  encodeSecretData,
  isSelfSignedStore,
  matchLayout,
  selfSignedSecret,
} from "../../../src/services/ca/cacerts.js"

const LAYOUTS = [
  { cert: "ca-cert.pem", key: "ca-key.pem", chain: "cert-chain.pem", root: "root-cert.pem" },
  { cert: "tls.crt", key: "tls.key", chain: undefined, root: "ca.crt" },
]

describe("cacerts Secret", () => {
  it("finds a complete layout, names the missing keys of an incomplete one", () => {
    const full = { "ca-cert.pem": "c", "ca-key.pem": "k", "cert-chain.pem": "", "root-cert.pem": "r" }
    expect(matchLayout(full, LAYOUTS)).toEqual({ _tag: "Complete", layout: LAYOUTS[0] })
    expect(matchLayout({ "tls.crt": "c", "tls.key": "k", "ca.crt": "r" }, LAYOUTS)).toEqual({
      _tag: "Complete",
      layout: LAYOUTS[1],
    })
    expect(matchLayout({ "ca-cert.pem": "c" }, LAYOUTS)).toMatchObject({
      _tag: "Incomplete",
      missing: ["ca-key.pem", "cert-chain.pem", "root-cert.pem"],
    })
    expect(matchLayout({ unrelated: "x" }, LAYOUTS)).toEqual({ _tag: "Absent" })
  })

  it("writes the self-signed store with the reference's keys, base64-encoded", () => {
    const secret = selfSignedSecret("mesh-system", "cacerts", {
      rootPem: "ROOT",
      keyPem: "KEY",
      trustBundlePem: "ROOT+OLD",
      retiredJson: "[]",
    })
    expect(secret.metadata).toEqual({ name: "cacerts", namespace: "mesh-system" })
    expect(isSelfSignedStore(secret)).toBe(true)
    expect(decodeSecretData(secret)).toEqual({
      "ca-cert.pem": "ROOT",
      "ca-key.pem": "KEY",
      "cert-chain.pem": "",
      "root-cert.pem": "ROOT+OLD",
      "retired-roots.json": "[]",
    })
    expect(encodeSecretData({ a: "hi" })).toEqual({ a: "aGk=" })
    expect(isSelfSignedStore({ metadata: { name: "cacerts" }, type: "Opaque" })).toBe(false)
  })
})
