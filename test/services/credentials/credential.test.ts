import { describe, expect, it } from "vitest"
import {
  credentialOfConfigMap,
  credentialOfSecret,
  parseCredentialName,
} from "../../../src/services/credentials/credential.js"

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

describe("CA bundles from ConfigMaps", () => {
  const configMap = (data: Record<string, string>) => ({ metadata: { namespace: "backend", name: "ca" }, data })
  it("reads ca.crt (with ca.crl) as plain text", () => {
    expect(credentialOfConfigMap(configMap({ "ca.crt": "CA", "ca.crl": "CRL" }))).toEqual({
      namespace: "backend",
      name: "ca",
      caCertificates: "CA",
      crl: "CRL",
      source: "ConfigMap",
    })
  })

  it("prefers the generic cacert key (with crl) over ca.crt, as the reference", () => {
    expect(
      credentialOfConfigMap(configMap({ cacert: "GENERIC", crl: "G-CRL", "ca.crt": "CA", "ca.crl": "CRL" })),
    ).toEqual({
      namespace: "backend",
      name: "ca",
      caCertificates: "GENERIC",
      crl: "G-CRL",
      source: "ConfigMap",
    })
    // An empty cacert does not hide ca.crt.
    expect(credentialOfConfigMap(configMap({ cacert: " ", "ca.crt": "CA" }))?.caCertificates).toBe("CA")
  })

  it("ConfigMaps without a CA bundle, or without a name, hold none", () => {
    expect(credentialOfConfigMap(configMap({ "config.yaml": "a: 1" }))).toBeUndefined()
    expect(credentialOfConfigMap(configMap({ "ca.crt": "" }))).toBeUndefined()
    expect(credentialOfConfigMap({ data: { "ca.crt": "CA" } })).toBeUndefined()
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
    ["configmap://backend/ca", { scheme: "configmap", namespace: "backend", name: "ca", caOnly: true }],
    ["configmap://backend/ca-cacert", { scheme: "configmap", namespace: "backend", name: "ca", caOnly: true }],
  ])("%s", (name, expected) => {
    expect(parseCredentialName(name)).toEqual(expected)
  })

  it.each([
    "default",
    "ROOTCA",
    "file-cert:/a~/b",
    "kubernetes://",
    "kubernetes://a/b/c",
    "kubernetes-gateway://web",
    "configmap://ca",
    "configmap://a/b/c",
    "configmap:///ca",
  ])("%s is not a credential name", (name) => {
    expect(parseCredentialName(name)).toBeUndefined()
  })
})
