/**
 * Generators for proxyless gRPC clients (node metadata `GENERATOR: grpc`), from a PushContext.
 *
 * - LDS: one `api_listener` per `host:port` (the full set for a wildcard request): an
 *   HttpConnectionManager that fetches its routes over ADS (RDS, same name) with the router
 *   filter last and the fault filter before it when a route injects faults.
 * - RDS: the host's VirtualService `http` routes (or one default route): path/header/query
 *   matches, weighted destinations over subsets and ports, timeouts, retries, faults.
 * - CDS: `outbound|port|subset|host` EDS clusters with the DestinationRule's traffic policy.
 * - EDS: endpoints per locality with weights and health.
 *
 * A generator returns resource *specs*: a name, a dependency key (the fingerprints of every
 * input the resource reads) and a builder. The encoder builds and encodes a spec only when no
 * resource with the same type, name and key was encoded before.
 */
import type { Endpoint, Service, ServicePort } from "../../registry/model.js"
import type { ResourceSpec } from "../cache/resource-spec.js"
import { type LocalSlot, memoOf } from "../model/local-slot.js"
import { workloadMtlsMode } from "../model/mtls-mode.js"
import {
  destinationServiceOf,
  digest,
  INBOUND_LISTENER_PREFIXES,
  isInboundListenerName,
  lookupService,
  type PushContext,
  resolveHost,
  splitHostPort,
} from "../model/push-context.js"
import type { DestinationRuleView, Fault, HttpRoute, StringMatch, TrafficPolicyView } from "../model/views.js"
import { TypeUrl } from "../protocol/type-urls.js"
import { type Draft, typed } from "../protocol/typed-any.js"
import type {
  Cluster,
  ClusterLoadAssignment,
  Core_Locality,
  Duration,
  FractionalPercent,
  HeaderMatcher,
  HealthStatus,
  LbEndpoint,
  Listener,
  ProtoAny,
  QueryParameterMatcher,
  Route,
  RouteAction,
  RouteConfiguration,
  RouteMatch,
  TransportSocket,
} from "../protocol/xds-types.js"
import { type Generated, type GeneratorNotice, noNotices } from "./generator-notices.js"
import { ignoredFieldsNotice } from "./grpc-ignored.js"
import { generateInboundListener, type ProxyWorkload, unknownWorkload } from "./grpc-inbound.js"

export interface Subscription {
  readonly wildcard: boolean
  readonly names: ReadonlyArray<string>
  /** The requesting workload, for what depends on it (inbound listeners); unknown when absent. */
  readonly workload?: ProxyWorkload
}

const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
const UPSTREAM_TLS_TYPE = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext"
const ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
const FAULT_TYPE = "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault"
export const FAULT_FILTER = "envoy.filters.http.fault"
const ROUTER_FILTER = "envoy.filters.http.router"

/** gRPC status codes by name (VirtualService fault `grpcStatus`). */
export const GRPC_STATUS: Readonly<Record<string, number>> = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
}

/** Retry conditions a gRPC client understands. */
const GRPC_RETRY_ON = new Set(["cancelled", "deadline-exceeded", "internal", "resource-exhausted", "unavailable"])

// ---------------------------------------------------------------------------------------------
// Names

export const clusterName = (host: string, port: number, subset = ""): string => `outbound|${port}|${subset}|${host}`

export const parseClusterName = (
  name: string,
): { readonly port: number; readonly subset: string; readonly host: string } | undefined => {
  const parts = name.split("|")
  if (parts.length !== 4 || parts[0] !== "outbound") return undefined
  const port = Number(parts[1])
  if (!Number.isInteger(port) || port <= 0) return undefined
  return { port, subset: parts[2]!, host: parts[3]! }
}

const servicePort = (service: Service, port: number): ServicePort | undefined =>
  service.ports.find((p) => p.port === port)

// ---------------------------------------------------------------------------------------------
// Helpers

const duration = (nanos: bigint): Duration => ({
  seconds: (nanos / 1_000_000_000n).toString(),
  nanos: Number(nanos % 1_000_000_000n),
})

const millionths = (percent: number | undefined): FractionalPercent => ({
  numerator: Math.round(Math.max(0, Math.min(100, percent ?? 100)) * 10_000),
  denominator: "MILLION",
})

const hasFault = (route: HttpRoute): boolean => route.fault !== undefined

