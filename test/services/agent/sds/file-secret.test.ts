/**
 * The secrets built from the files a `file-cert:`/`file-root:` name reads: a matching pair is
 * served inline with a version that follows the bytes; a pair that does not match (caught
 * half-rotated), garbage or an empty bundle is refused with a reason naming the file.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { fileCertSecret, fileRootSecret } from "../../../../src/services/agent/sds/file-secret.js"
import { selfSigned } from "../../gateway-api/tls-fixtures.js"

type Pair = Awaited<ReturnType<typeof selfSigned>>
let a: Pair
let b: Pair
/** As files usually are: each PEM ends with a newline. */
const asFile = (pair: Pair): Pair => ({ cert: `${pair.cert.trimEnd()}\n`, key: `${pair.key.trimEnd()}\n` })
beforeAll(async () => {
  a = asFile(await selfSigned("a.example.com"))
  b = asFile(await selfSigned("b.example.com"))
})

const CERT = { kind: "cert", cert: "/certs/tls.crt", key: "/certs/tls.key" } as const
const ROOT = { kind: "root", ca: "/certs/ca.crt" } as const
const NAME = "file-cert:/certs/tls.crt~/certs/tls.key"

describe("fileCertSecret", () => {
  it("serves a matching certificate and key inline, versioned by their bytes", () => {
    const served = fileCertSecret(NAME, CERT, a.cert, a.key)
    if (served._tag !== "Loaded") throw new Error(served.reason)
    expect(served.secret.name).toBe(NAME)
    const tls = served.secret.tls_certificate as {
      certificate_chain: { inline_bytes: Buffer }
      private_key: { inline_bytes: Buffer }
    }
    expect(tls.certificate_chain.inline_bytes.toString()).toBe(a.cert)
    expect(tls.private_key.inline_bytes.toString()).toBe(a.key)
    expect(served.summary).toBe("certificate valid until 2034-01-01T00:00:00.000Z")
    // Same bytes, same version; other bytes, another.
    expect(fileCertSecret(NAME, CERT, a.cert, a.key)).toMatchObject({ version: served.version })
    const other = fileCertSecret(NAME, CERT, b.cert, b.key)
    expect(other._tag).toBe("Loaded")
    expect(other._tag === "Loaded" && other.version).not.toBe(served.version)
  })

  it("serves a chain: the key must be the first certificate's", () => {
    expect(fileCertSecret(NAME, CERT, a.cert + b.cert, a.key)._tag).toBe("Loaded")
    expect(fileCertSecret(NAME, CERT, b.cert + a.cert, a.key)).toEqual({
      _tag: "Invalid",
      reason: "the private key in /certs/tls.key does not match the certificate in /certs/tls.crt",
    })
  })

  it("refuses a key of another certificate (a pair caught half-rotated)", () => {
    expect(fileCertSecret(NAME, CERT, a.cert, b.key)).toEqual({
      _tag: "Invalid",
      reason: "the private key in /certs/tls.key does not match the certificate in /certs/tls.crt",
    })
  })

  it("refuses files that hold no certificate or no key, naming the file", () => {
    expect(fileCertSecret(NAME, CERT, "", a.key)).toEqual({
      _tag: "Invalid",
      reason: "/certs/tls.crt holds no PEM certificate",
    })
    expect(fileCertSecret(NAME, CERT, a.key, a.key)).toEqual({
      _tag: "Invalid",
      reason: "/certs/tls.crt holds no PEM certificate",
    })
    const garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    expect(fileCertSecret(NAME, CERT, garbage, a.key)).toMatchObject({
      _tag: "Invalid",
      reason: expect.stringMatching(/^\/certs\/tls\.crt: certificate 1 does not parse/),
    })
    expect(fileCertSecret(NAME, CERT, a.cert, "not a key")).toMatchObject({
      _tag: "Invalid",
      reason: expect.stringMatching(/^\/certs\/tls\.key holds no readable private key/),
    })
  })
})

describe("fileRootSecret", () => {
  it("serves the bundle's certificates as a validation context", () => {
    const served = fileRootSecret("file-root:/certs/ca.crt", ROOT, a.cert + b.cert)
    if (served._tag !== "Loaded") throw new Error(served.reason)
    const ctx = served.secret.validation_context as { trusted_ca: { inline_bytes: Buffer } }
    expect(ctx.trusted_ca.inline_bytes.toString()).toBe(a.cert + b.cert)
    expect(served.summary).toBe("2 CA certificate(s)")
  })

  it("leaves out certificates that do not parse, and refuses a bundle with none left", () => {
    const garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    const served = fileRootSecret("file-root:/certs/ca.crt", ROOT, `${garbage}${a.cert}`)
    if (served._tag !== "Loaded") throw new Error(served.reason)
    const ctx = served.secret.validation_context as { trusted_ca: { inline_bytes: Buffer } }
    expect(ctx.trusted_ca.inline_bytes.toString()).toBe(a.cert)
    expect(served.summary).toBe("1 CA certificate(s), 1 left out as unparsable")
    expect(fileRootSecret("n", ROOT, garbage)).toEqual({
      _tag: "Invalid",
      reason: "/certs/ca.crt: none of its 1 certificates parses",
    })
    expect(fileRootSecret("n", ROOT, "hello")).toEqual({
      _tag: "Invalid",
      reason: "/certs/ca.crt holds no PEM certificate",
    })
  })
})
