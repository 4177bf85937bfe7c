/**
 * The secrets the agent's SDS serves from files the proxy names (`file-cert:<cert>~<key>`,
 * `file-root:<ca>`, see services/credentials/file-secret-name.ts), built from the files' text
 * once it is read. As the reference, the material is checked before it is served — the
 * certificate parses and the key is its key (a pair caught half-rotated is not served), a CA
 * bundle keeps only the certificates that parse and needs at least one — and sent inline, so
 * the proxy never reads the files itself and gets each rotation pushed.
 */
import { createHash, createPrivateKey, X509Certificate } from "node:crypto"
import { pemBlocks } from "../../ca/x509.js"
import type { FileSecretName } from "../../credentials/file-secret-name.js"
import type { SecretObject } from "./sds.js"

export type FileSecret =
  | {
      readonly _tag: "Loaded"
      readonly secret: SecretObject
      /** Changes exactly when the served bytes change. */
      readonly version: string
      /** A line for the log: what was read (expiry of the leaf, number of CA certificates). */
      readonly summary: string
    }
  | { readonly _tag: "Invalid"; readonly reason: string }

const invalid = (reason: string): FileSecret => ({ _tag: "Invalid", reason })

const versionOf = (...texts: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const text of texts) hash.update(text).update("\0")
  return `file-${hash.digest("hex").slice(0, 16)}`
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** The certificate secret `name` from the texts of its certificate (chain, leaf first) and key files. */
export const fileCertSecret = (
  name: string,
  files: Extract<FileSecretName, { kind: "cert" }>,
  certText: string,
  keyText: string,
): FileSecret => {
  const blocks = pemBlocks(certText, "CERTIFICATE")
  if (blocks.length === 0) return invalid(`${files.cert} holds no PEM certificate`)
  const chain: Array<X509Certificate> = []
  for (const [i, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block))
    } catch (e) {
      return invalid(`${files.cert}: certificate ${i + 1} does not parse: ${message(e)}`)
    }
  }
  let key: ReturnType<typeof createPrivateKey>
  try {
    key = createPrivateKey(keyText)
  } catch (e) {
    return invalid(`${files.key} holds no readable private key: ${message(e)}`)
  }
  if (!chain[0]!.checkPrivateKey(key))
    return invalid(`the private key in ${files.key} does not match the certificate in ${files.cert}`)
  return {
    _tag: "Loaded",
    secret: {
      name,
      tls_certificate: {
        certificate_chain: { inline_bytes: Buffer.from(certText) },
        private_key: { inline_bytes: Buffer.from(keyText) },
      },
    },
    version: versionOf(certText, keyText),
    summary: `certificate valid until ${new Date(chain[0]!.validTo).toISOString()}`,
  }
}

/**
 * The validation context `name` from the text of its CA bundle: certificates that do not parse
 * are left out (the reference's tolerance of, say, a negative serial number in one of many
 * roots), and a bundle with none left is refused.
 */
export const fileRootSecret = (
  name: string,
  files: Extract<FileSecretName, { kind: "root" }>,
  caText: string,
): FileSecret => {
  const blocks = pemBlocks(caText, "CERTIFICATE")
  const valid = blocks.filter((block) => {
    try {
      new X509Certificate(block)
      return true
    } catch {
      return false
    }
  })
  if (valid.length === 0)
    return invalid(
      blocks.length === 0
        ? `${files.ca} holds no PEM certificate`
        : `${files.ca}: none of its ${blocks.length} certificates parses`,
    )
  const bundle = valid.join("")
  return {
    _tag: "Loaded",
    secret: { name, validation_context: { trusted_ca: { inline_bytes: Buffer.from(bundle) } } },
    version: versionOf(bundle),
    summary:
      valid.length === blocks.length
        ? `${valid.length} CA certificate(s)`
        : `${valid.length} CA certificate(s), ${blocks.length - valid.length} left out as unparsable`,
  }
}