const faultConfig = (fault: Fault): ProtoAny =>
  typed(FAULT_TYPE, {
    ...(fault.delay !== undefined
      ? {
          delay: {
            fixed_delay: duration(fault.delay.fixedDelayNanos),
            percentage: millionths(fault.delay.percentage?.value),
          },
        }
      : {}),
    ...(fault.abort !== undefined
      ? {
          abort: {
            ...(fault.abort.grpcStatus !== undefined
              ? {
                  grpc_status:
                    GRPC_STATUS[fault.abort.grpcStatus.toUpperCase()] ?? (Number(fault.abort.grpcStatus) || 2),
                }
              : { http_status: fault.abort.httpStatus ?? 500 }),
            percentage: millionths(fault.abort.percentage?.value),
          },
        }
      : {}),
  })

const headerMatcher = (name: string, match: StringMatch): HeaderMatcher => ({
  name,
  ...(match.exact !== undefined
    ? { exact_match: match.exact }
    : match.prefix !== undefined
      ? { prefix_match: match.prefix }
      : { safe_regex_match: { regex: match.regex ?? ".*" } }),
})

const queryMatcher = (name: string, match: StringMatch): QueryParameterMatcher => ({
  name,
  string_match:
    match.exact !== undefined
      ? { exact: match.exact }
      : match.prefix !== undefined
        ? { prefix: match.prefix }
        : { safe_regex: { regex: match.regex ?? ".*" } },
})

// ---------------------------------------------------------------------------------------------
// LDS

const listenerNames = (push: PushContext): ReadonlyArray<string> =>
  push.services.flatMap((s) => s.ports.map((p) => `${s.hostname}:${p.port}`))

const resolveListener = (
  push: PushContext,
  name: string,
): { readonly service: Service; readonly port: number } | undefined => {
  const hp = splitHostPort(name)
  if (hp === undefined) return undefined
  const service = lookupService(push, hp.host)
  if (service === undefined || servicePort(service, hp.port) === undefined) return undefined
  return { service, port: hp.port }
}

export const generateListeners = (push: PushContext, sub: Subscription): Generated<Listener> => {
  let warnings = noNotices
  // A wildcard request (a client) never includes inbound listeners: servers ask for theirs by name.
  const resources = (
    sub.wildcard ? [...listenerNames(push), ...sub.names.filter(isInboundListenerName)] : sub.names
  ).flatMap((name): ReadonlyArray<ResourceSpec<Listener>> => {
    if (isInboundListenerName(name)) {
      const inbound = generateInboundListener(push, name, sub.workload ?? unknownWorkload)
      if (inbound.warnings.length > 0) warnings = [...warnings, ...inbound.warnings]
      return inbound.resources
    }
    const target = resolveListener(push, name)
    if (target === undefined) return []
    const host = target.service.hostname
    const vs = push.virtualServiceByHost.get(host)
    const withFault = vs?.http.some(hasFault) ?? false
    return [
      {
        name,
        key: `${withFault ? "f" : "-"}`,
        build: () => ({
          name,
          api_listener: {
            api_listener: typed(HCM_TYPE, {
              stat_prefix: name,
              rds: { config_source: { ads: {}, resource_api_version: "V3" }, route_config_name: name },
              http_filters: [
                ...(withFault ? [{ name: FAULT_FILTER, typed_config: typed(FAULT_TYPE, {}) }] : []),
                { name: ROUTER_FILTER, typed_config: typed(ROUTER_TYPE, {}) },
              ],
            }),
          },
        }),
      },
    ]
  })
  return { resources, warnings }
}

// ---------------------------------------------------------------------------------------------
// RDS

interface WeightedTarget {
  readonly cluster: string
  readonly weight: number
}

const routeTargets = (push: PushContext, route: HttpRoute, namespace: string, listenerPort: number, selfHost: string) =>
  route.route.map((rd): WeightedTarget & { readonly host: string } => {
    // The reference's short-name rule and an exact lookup, as for sidecars and routers: a
    // destination `a` never reaches `a.example.com`; an unknown host gets a cluster nobody defines.
    const fqdn = resolveHost(rd.destination.host, namespace, push.options.domainSuffix)
    const service = destinationServiceOf(push, rd.destination.host, namespace)
    const host = service?.hostname ?? fqdn
    const port =
      rd.destination.port ??
      (service !== undefined && service.ports.length === 1
        ? service.ports[0]!.port
        : host === selfHost || service === undefined
          ? listenerPort
          : (service.ports.find((p) => p.port === listenerPort)?.port ?? service.ports[0]?.port ?? listenerPort))
    return { cluster: clusterName(host, port, rd.destination.subset ?? ""), weight: rd.weight ?? 0, host }
  })

