/** Certificates and Secrets for the Gateway-API tests that check referenced objects. */
import { webcrypto } from "node:crypto"
import { x509 } from "../../../src/services/ca/x509.js"
import type { Listener } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import type { SecretObject } from "../../../src/services/credentials/credential.js"

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")

/** A self-signed P-256 certificate for `name` and its PKCS#8 key, both PEM. */
export const selfSigned = async (name: string) => {
  const algorithm = { name: "ECDSA", namedCurve: "P-256" } as const
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"])
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${name}`,
    notBefore: new Date("2024-01-01T00:00:00Z"),
    notAfter: new Date("2034-01-01T00:00:00Z"),
    keys: keys as webcrypto.CryptoKeyPair,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
  })
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64")
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`
  return { cert: cert.toString("pem"), key }
}

/** A TLS Secret of namespace `infra` with `data` base64-encoded. */
export const tlsSecret = (name: string, data: Record<string, string>): SecretObject => ({
  metadata: { namespace: "infra", name },
  type: "kubernetes.io/tls",
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
})

/** An HTTPS listener `<name>.example.com:443` terminating with Secret `certificate`, optionally checking clients against `ca`. */
export const httpsListener = (name: string, certificate: string, ca?: { kind: string; name: string }): Listener => ({
  name,
  port: 443,
  protocol: "HTTPS",
  hostname: `${name}.example.com`,
  tls: {
    mode: "Terminate",
    certificateRefs: [{ name: certificate }],
    ...(ca !== undefined ? { frontendValidation: { caCertificateRefs: [{ group: "", ...ca }] } } : {}),
  },
  allowedRoutes: { namespaces: { from: "All" } },
})
