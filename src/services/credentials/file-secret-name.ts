/**
 * SDS names of TLS material mounted as files in the proxy's container, spelled as the reference
 * spells them: `file-cert:<certificate>~<private key>` (a certificate and its key) and
 * `file-root:<ca bundle>` (a validation context). The control plane writes them into listeners
 * and clusters (Gateway and Sidecar ingress `serverCertificate`/`privateKey`/`caCertificates`),
 * and the agent's SDS server reads the files they name, so one module owns the spelling.
 */

export const FILE_CERT_PREFIX = "file-cert:"
export const FILE_ROOT_PREFIX = "file-root:"
/** Between the certificate and the key of a `file-cert:` name (so no path may hold it). */
export const FILE_SECRET_SEPARATOR = "~"

/** `file-cert:<cert>~<key>`. */
export const fileCertName = (cert: string, key: string): string =>
  `${FILE_CERT_PREFIX}${cert}${FILE_SECRET_SEPARATOR}${key}`

/** `file-root:<ca>`. */
export const fileRootName = (ca: string): string => `${FILE_ROOT_PREFIX}${ca}`

/** What a file secret name asks for. */
export type FileSecretName =
  | { readonly kind: "cert"; readonly cert: string; readonly key: string }
  | { readonly kind: "root"; readonly ca: string }

/** Whether `name` is spelled as a file secret (well formed or not). */
export const isFileSecretName = (name: string): boolean =>
  name.startsWith(FILE_CERT_PREFIX) || name.startsWith(FILE_ROOT_PREFIX)

/**
 * The files a name asks for, or undefined when it is not a well-formed file secret name: a
 * `file-cert:` needs exactly two non-empty paths, a `file-root:` exactly one (the reference
 * splits on `~` the same way; it also lets empty paths through, which then name no file).
 */
export const parseFileSecretName = (name: string): FileSecretName | undefined => {
  if (name.startsWith(FILE_CERT_PREFIX)) {
    const parts = name.slice(FILE_CERT_PREFIX.length).split(FILE_SECRET_SEPARATOR)
    if (parts.length !== 2 || parts[0] === "" || parts[1] === "") return undefined
    return { kind: "cert", cert: parts[0]!, key: parts[1]! }
  }
  if (name.startsWith(FILE_ROOT_PREFIX)) {
    const ca = name.slice(FILE_ROOT_PREFIX.length)
    if (ca === "" || ca.includes(FILE_SECRET_SEPARATOR)) return undefined
    return { kind: "root", ca }
  }
  return undefined
}

/** The files a parsed name reads, in the order they are read. */
export const filesOf = (name: FileSecretName): ReadonlyArray<string> =>
  name.kind === "cert" ? [name.cert, name.key] : [name.ca]
