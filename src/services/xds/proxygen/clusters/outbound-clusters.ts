/**
 * CDS for sidecars and gateways: for each service of the proxy's scope and each port (UDP
 * aside), `outbound|port||host` and one `outbound|port|subset|host` per DestinationRule subset,
 * plus the well-known PassthroughCluster (sidecars: gateways have no original-destination
 * listener) and BlackHoleCluster.
 *
 * Discovery type from the service's resolution: STATIC (registry services) → EDS; DNS →
 * STRICT_DNS and DNS_ROUND_ROBIN → LOGICAL_DNS, with the endpoints' addresses in the cluster
 * (no endpoints: no cluster, as the reference; `pilot_dns_cluster_without_endpoints`); NONE →
 * ORIGINAL_DST (gateways: EDS). A load balancer `PASSTHROUGH` makes any cluster ORIGINAL_DST.
 *
 * A spec's key: the proxy kind, the service's fingerprint, the applied DestinationRule's digest,
 * the mesh options read, and what else the bytes read — the endpoints' fingerprint for DNS
 * clusters, the destination identities for mutual TLS, the PeerAuthentications for auto mTLS,
 * the proxy's locality when a DNS cluster's locality LB depends on it — so proxies that see the
 * same service through the same rule share one encoding per cluster.
 */
import type { Service, ServicePort } from "../../../registry/model.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { type Generated, type GeneratorNotice, noNotices } from "../../grpcgen/generator-notices.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { Cluster, Cluster_DnsLookupFamily, Metadata } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { proxyScope } from "../scope.js"
import { BLACKHOLE_CLUSTER, outboundClusterName, PASSTHROUGH_CLUSTER, TypedConfig } from "../well-known.js"
import { clusterPolicy, destinationRuleFor, type MergedDestinationRule, subsetLabels } from "./destination-rule.js"
import {
  groupByLocality,
  lbEndpoint,
  MESH_METADATA_KEY,
  mtlsChecker,
  peerAuthenticationKey,
  selectEndpoints,
} from "./endpoints.js"
import {
  applyLocalityLb,
  failoverPriorityKey,
  localityLbActive,
  localityLbEndpoints,
  localityLbOf,
} from "./locality.js"
import { durationOfMs, MAX_UINT32, toStruct } from "./proto-values.js"
import {
  applyTrafficPolicy,
  applyUpstreamProtocol,
  assemble,
  type DiscoveryType,
  HTTP_PROTOCOL_OPTIONS_KEY,
  newDraft,
} from "./traffic-policy.js"
import { applyUpstreamTls, autoMtlsCandidate, serviceIdentitiesKey } from "./upstream-tls.js"

/** Mesh config `dnsRefreshRate` (the reference's default). */
const DNS_REFRESH_RATE_MS = 60_000

/** The cluster type a service's resolution gives (before a PASSTHROUGH load balancer). */
export const discoveryTypeOf = (service: Service, sidecar: boolean): DiscoveryType => {
  switch (service.resolution) {
    case "DNS":
      return "STRICT_DNS"
    case "DNS_ROUND_ROBIN":
      return "LOGICAL_DNS"
    case "NONE":
    case "DYNAMIC_DNS":
      // Gateways have no original destination to send to: they use the endpoints.
      return sidecar ? "ORIGINAL_DST" : "EDS"
    default:
      return "EDS"
  }
}

const isDns = (type: DiscoveryType): boolean => type === "STRICT_DNS" || type === "LOGICAL_DNS"

const isIpv6 = (ip: string): boolean => ip.includes(":")

/** The DNS lookup family for the proxy's addresses: IPv6 only when every address is IPv6. */
const dnsFamily = (proxy: ProxyView): Cluster_DnsLookupFamily =>
  proxy.ips.length > 0 && proxy.ips.every(isIpv6) ? "V6_ONLY" : "V4_ONLY"

const shortName = (push: PushContext, service: Service): string => {
  const suffix = `.${service.namespace}.svc.${push.options.domainSuffix}`
  return service.hostname.endsWith(suffix) ? service.hostname.slice(0, -suffix.length) : service.hostname
}

/** By options object (a lineage of contexts keeps one). */
const optionKeys: LocalSlot<WeakMap<PushContext["options"], string>> = { make: () => new WeakMap() }

/** Digest of the options the cluster bytes read, once per options object. */
const optionsKey = (push: PushContext): string =>
  memoOf(push.memo.local(optionKeys), push.options, () => {
    const o = push.options
    return digest(
      JSON.stringify([
        o.proxy.connectTimeoutMs,
        o.enableAutoMtls,
        o.proxy.enableAutoSni,
        o.sendUnhealthyEndpoints,
        o.trustDomain,
        o.domainSuffix,
        o.drainingLabel,
      ]),
    )
  })

interface ClusterTarget {
  readonly push: PushContext
  readonly proxy: ProxyView
  readonly service: Service
  readonly port: ServicePort
  readonly subset: string
  readonly rule: MergedDestinationRule | undefined
}

