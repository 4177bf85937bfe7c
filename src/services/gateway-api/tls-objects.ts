/**
 * The Secrets and ConfigMaps a Gateway's listeners reference for TLS, checked as the reference
 * checks them before serving a listener: a certificate Secret must exist and hold a certificate
 * chain with its matching private key; a CA bundle (ConfigMap `ca.crt` or Secret) must exist and
 * hold at least one parseable certificate. Parsing is pure (no I/O), so it lives with the
 * conversion.
 */
import { createPrivateKey, X509Certificate } from "node:crypto"
import { credentialOfSecret, type SecretObject } from "../credentials/credential.js"

/** The referenced objects by `namespace/name`; what is absent from a map does not exist. */
export interface TlsObjects {
  readonly secrets: ReadonlyMap<string, SecretObject>
  readonly configMaps: ReadonlyMap<string, Readonly<Record<string, string>>>
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g

/** Why a Secret cannot serve as a listener certificate, or undefined when it can. */
export const certificateSecretProblem = (secret: SecretObject): string | undefined => {
  const credential = credentialOfSecret(secret)
  if (credential?.certificateChain === undefined || credential.privateKey === undefined)
    return "the secret holds no certificate and key (tls.crt and tls.key)"
  try {
    const certificate = new X509Certificate(credential.certificateChain)
    const key = createPrivateKey(credential.privateKey)
    if (!certificate.checkPrivateKey(key)) return "the certificate is malformed: the private key does not match it"
    return undefined
  } catch (e) {
    return `the certificate is malformed: ${errorText(e)}`
  }
}

/** Why a PEM bundle holds no usable CA certificate, or undefined when it holds one. */
export const caBundleProblem = (pem: string | undefined): string | undefined => {
  const blocks = pem?.match(PEM_CERTIFICATE) ?? []
  if (blocks.length === 0) return "the bundle holds no certificate"
  for (const block of blocks) {
    try {
      new X509Certificate(block)
    } catch {
      return "the bundle is malformed"
    }
  }
  return undefined
}

/** The CA bundle of a Secret (`ca.crt`, else `cacert`), decoded; a CA Secret need hold no key pair. */
export const caOfSecret = (secret: SecretObject): string | undefined => {
  const data = secret.data ?? {}
  const value = data["ca.crt"] ?? data.cacert
  return value === undefined || value === "" ? undefined : Buffer.from(value, "base64").toString("utf8")
}
