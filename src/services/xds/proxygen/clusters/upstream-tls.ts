/**
 * Upstream TLS of an outbound cluster, the reference's rules:
 * - DestinationRule `tls.mode` DISABLE: plaintext; SIMPLE / MUTUAL: TLS origination with the
 *   rule's files (certificate chain, key, CA, CRL) or its `credentialName` (secrets by SDS over
 *   ADS, `kubernetes://<name>` and `<name>-cacert`; ignored by sidecars unless the rule has a
 *   workload selector, as the reference does); ISTIO_MUTUAL: the agent's SDS secrets `default`
 *   and `ROOTCA`, the destination's SPIFFE identities as SANs, ALPN `istio-peer-exchange, istio`
 *   (+ `h2` for HTTP/2 clusters).
 * - No TLS setting, auto mTLS on, a mesh-internal service not reached by passthrough and not
 *   DISABLEd for its namespace: ISTIO_MUTUAL toward endpoints labelled `tlsMode: istio` (a
 *   transport socket match), plaintext toward the others.
 * - SNI: the rule's `sni`; else `outbound_.<port>_.<subset>_.<host>` for ISTIO_MUTUAL; else, with
 *   `ENABLE_AUTO_SNI`, the host (when not a wildcard) and the request's Host (`auto_sni`, with
 *   `auto_san_validation` when the rule names no SANs) for SIMPLE/MUTUAL.
 */
import type { ClientTLSSettings } from "../../../config-model/schemas/destination-rule.js"
import { CONFIG_MAP_SCHEME } from "../../../credentials/credential.js"
import type { Endpoint, Service } from "../../../registry/model.js"
import { isWildcardHost } from "../../../registry/model.js"
import { SERVICE_ENTRY_REGISTRY } from "../../../registry/service-entry.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { workloadMtlsMode } from "../../model/mtls-mode.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { Draft } from "../../protocol/typed-any.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  CommonTlsContext,
  Envoy_Type_Matcher_StringMatcher,
  TlsParameters,
  TransportSocket,
  UpstreamTlsContext,
} from "../../protocol/xds-types.js"
import { MESH_ALPN_TCP, SDS_CREDENTIAL_PREFIX, SDS_DEFAULT, SDS_ROOT, TypedConfig } from "../well-known.js"
import { TLS_MODE_ISTIO, TLS_MODE_STRUCT } from "./endpoints.js"
import { adsSdsSecret, agentSdsSecret, toStruct } from "./proto-values.js"
import { type ClusterDraft, isHttp2Cluster } from "./traffic-policy.js"

type Tls = typeof ClientTLSSettings.Type

const TLS_SOCKET = "envoy.transport_sockets.tls"
export const RAW_BUFFER_SOCKET: TransportSocket = {
  name: "envoy.transport_sockets.raw_buffer",
  typed_config: typed("type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer", {}),
}
const CA_SUFFIX = "-cacert"

/** `outbound_.<port>_.<subset>_.<host>`: the SNI of mesh mTLS (gateways route by it). */
export const meshSni = (host: string, port: number, subset: string): string => `outbound_.${port}_.${subset}_.${host}`

/** The SPIFFE identity of an endpoint's service account (registries give either form). */
export const spiffeOf = (trustDomain: string, namespace: string, serviceAccount: string): string =>
  serviceAccount.startsWith("spiffe://")
    ? serviceAccount
    : `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`

/** By endpoint list; they read the options' trust domain, which a lineage of contexts keeps. */
const identities: LocalSlot<WeakMap<ReadonlyArray<Endpoint>, ReadonlyArray<string>>> = { make: () => new WeakMap() }

/**
 * The identities a client expects of `service`: its endpoints' SPIFFE ids and the service's own
 * (ServiceEntry `subjectAltNames`), sorted. Remembered per endpoint list (a host's list is the
 * same object until its endpoints change).
 */