const routeAction = (targets: ReadonlyArray<WeightedTarget>, route: HttpRoute): RouteAction => {
  const weighted = targets.length > 1
  const base: Draft<RouteAction> = weighted
    ? {
        weighted_clusters: {
          clusters: targets.filter((t) => t.weight > 0).map((t) => ({ name: t.cluster, weight: { value: t.weight } })),
        },
      }
    : { cluster: targets[0]!.cluster }
  if (route.timeoutNanos !== undefined) {
    base.timeout = duration(route.timeoutNanos)
    base.max_stream_duration = {
      max_stream_duration: duration(route.timeoutNanos),
      grpc_timeout_header_max: duration(route.timeoutNanos),
    }
  }
  if (route.retries !== undefined && route.retries.attempts > 0) {
    const on = (route.retries.retryOn ?? "unavailable")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => GRPC_RETRY_ON.has(s))
    base.retry_policy = {
      retry_on: (on.length > 0 ? on : ["unavailable"]).join(","),
      num_retries: { value: route.retries.attempts },
      ...(route.retries.perTryTimeoutNanos !== undefined
        ? { per_try_timeout: duration(route.retries.perTryTimeoutNanos) }
        : {}),
    }
  }
  return base
}

const routeMatches = (route: HttpRoute): ReadonlyArray<RouteMatch> =>
  (route.match.length === 0 ? [undefined] : route.match).map((m) => {
    const uri = m?.uri
    const path =
      uri?.exact !== undefined
        ? { path: uri.exact }
        : uri?.regex !== undefined
          ? { safe_regex: { regex: uri.regex } }
          : { prefix: uri?.prefix ?? "/" }
    const headers = Object.entries(m?.headers ?? {}).map(([name, sm]) => headerMatcher(name, sm))
    const query = Object.entries(m?.queryParams ?? {}).map(([name, sm]) => queryMatcher(name, sm))
    return {
      ...path,
      ...(headers.length > 0 ? { headers } : {}),
      ...(query.length > 0 ? { query_parameters: query } : {}),
    }
  })

const domainsFor = (name: string, service: Service, port: number): ReadonlyArray<string> => [
  ...new Set([name, `${service.hostname}:${port}`, service.hostname]),
]

export const generateRoutes = (push: PushContext, sub: Subscription): ReadonlyArray<ResourceSpec<RouteConfiguration>> =>
  (sub.wildcard ? listenerNames(push) : sub.names).flatMap((name): ReadonlyArray<ResourceSpec<RouteConfiguration>> => {
    const target = resolveListener(push, name)
    if (target === undefined) return []
    const { service, port } = target
    const host = service.hostname
    const vs = push.virtualServiceByHost.get(host)
    // Destinations referenced by the routes are part of what the bytes depend on.
    const destHosts =
      vs === undefined
        ? []
        : [
            ...new Set(
              vs.http.flatMap((r) =>
                r.route.map((d) => resolveHost(d.destination.host, vs.namespace, push.options.domainSuffix)),
              ),
            ),
          ].sort()
    const key = [
      push.fingerprint("service", host),
      push.fingerprint("vs", host),
      ...destHosts.map((h) => push.fingerprint("service", lookupService(push, h)?.hostname ?? h)),
    ].join(",")
    return [
      {
        name,
        key,
        build: () => {
          const routes: Array<Route> = []
          const http = vs?.http.filter((r) => r.route.length > 0) ?? []
          http.forEach((route, index) => {
            const targets = routeTargets(push, route, vs!.namespace, port, host)
            if (targets.every((t) => t.weight === 0) && targets.length > 1) return
            const action = routeAction(targets, route)
            for (const match of routeMatches(route)) {
              routes.push({
                name: route.name ?? `${vs!.namespace}/${vs!.name}/${index}`,
                match,
                route: action,
                ...(route.fault !== undefined
                  ? { typed_per_filter_config: { [FAULT_FILTER]: faultConfig(route.fault) } }
                  : {}),
              })
            }
          })
          if (routes.length === 0) {
            routes.push({ name: "default", match: { prefix: "/" }, route: { cluster: clusterName(host, port) } })
          }
          return { name, virtual_hosts: [{ name, domains: domainsFor(name, service, port), routes }] }
        },
      },
    ]
  })

