import { execFile } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { parseCsr } from "../../../src/services/ca/csr.js"
import { makeCsr } from "../../layers/ca/helpers.js"

const execFileAsync = promisify(execFile)
const ID = "spiffe://cluster.local/ns/default/sa/sleep"

/** A CSR made by openssl for a given private key (PEM) file content. */
const opensslCsr = async (keyPem: string) => {
  const { writeFile, mkdtemp } = await import("node:fs/promises")
  const { join } = await import("node:path")
  const { tmpdir } = await import("node:os")
  const dir = await mkdtemp(join(tmpdir(), "mesh-csr-"))
  await writeFile(join(dir, "k.pem"), keyPem)
  const { stdout } = await execFileAsync("openssl", [
    "req",
    "-new",
    "-key",
    join(dir, "k.pem"),
    "-subj",
    "/O=t",
    "-addext",
    `subjectAltName=URI:${ID},DNS:example.test`,
  ])
  return stdout
}

describe("CSR parsing and verification", () => {
  it.effect("accepts ECDSA P-256 and P-384 CSRs and extracts their SANs", () =>
    Effect.gen(function* () {
      for (const kind of ["P-256", "P-384"] as const) {
        const { csrPem } = yield* Effect.promise(() => makeCsr([ID], kind))
        const parsed = yield* parseCsr(csrPem)
        expect(parsed.keyDescription).toBe(`EC-${kind}`)
        expect(parsed.sans.uris).toEqual([ID])
      }
    }),
  )

  it.effect("accepts an RSA-2048 CSR made by openssl, with URI and DNS SANs", () =>
    Effect.gen(function* () {
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
      const pem = yield* Effect.promise(() =>
        opensslCsr(privateKey.export({ format: "pem", type: "pkcs8" }).toString()),
      )
      const parsed = yield* parseCsr(pem)
      expect(parsed.keyDescription).toBe("RSA-2048")
      expect(parsed.sans.uris).toEqual([ID])
      expect(parsed.sans.dnsNames).toEqual(["example.test"])
    }),
  )

  it.effect("refuses RSA keys below 2048 bits, other curves and other key types", () =>
    Effect.gen(function* () {
      const keys = [
        [generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey, /RSA key size 1024 is not allowed/],
        [generateKeyPairSync("ec", { namedCurve: "secp521r1" }).privateKey, /EC curve secp521r1 is not allowed/],
        [generateKeyPairSync("ed25519").privateKey, /key type ed25519 is not allowed/],
      ] as const
      for (const [key, message] of keys) {
        const pem = yield* Effect.promise(() => opensslCsr(key.export({ format: "pem", type: "pkcs8" }).toString()))
        const error = yield* Effect.flip(parseCsr(pem))
        expect(error.reason).toMatch(message)
      }
    }),
  )

  it.effect("refuses garbage and a CSR whose signature does not verify", () =>
    Effect.gen(function* () {
      expect((yield* Effect.flip(parseCsr("hello"))).reason).toMatch(/no PEM block of type CERTIFICATE REQUEST/)
      const junk = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----"
      expect((yield* Effect.flip(parseCsr(junk))).reason).toMatch(/failed to parse the CSR/)
      const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
      const der = Buffer.from(csrPem.replace(/-----[A-Z ]+-----|\s/g, ""), "base64")
      // Flip a bit inside the subject's SAN value: the structure stays valid, the signature does not.
      const at = der.indexOf(Buffer.from("sleep"))
      der[at] = der[at]! ^ 0x01
      const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`
      expect((yield* Effect.flip(parseCsr(tampered))).reason).toBe("the CSR signature is invalid")
    }),
  )
})