export const serviceIdentities = (push: PushContext, service: Service): ReadonlyArray<string> => {
  const endpoints = push.endpointsByHost.get(service.hostname) ?? []
  const fromEndpoints = memoOf(push.memo.local(identities), endpoints, () => [
    ...new Set(
      endpoints.flatMap((e) =>
        e.serviceAccount === "" ? [] : [spiffeOf(push.options.trustDomain, e.namespace, e.serviceAccount)],
      ),
    ),
  ])
  const own = service.serviceAccounts ?? []
  return own.length === 0 ? [...fromEndpoints].sort() : [...new Set([...fromEndpoints, ...own])].sort()
}

const identityKeys: LocalSlot<
  WeakMap<Service, { readonly endpoints: object; readonly trustDomain: string; readonly key: string }>
> = { make: () => new WeakMap() }

/** Digest of `serviceIdentities` (cluster keys read it for every proxy: remembered per service and endpoint list). */
export const serviceIdentitiesKey = (push: PushContext, service: Service): string => {
  const endpoints = push.endpointsByHost.get(service.hostname) ?? NO_ENDPOINTS
  const keys = push.memo.local(identityKeys)
  const cached = keys.get(service)
  const trustDomain = push.options.trustDomain
  if (cached !== undefined && cached.endpoints === endpoints && cached.trustDomain === trustDomain) return cached.key
  const key = digest(serviceIdentities(push, service).join(","))
  keys.set(service, { endpoints, trustDomain, key })
  return key
}

const NO_ENDPOINTS: ReadonlyArray<never> = []

const TLS_PARAMS: TlsParameters = { tls_minimum_protocol_version: "TLSv1_2", tls_maximum_protocol_version: "TLSv1_3" }

const exact = (sans: ReadonlyArray<string>): ReadonlyArray<Envoy_Type_Matcher_StringMatcher> =>
  sans.map((value) => ({ exact: value }))

const socket = (context: UpstreamTlsContext): TransportSocket => ({
  name: TLS_SOCKET,
  typed_config: typed(TypedConfig.upstreamTls, context),
})

const istioMutualContext = (sans: ReadonlyArray<string>, sni: string, h2: boolean): UpstreamTlsContext => ({
  common_tls_context: {
    tls_params: TLS_PARAMS,
    tls_certificate_sds_secret_configs: [agentSdsSecret(SDS_DEFAULT)],
    combined_validation_context: {
      default_validation_context: sans.length > 0 ? { match_subject_alt_names: exact(sans) } : {},
      validation_context_sds_secret_config: agentSdsSecret(SDS_ROOT),
    },
    alpn_protocols: h2 ? [...MESH_ALPN_TCP, "h2"] : [...MESH_ALPN_TCP],
  },
  ...(sni !== "" ? { sni } : {}),
})

const credentialSecret = (name: string): string => (name.includes("://") ? name : `${SDS_CREDENTIAL_PREFIX}${name}`)

const originationContext = (tls: Tls, sans: ReadonlyArray<string>, sni: string, h2: boolean): UpstreamTlsContext => {
  const mutual = tls.mode === "MUTUAL"
  const skipVerify = tls.insecureSkipVerify === true
  const common: Draft<CommonTlsContext> = { tls_params: TLS_PARAMS }
  const credential = tls.credentialName ?? ""
  if (credential !== "") {
    if (mutual) common.tls_certificate_sds_secret_configs = [adsSdsSecret(credentialSecret(credential))]
    if (!skipVerify)
      common.combined_validation_context = {
        default_validation_context: sans.length > 0 ? { match_subject_alt_names: exact(sans) } : {},
        validation_context_sds_secret_config: adsSdsSecret(credentialSecret(credential + CA_SUFFIX)),
      }
  } else {
    if (mutual)
      common.tls_certificates = [
        {
          certificate_chain: { filename: tls.clientCertificate ?? "" },
          private_key: { filename: tls.privateKey ?? "" },
        },
      ]
    common.validation_context = skipVerify
      ? {}
      : {
          // Without a CA the system's roots verify the server (the reference's "system" default).
          ...((tls.caCertificates ?? "") !== ""
            ? { trusted_ca: { filename: tls.caCertificates! } }
            : { system_root_certs: {} }),
          ...(sans.length > 0 ? { match_subject_alt_names: exact(sans) } : {}),
          ...((tls.caCrl ?? "") !== "" ? { crl: { filename: tls.caCrl! } } : {}),
        }
  }
  if (h2) common.alpn_protocols = ["h2"]
  return { common_tls_context: common, ...(sni !== "" ? { sni } : {}) }
}