const clusterMetadata = (target: ClusterTarget, tlsMode: string | undefined): Metadata => {
  const { push, service, rule, subset } = target
  const mesh: Record<string, unknown> = {
    services: [{ host: service.hostname, name: shortName(push, service), namespace: service.namespace }],
  }
  if (subset !== "") mesh.subset = subset
  if (service.location === "MESH_EXTERNAL") mesh.external = true
  if (rule !== undefined) {
    mesh.config = `/apis/networking.mesh.io/v1/namespaces/${rule.namespace}/destination-rule/${rule.name}`
    // User-supplied TLS: the ALPN filter must not replace the ALPN the rule's TLS offers.
    if (tlsMode !== "ISTIO_MUTUAL") mesh.alpn_override = "false"
  }
  return { filter_metadata: { [MESH_METADATA_KEY]: toStruct(mesh) } }
}

/** Builds one outbound cluster (a DNS cluster's endpoints were checked to exist). */
const buildCluster = (target: ClusterTarget, name: string, type: DiscoveryType): Cluster => {
  const { push, proxy, service, port, subset, rule } = target
  const sidecar = proxy.kind === "sidecar"
  const policy = clusterPolicy(rule, port.port, subset)
  const locality = localityLbOf(policy)
  const draft = newDraft(name, type, push.options.proxy.connectTimeoutMs)
  draft.fields.alt_stat_name = `${name};`
  if (isDns(type)) {
    const labels = subsetLabels(rule, subset) ?? {}
    const mtls = mtlsChecker(push, policy?.tls?.mode)
    const groups = groupByLocality(selectEndpoints(push, service, port, labels), (e) => lbEndpoint(e, mtls(e)))
    const applied = applyLocalityLb(
      groups,
      // The reference applies failover to DNS clusters' load assignments (not failoverPriority).
      locality === undefined ? undefined : { ...locality, setting: { ...locality.setting, failoverPriority: [] } },
      proxy.locality,
      proxy.labels,
    )
    // A `distribute` rule sending nowhere this cluster has endpoints keeps them all.
    let endpoints = localityLbEndpoints(applied)
    if (endpoints.length === 0) endpoints = localityLbEndpoints(groups)
    if (type === "LOGICAL_DNS") {
      // The proxy resolves one name for a LOGICAL_DNS cluster: the first endpoint.
      const first = endpoints[0]!
      endpoints = [{ ...first, lb_endpoints: (first.lb_endpoints ?? []).slice(0, 1) }]
    }
    draft.fields.dns_lookup_family = dnsFamily(proxy)
    draft.fields.dns_refresh_rate = durationOfMs(DNS_REFRESH_RATE_MS)
    draft.fields.respect_dns_ttl = true
    draft.fields.load_assignment = { cluster_name: name, endpoints }
  }
  applyUpstreamProtocol(draft, port.protocol, sidecar)
  draft.fields.metadata = clusterMetadata(target, policy?.tls?.mode)
  const extras = rule?.trafficPolicy?.retryBudget !== undefined ? { retryBudget: rule.trafficPolicy.retryBudget } : {}
  applyTrafficPolicy(draft, policy, extras, locality, push.options.sendUnhealthyEndpoints)
  applyUpstreamTls(draft, {
    push,
    sidecar,
    service,
    port: port.port,
    subset,
    tls: policy?.tls,
    ruleHasSelector: rule?.hasSelector ?? false,
    passthroughLb: policy?.loadBalancer?.simple === "PASSTHROUGH",
  })
  if (draft.type === "EDS")
    draft.fields.eds_cluster_config = {
      eds_config: { ads: {}, initial_fetch_timeout: { seconds: "0", nanos: 0 }, resource_api_version: "V3" },
      service_name: name,
    }
  return assemble(draft)
}

/** What a cluster's bytes read besides the service, the rule and the options (see the header). */
const clusterKey = (target: ClusterTarget, type: DiscoveryType): string => {
  const { push, proxy, service, port, subset, rule } = target
  const policy = clusterPolicy(rule, port.port, subset)
  const tls = policy?.tls
  const parts = [proxy.kind, push.fingerprint("service", service.hostname), rule?.key ?? "-", optionsKey(push)]
  const mutual =
    tls?.mode === "ISTIO_MUTUAL" ||
    autoMtlsCandidate(
      { service, tls, ruleHasSelector: false, passthroughLb: policy?.loadBalancer?.simple === "PASSTHROUGH" },
      push.options.enableAutoMtls,
    )
  if (mutual) parts.push(serviceIdentitiesKey(push, service))
  if (tls === undefined) parts.push(peerAuthenticationKey(push))
  if (isDns(type)) {
    const locality = localityLbOf(policy)
    parts.push(
      push.fingerprint("endpoints", service.hostname),
      dnsFamily(proxy),
      // The DNS load assignment's mTLS matches read the PeerAuthentications.
      peerAuthenticationKey(push),
      localityLbActive(locality) ? `${proxy.locality}|${failoverPriorityKey(locality, proxy.labels)}` : "-",
    )
  }
  return parts.join(",")
}

