import { describe, expect, it } from "vitest"
import { credentialOfSecret, parseCredentialName } from "../../../src/services/credentials/credential.js"

const b64 = (text: string) => Buffer.from(text).toString("base64")
const secret = (type: string, data: Record<string, string>) => ({
  metadata: { namespace: "mesh-system", name: "web" },
  type,
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
})

describe("credentials from Secrets", () => {
  it("reads a TLS Secret: tls.crt and tls.key, with ca.crt and ca.crl when present", () => {
    expect(
      credentialOfSecret(
        secret("kubernetes.io/tls", { "tls.crt": "CERT", "tls.key": "KEY", "ca.crt": "CA", "ca.crl": "CRL" }),
      ),
    ).toEqual({
      namespace: "mesh-system",
      name: "web",
      certificateChain: "CERT",
      privateKey: "KEY",
      caCertificates: "CA",
      crl: "CRL",
    })
  })

  it("reads a generic Secret: cert, key and cacert", () => {
    expect(credentialOfSecret(secret("Opaque", { cert: "CERT", key: "KEY", cacert: "CA" }))).toEqual({
      namespace: "mesh-system",
      name: "web",
      certificateChain: "CERT",
      privateKey: "KEY",
      caCertificates: "CA",
    })
  })

  it("a CA alone is a credential (the `-cacert` Secret of a MUTUAL server)", () => {
    expect(credentialOfSecret(secret("Opaque", { cacert: "CA" }))).toEqual({
      namespace: "mesh-system",
      name: "web",
      caCertificates: "CA",
    })
  })

  it("Secrets without TLS material, or a key without its certificate, hold none", () => {
    expect(credentialOfSecret(secret("Opaque", { password: "hunter2" }))).toBeUndefined()
    expect(credentialOfSecret(secret("kubernetes.io/tls", { "tls.key": "KEY" }))).toBeUndefined()
    expect(credentialOfSecret(secret("kubernetes.io/tls", { "tls.crt": "", "tls.key": "" }))).toBeUndefined()
    expect(credentialOfSecret({ data: { cert: b64("C"), key: b64("K") } })).toBeUndefined()
  })
})

describe("credential resource names", () => {
  it.each([
    ["kubernetes://web", { scheme: "kubernetes", name: "web", caOnly: false }],
    ["kubernetes://web-cacert", { scheme: "kubernetes", name: "web", caOnly: true }],
    ["kubernetes://other/web", { scheme: "kubernetes", namespace: "other", name: "web", caOnly: false }],
    [
      "kubernetes-gateway://other/web",
      { scheme: "kubernetes-gateway", namespace: "other", name: "web", caOnly: false },
    ],
    [
      "kubernetes-gateway://other/web-cacert",
      { scheme: "kubernetes-gateway", namespace: "other", name: "web", caOnly: true },
    ],
  ])("%s", (name, expected) => {
    expect(parseCredentialName(name)).toEqual(expected)
  })

  it.each(["default", "ROOTCA", "file-cert:/a~/b", "kubernetes://", "kubernetes://a/b/c", "kubernetes-gateway://web"])(
    "%s is not a credential name",
    (name) => {
      expect(parseCredentialName(name)).toBeUndefined()
    },
  )
})
