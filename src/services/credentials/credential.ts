/**
 * Gateway and DestinationRule credentials (`credentialName`): TLS material the control plane
 * serves to proxies over SDS, read from orchestrator Secrets as the reference reads them:
 * - `kubernetes.io/tls` style keys `tls.crt`, `tls.key`, and optionally `ca.crt`, `ca.crl`;
 * - generic (Opaque) keys `cert`, `key`, `cacert`, `crl`.
 * A Secret with neither a certificate and key nor a CA holds no credential.
 */
import type { Stream } from "effect"
import { Context } from "effect"

export interface Credential {
  readonly namespace: string
  readonly name: string
  /** PEM certificate chain and private key (both, or neither). */
  readonly certificateChain?: string
  readonly privateKey?: string
  /** PEM CA bundle for validating peers, and its revocation list. */
  readonly caCertificates?: string
  readonly crl?: string
}

/** A Secret as the orchestrator returns it: `data` values base64-encoded. */
export interface SecretObject {
  readonly metadata?: { readonly namespace?: string; readonly name?: string }
  readonly type?: string
  readonly data?: Readonly<Record<string, string>>
}

const decoded = (data: Readonly<Record<string, string>>, key: string): string | undefined => {
  const value = data[key]
  if (typeof value !== "string" || value === "") return undefined
  const text = Buffer.from(value, "base64").toString("utf8")
  return text.trim() === "" ? undefined : text
}

/** The credential a Secret holds, or undefined when it holds none (wrong keys, key without certificate). */
export const credentialOfSecret = (secret: SecretObject): Credential | undefined => {
  const namespace = secret.metadata?.namespace
  const name = secret.metadata?.name
  if (namespace === undefined || name === undefined) return undefined
  const data = secret.data ?? {}
  const tls = decoded(data, "tls.crt") !== undefined || decoded(data, "tls.key") !== undefined
  const certificateChain = decoded(data, tls ? "tls.crt" : "cert")
  const privateKey = decoded(data, tls ? "tls.key" : "key")
  const caCertificates = decoded(data, tls ? "ca.crt" : "cacert")
  const crl = decoded(data, tls ? "ca.crl" : "crl")
  const pair = certificateChain !== undefined && privateKey !== undefined
  if (!pair && caCertificates === undefined) return undefined
  return {
    namespace,
    name,
    ...(pair ? { certificateChain, privateKey } : {}),
    ...(caCertificates !== undefined ? { caCertificates } : {}),
    ...(crl !== undefined ? { crl } : {}),
  }
}

/** Suffix of the SDS name of a credential's CA bundle. */
export const CA_SUFFIX = "-cacert"

/** What an SDS resource name asks for. */
export interface CredentialRequest {
  /** `kubernetes` (the proxy's own namespace) or `kubernetes-gateway` (a namespace named). */
  readonly scheme: "kubernetes" | "kubernetes-gateway"
  /** The namespace named (`kubernetes-gateway://ns/name`); undefined: the proxy's. */
  readonly namespace?: string
  readonly name: string
  /** The CA bundle (`<name>-cacert`) rather than the certificate and key. */
  readonly caOnly: boolean
}

/**
 * `kubernetes://<name>[-cacert]`, `kubernetes://<ns>/<name>[-cacert]` or
 * `kubernetes-gateway://<ns>/<name>[-cacert]`; undefined for any other name.
 */
export const parseCredentialName = (resourceName: string): CredentialRequest | undefined => {
  const match = /^(kubernetes|kubernetes-gateway):\/\/(.+)$/.exec(resourceName)
  if (match === null) return undefined
  const scheme = match[1] as CredentialRequest["scheme"]
  let rest = match[2]!
  const caOnly = rest.endsWith(CA_SUFFIX)
  if (caOnly) rest = rest.slice(0, -CA_SUFFIX.length)
  const parts = rest.split("/")
  if (parts.length > 2 || parts.some((p) => p === "")) return undefined
  if (scheme === "kubernetes-gateway" && parts.length !== 2) return undefined
  return parts.length === 2
    ? { scheme, namespace: parts[0]!, name: parts[1]!, caOnly }
    : { scheme, name: parts[0]!, caOnly }
}

/** The credentials of the cluster, as they change (every Secret holding one). */
export interface CredentialSourceShape {
  readonly changes: Stream.Stream<ReadonlyArray<Credential>>
}

export class CredentialSource extends Context.Tag("mesh/CredentialSource")<CredentialSource, CredentialSourceShape>() {}