// ---------------------------------------------------------------------------------------------
// CDS

/** The clusters of a service: one per port, and one per port and DestinationRule subset. */
const serviceClusterNames = (push: PushContext, service: Service): ReadonlyArray<string> => {
  const dr = push.destinationRuleByHost.get(service.hostname)
  return service.ports.flatMap((p) => [
    clusterName(service.hostname, p.port),
    ...(dr?.subsets ?? []).map((subset) => clusterName(service.hostname, p.port, subset.name)),
  ])
}

const clusterNames = (push: PushContext): ReadonlyArray<string> =>
  push.services.flatMap((s) => serviceClusterNames(push, s))

/** The clusters of one host's service (none when no service has that host). */
export const hostClusterNames = (push: PushContext, host: string): ReadonlyArray<string> => {
  const service = push.serviceByHost.get(host)
  return service === undefined ? [] : serviceClusterNames(push, service)
}

const policyFor = (dr: DestinationRuleView | undefined, subset: string): TrafficPolicyView | undefined => {
  const base = dr?.trafficPolicy
  const own = dr?.subsets.find((s) => s.name === subset)?.trafficPolicy
  if (own === undefined) return base
  return { ...base, ...own }
}

const clusterPolicy = (policy: TrafficPolicyView | undefined): Cluster => {
  const out: Draft<Cluster> = { lb_policy: "ROUND_ROBIN" }
  const ch = policy?.loadBalancer?.consistentHash
  if (ch !== undefined) {
    out.lb_policy = "RING_HASH"
    out.ring_hash_lb_config = {
      hash_function: "XX_HASH",
      ...(ch.minimumRingSize !== undefined ? { minimum_ring_size: { value: String(ch.minimumRingSize) } } : {}),
    }
  }
  // @grpc/grpc-js-xds has no least-request balancer (lb_policy ROUND_ROBIN and RING_HASH only):
  // LEAST_REQUEST and the others are served as ROUND_ROBIN, and said so (grpc-ignored.ts).
  const od = policy?.outlierDetection
  if (od !== undefined) {
    out.outlier_detection = {
      ...(od.consecutive5xxErrors !== undefined ? { consecutive_5xx: { value: od.consecutive5xxErrors } } : {}),
      ...(od.consecutiveGatewayErrors !== undefined
        ? { consecutive_gateway_failure: { value: od.consecutiveGatewayErrors } }
        : {}),
      ...(od.intervalNanos !== undefined ? { interval: duration(od.intervalNanos) } : {}),
      ...(od.baseEjectionTimeNanos !== undefined ? { base_ejection_time: duration(od.baseEjectionTimeNanos) } : {}),
      ...(od.maxEjectionPercent !== undefined ? { max_ejection_percent: { value: od.maxEjectionPercent } } : {}),
    }
  }
  if (policy?.maxRequests !== undefined) {
    out.circuit_breakers = { thresholds: [{ max_requests: { value: policy.maxRequests } }] }
  }
  return out
}

/**
 * The SPIFFE identity of a workload's service account. The registries (orchestrator pods,
 * ServiceEntry endpoints) already hold the whole identity; a bare name is made into one.
 */
const spiffeIdentity = (trustDomain: string, namespace: string, serviceAccount: string): string =>
  serviceAccount.startsWith("spiffe://")
    ? serviceAccount
    : `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`

interface ClusterTls {
  readonly sans: ReadonlyArray<string>
}

/**
 * Whether a cluster carries mutual TLS, and the identities it expects: DestinationRule
 * `MESH_MUTUAL`/`ISTIO_MUTUAL`; or, with no DestinationRule TLS setting and auto mTLS on, when
 * every endpoint of the cluster (or, without endpoints, the service's namespace) is STRICT.
 */