export interface TlsTarget {
  readonly push: PushContext
  readonly sidecar: boolean
  readonly service: Service
  readonly port: number
  readonly subset: string
  /** The rule's TLS setting for the cluster (port-level and subset applied). */
  readonly tls: Tls | undefined
  /** The rule has a workload selector. */
  readonly ruleHasSelector: boolean
  /** The cluster's load balancer is PASSTHROUGH. */
  readonly passthroughLb: boolean
}

/** Whether auto mTLS may apply (what the decision reads besides the peer authentications). */
export const autoMtlsCandidate = (target: Omit<TlsTarget, "push" | "sidecar" | "port" | "subset">, enabled: boolean) =>
  target.tls === undefined &&
  enabled &&
  target.service.location !== "MESH_EXTERNAL" &&
  target.service.resolution !== "NONE" &&
  !target.passthroughLb

/** Sets the cluster's transport socket (or socket matches) and the SNI/SAN protocol options. */
export const applyUpstreamTls = (draft: ClusterDraft, target: TlsTarget): void => {
  const { push, service, tls } = target
  const h2 = isHttp2Cluster(draft)
  const host = service.hostname
  if (tls !== undefined) {
    const mode = tls.mode ?? "DISABLE"
    if (mode === "DISABLE") return
    if (mode === "ISTIO_MUTUAL") {
      const sans = tls.subjectAltNames ?? serviceIdentities(push, service)
      const sni = tls.sni !== undefined && tls.sni !== "" ? tls.sni : meshSni(host, target.port, target.subset)
      draft.fields.transport_socket = socket(istioMutualContext(sans, sni, h2))
      return
    }
    // SIMPLE / MUTUAL.
    const credential = tls.credentialName ?? ""
    // Config maps are readable by anyone: not a privileged credential.
    const privileged = credential !== "" && !credential.startsWith(CONFIG_MAP_SCHEME)
    if (privileged && target.sidecar && !target.ruleHasSelector) return
    const given = tls.subjectAltNames ?? []
    const sans =
      given.length === 0 && service.registry === SERVICE_ENTRY_REGISTRY ? (service.serviceAccounts ?? []) : given
    const ownSni = tls.sni ?? ""
    const autoSni = push.options.proxy.enableAutoSni && ownSni === ""
    const sni = ownSni !== "" ? ownSni : autoSni && !isWildcardHost(host) ? host : ""
    if (autoSni) {
      const upstream = draft.http.upstream ?? {}
      draft.http.upstream = upstream
      upstream.auto_sni = true
      if (given.length === 0 && tls.insecureSkipVerify !== true) upstream.auto_san_validation = true
    }
    draft.fields.transport_socket = socket(originationContext(tls, sans, sni, h2))
    return
  }
  if (!autoMtlsCandidate(target, push.options.enableAutoMtls)) return
  if (draft.type === "ORIGINAL_DST") return
  if (workloadMtlsMode(push, service.namespace, {}, undefined) === "DISABLE") return
  const sni = meshSni(host, target.port, target.subset)
  draft.fields.transport_socket_matches = [
    {
      name: `tlsMode-${TLS_MODE_ISTIO}`,
      match: TLS_MODE_STRUCT,
      transport_socket: socket(istioMutualContext(serviceIdentities(push, service), sni, h2)),
    },
    { name: "tlsMode-disabled", match: toStruct({}), transport_socket: RAW_BUFFER_SOCKET },
  ]
}
