/**
 * Gateway and DestinationRule credentials (`credentialName`): TLS material the control plane
 * serves to proxies over SDS, read from orchestrator Secrets as the reference reads them:
 * - `kubernetes.io/tls` style keys `tls.crt`, `tls.key`, and optionally `ca.crt`, `ca.crl`;
 * - generic (Opaque) keys `cert`, `key`, `cacert`, `crl`.
 * A Secret with neither a certificate and key nor a CA holds no credential.
 * And CA bundles from ConfigMaps (`configmap://<ns>/<name>`, BackendTLSPolicy
 * `caCertificateRefs`): `cacert` (with `crl`) or else `ca.crt` (with `ca.crl`), plain text.
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
  /** Where it was read: a ConfigMap (a CA bundle only), else a Secret. */
  readonly source?: "ConfigMap"
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

/** A ConfigMap as the orchestrator returns it: `data` values plain text. */
export interface ConfigMapObject {
  readonly metadata?: { readonly namespace?: string; readonly name?: string }
  readonly data?: Readonly<Record<string, string>>
}

const plain = (data: Readonly<Record<string, string>>, key: string): string | undefined => {
  const value = data[key]
  return typeof value === "string" && value.trim() !== "" ? value : undefined
}

/**
 * The CA bundle a ConfigMap holds, or undefined when it holds none. As the reference, the generic
 * key `cacert` wins over `ca.crt`, and the revocation list is read from the same family's key.
 */
export const credentialOfConfigMap = (configMap: ConfigMapObject): Credential | undefined => {
  const namespace = configMap.metadata?.namespace
  const name = configMap.metadata?.name
  if (namespace === undefined || name === undefined) return undefined
  const data = configMap.data ?? {}
  const generic = plain(data, "cacert") !== undefined
  const caCertificates = plain(data, generic ? "cacert" : "ca.crt")
  if (caCertificates === undefined) return undefined
  const crl = plain(data, generic ? "crl" : "ca.crl")
  return { namespace, name, caCertificates, ...(crl !== undefined ? { crl } : {}), source: "ConfigMap" }
}

/** Scheme of the SDS name of a ConfigMap's CA bundle (`configmap://<ns>/<name>`). */
export const CONFIG_MAP_SCHEME = "configmap://"

/** Suffix of the SDS name of a credential's CA bundle. */
export const CA_SUFFIX = "-cacert"

/** What an SDS resource name asks for. */
export interface CredentialRequest {
  /**
   * `kubernetes` (the proxy's own namespace), `kubernetes-gateway` (a namespace named) or
   * `configmap` (a namespace named; always a CA bundle, with or without `-cacert`).
   */
  readonly scheme: "kubernetes" | "kubernetes-gateway" | "configmap"
  /** The namespace named (`kubernetes-gateway://ns/name`); undefined: the proxy's. */
  readonly namespace?: string
  readonly name: string
  /** The CA bundle (`<name>-cacert`) rather than the certificate and key. */
  readonly caOnly: boolean
}

/**
 * `kubernetes://<name>[-cacert]`, `kubernetes://<ns>/<name>[-cacert]`,
 * `kubernetes-gateway://<ns>/<name>[-cacert]` or `configmap://<ns>/<name>[-cacert]`; undefined
 * for any other name.
 */
export const parseCredentialName = (resourceName: string): CredentialRequest | undefined => {
  const match = /^(kubernetes|kubernetes-gateway|configmap):\/\/(.+)$/.exec(resourceName)
  if (match === null) return undefined
  const scheme = match[1] as CredentialRequest["scheme"]
  let rest = match[2]!
  const caOnly = rest.endsWith(CA_SUFFIX)
  if (caOnly) rest = rest.slice(0, -CA_SUFFIX.length)
  const parts = rest.split("/")
  if (parts.length > 2 || parts.some((p) => p === "")) return undefined
  if (scheme !== "kubernetes" && parts.length !== 2) return undefined
  // A ConfigMap holds nothing but a CA bundle, so its bare name asks for that too.
  if (scheme === "configmap") return { scheme, namespace: parts[0]!, name: parts[1]!, caOnly: true }
  return parts.length === 2
    ? { scheme, namespace: parts[0]!, name: parts[1]!, caOnly }
    : { scheme, name: parts[0]!, caOnly }
}

/** The credentials of the cluster, as they change (every Secret and ConfigMap holding one). */
export interface CredentialSourceShape {
  readonly changes: Stream.Stream<ReadonlyArray<Credential>>
}

export class CredentialSource extends Context.Tag("mesh/CredentialSource")<CredentialSource, CredentialSourceShape>() {}