const clusterTls = (
  push: PushContext,
  service: Service,
  sp: ServicePort,
  subset: string,
  policy: TrafficPolicyView | undefined,
): ClusterTls | undefined => {
  const portEndpoints = (push.endpointsByHost.get(service.hostname) ?? []).filter(
    (e) => e.servicePortName === sp.name || e.servicePortName === String(sp.port),
  )
  const mode = policy?.tlsMode
  let mutual = mode === "ISTIO_MUTUAL" || mode === "MESH_MUTUAL"
  if (mode === undefined && push.options.enableAutoMtls) {
    const labels = subset === "" ? undefined : push.destinationRuleByHost.get(service.hostname)?.subsets
    const subsetLabels = labels?.find((s) => s.name === subset)?.labels ?? {}
    const endpoints = portEndpoints.filter((e) => subsetMatches(e, subsetLabels))
    mutual =
      endpoints.length === 0
        ? workloadMtlsMode(push, service.namespace, {}, undefined) === "STRICT"
        : endpoints.every(
            (e) => workloadMtlsMode(push, e.namespace, e.labels, e.port || sp.targetPort || sp.port) === "STRICT",
          )
  }
  if (!mutual) return undefined
  const sans = [
    ...new Set(
      portEndpoints.flatMap((e) =>
        e.serviceAccount === "" ? [] : [spiffeIdentity(push.options.trustDomain, e.namespace, e.serviceAccount)],
      ),
    ),
  ].sort()
  return { sans }
}

// Mutual TLS as proxyless clients expect it: certificate-provider instances (`default`) for
// the workload identity and the root, from the client's bootstrap; the destination's SPIFFE
// identities as the subject alternative names to accept.
const transportSocket = (tls: ClusterTls): TransportSocket => ({
  name: "envoy.transport_sockets.tls",
  typed_config: typed(UPSTREAM_TLS_TYPE, {
    common_tls_context: {
      tls_certificate_provider_instance: { instance_name: "default", certificate_name: "default" },
      combined_validation_context: {
        default_validation_context: {
          ca_certificate_provider_instance: { instance_name: "default", certificate_name: "ROOTCA" },
          ...(tls.sans.length > 0 ? { match_subject_alt_names: tls.sans.map((exact) => ({ exact })) } : {}),
        },
      },
    },
  }),
})

/**
 * The notice of a DestinationRule view's ignored fields, built once per view (in the input memo of
 * the push, which keeps the views): a push reads it for every cluster of the rule's host.
 */
const ignoredNotices: LocalSlot<WeakMap<DestinationRuleView, GeneratorNotice | null>> = { make: () => new WeakMap() }
const ignoredFieldsOf = (push: PushContext, dr: DestinationRuleView): GeneratorNotice | null =>
  memoOf(push.memo.local(ignoredNotices), dr, () => {
    const message = ignoredFieldsNotice(dr.namespace, dr.name, dr.ignored)
    return message === undefined ? null : { level: "info", scope: "grpcgen", message }
  })

export const generateClusters = (push: PushContext, sub: Subscription): Generated<Cluster> => {
  let warnings = noNotices
  const resources = (sub.wildcard ? clusterNames(push) : sub.names).flatMap(
    (name): ReadonlyArray<ResourceSpec<Cluster>> => {
      const parsed = parseClusterName(name)
      if (parsed === undefined) return []
      const service = push.serviceByHost.get(parsed.host)
      const sp = service !== undefined ? servicePort(service, parsed.port) : undefined
      if (service === undefined || sp === undefined) return []
      const dr = push.destinationRuleByHost.get(parsed.host)
      if (parsed.subset !== "" && dr?.subsets.find((s) => s.name === parsed.subset) === undefined) return []
      if (dr !== undefined && dr.ignored.length > 0) {
        // Once per rule here (its clusters share it); once per text is the notice log's.
        const notice = ignoredFieldsOf(push, dr)
        if (notice !== null && !warnings.includes(notice)) warnings = [...warnings, notice]
      }
      const policy = policyFor(dr, parsed.subset)
      // Decided up front (cheap): the key holds the outcome, not every endpoint and policy it read.
      const tls = clusterTls(push, service, sp, parsed.subset, policy)
      return [
        {
          name,
          key: [
            push.fingerprint("service", parsed.host),
            push.fingerprint("dr", parsed.host),
            tls === undefined ? "-" : digest(tls.sans.join(",")),
          ].join(","),
          build: () => ({
            name,
            type: "EDS",
            eds_cluster_config: { service_name: name, eds_config: { ads: {}, resource_api_version: "V3" } },
            connect_timeout: { seconds: "10" },
            ...clusterPolicy(policy),
            ...(tls !== undefined ? { transport_socket: transportSocket(tls) } : {}),
          }),
        },
      ]
    },
  )
  return { resources, warnings }
}

// ---------------------------------------------------------------------------------------------
// EDS