/** The reference's default thresholds: no circuit breaking unless a rule asks for it. */
const defaultCircuitBreakers = {
  thresholds: [
    {
      max_connections: { value: MAX_UINT32 },
      max_pending_requests: { value: MAX_UINT32 },
      max_requests: { value: MAX_UINT32 },
      max_retries: { value: MAX_UINT32 },
      track_remaining: true,
    },
  ],
}

const passthroughCluster = (connectTimeoutMs: number): Cluster => ({
  name: PASSTHROUGH_CLUSTER,
  type: "ORIGINAL_DST",
  connect_timeout: durationOfMs(connectTimeoutMs),
  lb_policy: "CLUSTER_PROVIDED",
  alt_stat_name: `${PASSTHROUGH_CLUSTER};`,
  circuit_breakers: defaultCircuitBreakers,
  typed_extension_protocol_options: {
    [HTTP_PROTOCOL_OPTIONS_KEY]: typed(TypedConfig.httpProtocolOptions, {
      common_http_protocol_options: { idle_timeout: { seconds: "300", nanos: 0 } },
      use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} },
    }),
  },
})

const blackHoleCluster = (connectTimeoutMs: number): Cluster => ({
  name: BLACKHOLE_CLUSTER,
  type: "STATIC",
  connect_timeout: durationOfMs(connectTimeoutMs),
  lb_policy: "ROUND_ROBIN",
  alt_stat_name: `${BLACKHOLE_CLUSTER};`,
})

/** The well-known clusters a proxy of this kind gets. */
const wellKnownClusters = (push: PushContext, proxy: ProxyView): ReadonlyArray<ResourceSpec<Cluster>> => {
  const ms = push.options.proxy.connectTimeoutMs
  const key = `well-known,${ms}`
  const blackHole: ResourceSpec<Cluster> = { name: BLACKHOLE_CLUSTER, key, build: () => blackHoleCluster(ms) }
  return proxy.kind === "sidecar"
    ? [{ name: PASSTHROUGH_CLUSTER, key, build: () => passthroughCluster(ms) }, blackHole]
    : [blackHole]
}

const notice = (message: string): GeneratorNotice => ({ level: "warning", scope: "model", message })

const memo: LocalSlot<Map<string, Generated<Cluster>>, PushContext> = { make: () => new Map() }

/**
 * The outbound clusters of `proxy`: its scope's services (only `hosts` when given — gateways
 * with `PILOT_FILTER_GATEWAY_CLUSTER_CONFIG`), then the well-known clusters.
 */
export const generateOutboundClusters = (
  push: PushContext,
  proxy: ProxyView,
  hosts?: ReadonlySet<string>,
): Generated<Cluster> => {
  const memoKey = hosts === undefined ? `${proxy.scopeKey}|${dnsFamily(proxy)}` : undefined
  const byKey = push.local(memo)
  if (memoKey !== undefined) {
    const cached = byKey.get(memoKey)
    if (cached !== undefined) return cached
  }
  const sidecar = proxy.kind === "sidecar"
  const resources: Array<ResourceSpec<Cluster>> = []
  const warnings: Array<GeneratorNotice> = []
  const seen = new Set<string>()
  for (const service of proxyScope(push, proxy).services) {
    if (hosts !== undefined && !hosts.has(service.hostname)) continue
    const rule = destinationRuleFor(push, proxy, service.hostname, service.namespace)
    if (service.resolution === "DYNAMIC_DNS")
      warnings.push(
        notice(
          `ServiceEntry ${service.source ?? service.hostname}: resolution DYNAMIC_DNS is served as ${sidecar ? "NONE (original destination)" : "EDS"}`,
        ),
      )
    for (const port of service.ports) {
      if (port.protocol === "UDP") continue
      const subsets = ["", ...(rule?.subsets.map((s) => s.name) ?? [])]
      for (const subset of subsets) {
        const name = outboundClusterName(service.hostname, port.port, subset)
        if (seen.has(name)) continue
        seen.add(name)
        const target: ClusterTarget = { push, proxy, service, port, subset, rule }
        const policy = clusterPolicy(rule, port.port, subset)
        const base = discoveryTypeOf(service, sidecar)
        const type: DiscoveryType = policy?.loadBalancer?.simple === "PASSTHROUGH" ? "ORIGINAL_DST" : base
        // A DNS cluster without endpoints is left out (decided now: its absence is part of the set).
        if (isDns(type) && !hasDnsEndpoints(target)) continue
        resources.push({ name, key: clusterKey(target, type), build: () => buildCluster(target, name, type) })
      }
    }
  }
  resources.push(...wellKnownClusters(push, proxy))
  const generated: Generated<Cluster> = { resources, warnings: warnings.length > 0 ? warnings : noNotices }
  if (memoKey !== undefined) byKey.set(memoKey, generated)
  return generated
}

/** Whether a DNS cluster has an endpoint to resolve (its subset's labels matched). */
const hasDnsEndpoints = (target: ClusterTarget): boolean => {
  const labels = subsetLabels(target.rule, target.subset)
  return labels !== undefined && selectEndpoints(target.push, target.service, target.port, labels).length > 0
}
