/**
 * The agent's secret discovery service (spec 001 §2 "Secret discovery socket", §5.4): the two
 * secrets the reference serves — `default` (the workload's key and chain) and `ROOTCA` (the
 * trust bundle) — built from the held certificate.
 */
import type { WorkloadCertificate } from "../identity/identity.js"

export const SECRET_TYPE_URL = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"
export const WORKLOAD_SECRET = "default"
export const ROOT_SECRET = "ROOTCA"
export const WORKLOAD_IDENTITY_DIR = "./var/run/secrets/workload-spiffe-uds"

/** A Secret as a proto-loader object (bytes as Buffer). */
export type SecretObject = Readonly<Record<string, unknown>> & { readonly name: string }

/** The secret named `name`, or undefined for names the agent does not serve. */
export const secretFor = (name: string, cert: WorkloadCertificate): SecretObject | undefined => {
  if (name === WORKLOAD_SECRET) {
    return {
      name,
      tls_certificate: {
        certificate_chain: { inline_bytes: Buffer.from(cert.certChainPem) },
        private_key: { inline_bytes: Buffer.from(cert.keyPem) },
      },
    }
  }
  if (name === ROOT_SECRET) {
    return { name, validation_context: { trusted_ca: { inline_bytes: Buffer.from(cert.rootCertPem) } } }
  }
  return undefined
}

/** The version of a secret for a certificate: the root's changes only with the trust bundle. */
export const secretVersion = (name: string, cert: WorkloadCertificate): string =>
  name === ROOT_SECRET ? `root-${hash(cert.rootCertPem)}` : `cert-${cert.notBefore.getTime()}-${hash(cert.keyPem)}`

const hash = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}