const localityOf = (locality: string): Core_Locality => {
  const [region = "", zone = "", subZone = ""] = locality.split("/")
  return { region, zone, sub_zone: subZone }
}

const subsetMatches = (endpoint: Endpoint, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(labels).every(([k, v]) => endpoint.labels[k] === v)

export interface EndpointStats {
  readonly notReady: number
}

/** Endpoints of a cluster after subset, port, health and draining rules, with their status. */
export const clusterEndpoints = (
  push: PushContext,
  name: string,
): ReadonlyArray<{ readonly endpoint: Endpoint; readonly port: number; readonly health: HealthStatus }> | undefined => {
  const parsed = parseClusterName(name)
  if (parsed === undefined) return undefined
  const service = push.serviceByHost.get(parsed.host)
  const sp = service !== undefined ? servicePort(service, parsed.port) : undefined
  if (service === undefined || sp === undefined) return undefined
  const dr = push.destinationRuleByHost.get(parsed.host)
  const subset = parsed.subset === "" ? undefined : dr?.subsets.find((s) => s.name === parsed.subset)
  if (parsed.subset !== "" && subset === undefined) return undefined
  const drainingLabel = push.options.drainingLabel
  return (push.endpointsByHost.get(parsed.host) ?? []).flatMap((endpoint) => {
    if (endpoint.servicePortName !== sp.name && endpoint.servicePortName !== String(sp.port)) return []
    if (subset !== undefined && !subsetMatches(endpoint, subset.labels)) return []
    const draining = drainingLabel !== "" && endpoint.labels[drainingLabel] !== undefined
    const health = draining ? "DRAINING" : endpoint.healthStatus
    if (health === "UNHEALTHY" && !push.options.sendUnhealthyEndpoints) return []
    return [{ endpoint, port: endpoint.port || sp.targetPort || sp.port, health }]
  })
}

export const generateEndpoints = (
  push: PushContext,
  sub: Subscription,
): ReadonlyArray<ResourceSpec<ClusterLoadAssignment>> =>
  (sub.wildcard ? clusterNames(push) : sub.names).flatMap(
    (name): ReadonlyArray<ResourceSpec<ClusterLoadAssignment>> => {
      const parsed = parseClusterName(name)
      const service = parsed !== undefined ? push.serviceByHost.get(parsed.host) : undefined
      if (parsed === undefined || service === undefined || servicePort(service, parsed.port) === undefined) return []
      if (
        parsed.subset !== "" &&
        push.destinationRuleByHost.get(parsed.host)?.subsets.find((s) => s.name === parsed.subset) === undefined
      )
        return []
      const opts = push.options
      return [
        {
          name,
          key: [
            push.fingerprint("service", parsed.host),
            push.fingerprint("dr", parsed.host),
            push.fingerprint("endpoints", parsed.host),
            opts.drainingLabel,
            opts.sendUnhealthyEndpoints ? "u" : "-",
          ].join(","),
          build: () => {
            const byLocality = new Map<string, Array<LbEndpoint>>()
            const weights = new Map<string, number>()
            for (const { endpoint, port, health } of clusterEndpoints(push, name) ?? []) {
              const weight = endpoint.weight > 0 ? endpoint.weight : 1
              const list = byLocality.get(endpoint.locality) ?? []
              list.push({
                endpoint: { address: { socket_address: { address: endpoint.address, port_value: port } } },
                health_status: health,
                load_balancing_weight: { value: weight },
              })
              byLocality.set(endpoint.locality, list)
              weights.set(endpoint.locality, (weights.get(endpoint.locality) ?? 0) + weight)
            }
            return {
              cluster_name: name,
              endpoints: [...byLocality.entries()]
                .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
                .map(([locality, lbEndpoints]) => ({
                  locality: localityOf(locality),
                  lb_endpoints: lbEndpoints,
                  // Localities without a weight are dropped by gRPC clients.
                  load_balancing_weight: { value: weights.get(locality) ?? 1 },
                  priority: 0,
                })),
            }
          },
        },
      ]
    },
  )

// ---------------------------------------------------------------------------------------------
// Names that have no resource

const listed = (values: ReadonlyArray<string | number>): string =>
  values.length === 0 ? "none" : values.map(String).join(", ")

/** Why a `host:port` name (listener or route) has no resource in `push`. */
const missingHostPort = (push: PushContext, name: string): string => {
  const hp = splitHostPort(name)
  if (hp === undefined) return "not of the form host:port"
  const service = lookupService(push, hp.host)
  if (service === undefined) return `no service has host ${hp.host}`
  return `service ${service.hostname} has no port ${hp.port} (ports: ${listed(service.ports.map((p) => p.port))})`
}

/** Why a cluster name (CDS or EDS) has no resource in `push`. */
const missingCluster = (push: PushContext, name: string): string => {
  const parsed = parseClusterName(name)
  if (parsed === undefined) return "not a cluster name (outbound|<port>|<subset>|<host>)"
  const service = push.serviceByHost.get(parsed.host)
  if (service === undefined) return `no service has host ${parsed.host}`
  if (servicePort(service, parsed.port) === undefined)
    return `service ${service.hostname} has no port ${parsed.port} (ports: ${listed(service.ports.map((p) => p.port))})`
  const dr = push.destinationRuleByHost.get(parsed.host)
  return dr === undefined
    ? `no DestinationRule for host ${parsed.host} defines subset "${parsed.subset}"`
    : `DestinationRule ${dr.namespace}/${dr.name} for host ${parsed.host} defines no subset "${parsed.subset}" (subsets: ${listed(dr.subsets.map((s) => s.name))})`
}

const MISSING_NOUN: Readonly<Record<string, string>> = {
  [TypeUrl.Listener]: "listener",
  [TypeUrl.Route]: "route",
  [TypeUrl.Cluster]: "cluster",
  [TypeUrl.Endpoint]: "endpoints of cluster",
}

/**
 * Why a requested name got no resource: a client dialling a `host:port` the mesh does not know
 * is only told DEADLINE_EXCEEDED by its library, so the server says it (`/debug/syncz`, `ads`
 * debug log): "requested listener foo:80 not found: no service has host foo".
 */
export const missingResource = (push: PushContext, typeUrl: string, name: string): string => {
  const noun = MISSING_NOUN[typeUrl] ?? "resource"
  const why =
    typeUrl === TypeUrl.Cluster || typeUrl === TypeUrl.Endpoint
      ? missingCluster(push, name)
      : isInboundListenerName(name)
        ? `malformed inbound listener name (expected ${INBOUND_LISTENER_PREFIXES[0]}<ip>:<port>)`
        : typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Route
          ? missingHostPort(push, name)
          : `unknown type ${typeUrl}`
  return `requested ${noun} ${name} not found: ${why}`
}

/** What `missingResource` says for each name of a non-wildcard watch `resources` has no entry for. */
export const missingResources = (
  push: PushContext,
  typeUrl: string,
  names: ReadonlyArray<string>,
  resources: ReadonlyArray<{ readonly name: string }>,
): ReadonlyArray<string> => {
  // Generators give at most one resource per name: as many as names means none is missing.
  if (resources.length >= names.length) return []
  const present = new Set(resources.map((r) => r.name))
  return names.filter((name) => !present.has(name)).map((name) => missingResource(push, typeUrl, name))
}

/** The specs of a type for a subscription, with what generating them had to say about the config. */
export const generate = (push: PushContext, typeUrl: string, sub: Subscription): Generated => {
  switch (typeUrl) {
    case TypeUrl.Cluster:
      return generateClusters(push, sub)
    case TypeUrl.Endpoint:
      return { resources: generateEndpoints(push, sub), warnings: noNotices }
    case TypeUrl.Listener:
      return generateListeners(push, sub)
    case TypeUrl.Route:
      return { resources: generateRoutes(push, sub), warnings: noNotices }
    default:
      return { resources: [], warnings: noNotices }
  }
}

/**
 * What identifies a resource set, to tell whether a response would change anything: its
 * versions in order. A version is the digest of the encoded resource, name included, so this is
 * exact without hashing again (a push's first hash costs tens of microseconds on a cold CPU).
 * A long text is hashed after all: every watch keeps the digest it was sent, and a watch of
 * thousands of resources would otherwise keep kilobytes.
 */
export const setDigest = (resources: ReadonlyArray<{ readonly version: string }>): string => {
  const versions = resources.map((r) => r.version).join(",")
  return versions.length <= MAX_PLAIN_SET_DIGEST ? versions : digest(versions)
}

/** About 30 versions: the sets of a proxy watching a few services stay unhashed. */
const MAX_PLAIN_SET_DIGEST = 512
