/**
 * SDS over ADS: the gateway and DestinationRule credentials a proxy asks for by name
 * (`kubernetes://<name>`, `<name>-cacert`, `kubernetes-gateway://<ns>/<name>`), from the
 * cluster's Secrets (services/credentials). As the reference, a proxy gets only what it may
 * read: Secrets of its own namespace, or of another namespace when a Gateway of its own names
 * that exact credential (a Gateway-API listener whose ReferenceGrant the conversion checked).
 * The CA bundle of `<name>-cacert` comes from a Secret of that name when there is one, else from
 * the `ca.crt`/`cacert` key of `<name>`. `configmap://<ns>/<name>[-cacert]` (the CA bundle of a
 * BackendTLSPolicy, in the cluster its DestinationRule sends to) is the CA bundle of that
 * ConfigMap, readable by every proxy as the reference allows: a CA bundle is public, and the
 * client reads the server's ConfigMap, so it is in another namespace as a rule. A name that
 * cannot be served gets no resource (the proxy keeps warming the listener) and a notice.
 */
import { createHash } from "node:crypto"
import {
  CA_SUFFIX,
  CONFIG_MAP_SCHEME,
  type Credential,
  type CredentialRequest,
  parseCredentialName,
} from "../../../credentials/credential.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated, GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import type { DataSource, Secret } from "../../protocol/xds-types.js"
import { credentialResourceName, gatewaysForProxy } from "../gateway/index.js"
import type { ProxyView } from "../proxy-view.js"

/** Secrets by `namespace/name`, ConfigMaps by `configmap:namespace/name` (the same name may be both). */
const credentialKey = (namespace: string, name: string, source?: Credential["source"]) =>
  source === "ConfigMap" ? `configmap:${namespace}/${name}` : `${namespace}/${name}`

/** The credentials of the push by `namespace/name` (built once per push). */
const byName: LocalSlot<WeakMap<ReadonlyArray<Credential>, ReadonlyMap<string, Credential>>> = {
  make: () => new WeakMap(),
}
const credentialsOf = (push: PushContext): ReadonlyMap<string, Credential> => {
  const list = push.proxyConfig.credentials ?? []
  return memoOf(
    push.memo.local(byName),
    list,
    () => new Map(list.map((c) => [credentialKey(c.namespace, c.name, c.source), c])),
  )
}

/** Credential names the proxy's Gateways name (any scheme), as SDS resource names. */
const namedByGateways = (push: PushContext, proxy: ProxyView): ReadonlySet<string> => {
  if (proxy.kind !== "router") return new Set()
  const names = new Set<string>()
  for (const port of gatewaysForProxy(push, proxy).ports)
    for (const server of port.servers) {
      const tls = server.tls
      for (const name of [tls?.credentialName, ...(tls?.credentialNames ?? [])])
        if (name !== undefined && name !== "") names.add(credentialResourceName(name))
    }
  return names
}

const inline = (text: string): DataSource => ({ inline_bytes: Buffer.from(text, "utf8") })

const digest = (credential: Credential, caOnly: boolean): string =>
  createHash("sha1")
    .update(
      JSON.stringify(
        caOnly ? [credential.caCertificates, credential.crl] : [credential.certificateChain, credential.privateKey],
      ),
    )
    .digest("base64url")
    .slice(0, 16)

/** The Secret resource `resourceName` stands for, from `credential`, or why it cannot be. */
const secretOf = (resourceName: string, credential: Credential, caOnly: boolean): ResourceSpec<Secret> | string => {
  if (caOnly) {
    if (credential.caCertificates === undefined)
      return `credential ${resourceName}: ${credential.source ?? "Secret"} ${credential.namespace}/${credential.name} has no CA certificate (ca.crt or cacert)`
    const ca = credential.caCertificates
    const crl = credential.crl
    return {
      name: resourceName,
      key: `credential|${resourceName}|${credential.namespace}|${digest(credential, true)}`,
      build: () => ({
        name: resourceName,
        validation_context: { trusted_ca: inline(ca), ...(crl !== undefined ? { crl: inline(crl) } : {}) },
      }),
    }
  }
  if (credential.certificateChain === undefined || credential.privateKey === undefined)
    return `credential ${resourceName}: Secret ${credential.namespace}/${credential.name} has no certificate and key (tls.crt and tls.key, or cert and key)`
  const chain = credential.certificateChain
  const key = credential.privateKey
  return {
    name: resourceName,
    key: `credential|${resourceName}|${credential.namespace}|${digest(credential, false)}`,
    build: () => ({
      name: resourceName,
      tls_certificate: { certificate_chain: inline(chain), private_key: inline(key) },
    }),
  }
}

/**
 * The Secret of a request: the namespace it names or the proxy's; for a CA bundle, `<name>-cacert`
 * first. The ConfigMap of a `configmap://` request, by its name without `-cacert` only (as the reference).
 */
const lookup = (
  credentials: ReadonlyMap<string, Credential>,
  request: CredentialRequest,
  namespace: string,
): Credential | undefined =>
  request.scheme === "configmap"
    ? credentials.get(credentialKey(namespace, request.name, "ConfigMap"))
    : ((request.caOnly ? credentials.get(credentialKey(namespace, `${request.name}${CA_SUFFIX}`)) : undefined) ??
      credentials.get(credentialKey(namespace, request.name)))

/** The Secret resources of the names a proxy asks for (SDS is never a wildcard). */
export const generateCredentials = (
  push: PushContext,
  proxy: ProxyView,
  names: ReadonlyArray<string>,
): Generated<Secret> => {
  const resources: Array<ResourceSpec<Secret>> = []
  const warnings: Array<GeneratorNotice> = []
  const notice = (message: string) => warnings.push({ scope: "gateway", level: "warning", message })
  if (names.length === 0) return { resources, warnings }
  const credentials = credentialsOf(push)
  const granted = namedByGateways(push, proxy)
  for (const resourceName of names) {
    const request = parseCredentialName(resourceName)
    if (request === undefined) {
      // A ConfigMap name without its namespace (or with more than one) names nothing readable.
      if (resourceName.startsWith(CONFIG_MAP_SCHEME))
        notice(`credential ${resourceName} refused to ${proxy.id}: a ConfigMap is named configmap://<namespace>/<name>`)
      continue // the agent's own secrets (default, ROOTCA, file-cert:...) are not ours
    }
    const namespace = request.namespace ?? proxy.namespace
    const baseName = request.caOnly ? resourceName.slice(0, -CA_SUFFIX.length) : resourceName
    if (request.scheme !== "configmap" && namespace !== proxy.namespace && !granted.has(baseName)) {
      notice(
        `credential ${resourceName} refused to ${proxy.id}: Secrets of namespace ${namespace} are not readable from namespace ${proxy.namespace}`,
      )
      continue
    }
    const credential = lookup(credentials, request, namespace)
    if (credential === undefined) {
      notice(
        request.scheme === "configmap"
          ? `credential ${resourceName} for ${proxy.id}: no ConfigMap ${namespace}/${request.name} with a CA certificate (cacert or ca.crt)`
          : `credential ${resourceName} for ${proxy.id}: no Secret ${namespace}/${request.name} with TLS data`,
      )
      continue
    }
    const secret = secretOf(resourceName, credential, request.caOnly)
    if (typeof secret === "string") notice(secret)
    else resources.push(secret)
  }
  return { resources, warnings }
}
