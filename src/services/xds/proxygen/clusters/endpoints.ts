/**
 * EDS for sidecars and gateways: a ClusterLoadAssignment per requested `outbound|port|subset|host`
 * cluster — the host's endpoints serving the port, narrowed by the subset's labels, grouped by
 * locality with their weights and health (DRAINING by label; UNHEALTHY only with
 * `PILOT_SEND_UNHEALTHY_ENDPOINTS`), each carrying the metadata the proxy reads: the transport
 * socket match `tlsMode: istio` for mesh workloads (auto mTLS picks mTLS for them) and the
 * reference's compressed workload identity for telemetry. Priorities (locality failover) apply
 * when the DestinationRule asks for them; only then does the assignment depend on the proxy's
 * locality. Every other proxy shares one encoding per cluster.
 */
import type { Endpoint, Service, ServicePort } from "../../../registry/model.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { parseClusterName } from "../../grpcgen/grpc-gen.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { workloadMtlsMode } from "../../model/mtls-mode.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { ClusterLoadAssignment, Core_Address, LbEndpoint } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { clusterPolicy, destinationRuleFor, type MergedDestinationRule, subsetLabels } from "./destination-rule.js"
import {
  applyLocalityLb,
  failoverPriorityKey,
  type GroupEndpoint,
  type LocalityGroup,
  localityLbActive,
  localityLbEndpoints,
  localityLbOf,
} from "./locality.js"
import { toStruct } from "./proto-values.js"

/** The labels marking a workload that runs the mesh's proxy (injected), both API groups' spelling. */
export const TLS_MODE_LABELS = ["security.mesh.io/tlsMode", "security.istio.io/tlsMode"] as const
export const TLS_MODE_ISTIO = "istio"
/** `{tlsMode: istio}`: endpoint metadata and the cluster's socket match alike. */
export const TLS_MODE_STRUCT = toStruct({ tlsMode: TLS_MODE_ISTIO })
/** The metadata namespace the cluster's transport socket matches read. */
export const TRANSPORT_SOCKET_MATCH_KEY = "envoy.transport_socket_match"
/** The reference's metadata namespace (its proxies and filters read this name). */
export const MESH_METADATA_KEY = "istio"

const CANONICAL_NAME = [
  "service.mesh.io/canonical-name",
  "service.istio.io/canonical-name",
  "app.kubernetes.io/name",
  "app",
]
const CANONICAL_REVISION = [
  "service.mesh.io/canonical-revision",
  "service.istio.io/canonical-revision",
  "app.kubernetes.io/version",
  "version",
]

const firstLabel = (labels: Readonly<Record<string, string>>, names: ReadonlyArray<string>): string | undefined => {
  for (const name of names) {
    const value = labels[name]
    if (value !== undefined && value !== "") return value
  }
  return undefined
}

export const servicePortOf = (service: Service, port: number): ServicePort | undefined =>
  service.ports.find((p) => p.port === port)

export interface ClusterEndpoint {
  readonly endpoint: Endpoint
  readonly port: number
  readonly health: "HEALTHY" | "UNHEALTHY" | "DRAINING"
}

/** The endpoints of `service` for `servicePort` whose labels match `labels`, after health rules. */
export const selectEndpoints = (
  push: PushContext,
  service: Service,
  servicePort: ServicePort,
  labels: Readonly<Record<string, string>>,
): ReadonlyArray<ClusterEndpoint> => {
  const drainingLabel = push.options.drainingLabel
  const out: Array<ClusterEndpoint> = []
  for (const endpoint of push.endpointsByHost.get(service.hostname) ?? []) {
    if (endpoint.servicePortName !== servicePort.name && endpoint.servicePortName !== String(servicePort.port)) continue
    if (!matchesLabels(labels, endpoint.labels)) continue
    const draining = drainingLabel !== "" && endpoint.labels[drainingLabel] !== undefined
    const health = draining ? "DRAINING" : endpoint.healthStatus
    if (health === "UNHEALTHY" && !push.options.sendUnhealthyEndpoints) continue
    out.push({ endpoint, port: endpoint.port || servicePort.targetPort || servicePort.port, health })
  }
  return out
}

/** Whether the endpoint runs the mesh's proxy (mutual TLS possible). */
export const isMeshWorkload = (endpoint: Endpoint): boolean =>
  TLS_MODE_LABELS.some((label) => endpoint.labels[label] === TLS_MODE_ISTIO)

/** The proxy address of an endpoint: a socket address, or a pipe for `unix://` endpoints. */
export const endpointAddress = (address: string, port: number): Core_Address =>
  address.startsWith("unix://")
    ? { pipe: { path: address.slice("unix://".length) } }
    : { socket_address: { address, port_value: port } }

/**
 * An `LbEndpoint`. `mtls`: whether the endpoint gets the `tlsMode: istio` match (a mesh workload
 * whose mutual TLS neither a DestinationRule TLS setting nor its PeerAuthentication disables).
 */
export const lbEndpoint = (entry: ClusterEndpoint, mtls: boolean): LbEndpoint => {
  const { endpoint } = entry
  const canonical = firstLabel(endpoint.labels, CANONICAL_NAME) ?? ""
  const revision = firstLabel(endpoint.labels, CANONICAL_REVISION) ?? ""
  // workload;namespace;canonical-name;canonical-revision;cluster (the workload name is not in
  // the registry's model: left empty, as the reference does for endpoints without one).
  const workload = ["", endpoint.namespace, canonical, revision === "latest" ? "" : revision, endpoint.clusterId].join(
    ";",
  )
  return {
    endpoint: { address: endpointAddress(endpoint.address, entry.port) },
    health_status: entry.health,
    metadata: {
      filter_metadata: {
        ...(mtls ? { [TRANSPORT_SOCKET_MATCH_KEY]: TLS_MODE_STRUCT } : {}),
        [MESH_METADATA_KEY]: toStruct({ workload }),
      },
    },
    load_balancing_weight: { value: endpoint.weight > 0 ? endpoint.weight : 1 },
  }
}

/** Groups endpoint protos by locality, sorted by locality; weights are the sums of the endpoints'. */
export const groupByLocality = (
  entries: ReadonlyArray<ClusterEndpoint>,
  lbOf: (entry: ClusterEndpoint) => LbEndpoint,
): ReadonlyArray<LocalityGroup> => {
  const byLocality = new Map<string, Array<GroupEndpoint>>()
  for (const entry of entries) {
    const list = byLocality.get(entry.endpoint.locality) ?? []
    list.push({
      lb: lbOf(entry),
      weight: entry.endpoint.weight > 0 ? entry.endpoint.weight : 1,
      labels: entry.endpoint.labels,
    })
    byLocality.set(entry.endpoint.locality, list)
  }
  return [...byLocality.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([locality, endpoints]) => ({
      locality,
      endpoints,
      weight: endpoints.reduce((sum, e) => sum + e.weight, 0),
      priority: 0,
    }))
}

/**
 * The mesh-workload check of a cluster's endpoints: a DestinationRule TLS mode other than
 * ISTIO_MUTUAL turns it off for every endpoint, a workload PeerAuthentication DISABLE for one.
 */
export const mtlsChecker = (push: PushContext, tlsMode: string | undefined): ((entry: ClusterEndpoint) => boolean) => {
  if (tlsMode !== undefined && tlsMode !== "ISTIO_MUTUAL") return () => false
  return (entry) =>
    isMeshWorkload(entry.endpoint) &&
    workloadMtlsMode(push, entry.endpoint.namespace, entry.endpoint.labels, entry.port) !== "DISABLE"
}

/** By the PeerAuthentication list (shared by the contexts derived from the one that built it). */
const paDigests: LocalSlot<WeakMap<PushContext["peerAuthentications"], string>> = { make: () => new WeakMap() }

/** Digest of the push's PeerAuthentications (what the mTLS decisions read), once per list. */
export const peerAuthenticationKey = (push: PushContext): string => {
  const views = push.peerAuthentications
  return memoOf(push.memo.local(paDigests), views, () => (views.length === 0 ? "-" : digest(JSON.stringify(views))))
}

/** The locality groups of a cluster, with the rule's locality LB applied for the proxy. */
export const clusterLocalityGroups = (
  push: PushContext,
  proxy: Pick<ProxyView, "locality" | "labels">,
  service: Service,
  servicePort: ServicePort,
  subset: string,
  rule: MergedDestinationRule | undefined,
): ReadonlyArray<LocalityGroup> | undefined => {
  const labels = subsetLabels(rule, subset)
  if (labels === undefined) return undefined
  const policy = clusterPolicy(rule, servicePort.port, subset)
  const mtls = mtlsChecker(push, policy?.tls?.mode)
  const entries = selectEndpoints(push, service, servicePort, labels)
  const groups = groupByLocality(entries, (entry) => lbEndpoint(entry, mtls(entry)))
  return applyLocalityLb(groups, localityLbOf(policy), proxy.locality, proxy.labels)
}

/** The ClusterLoadAssignment specs of the requested cluster names the proxy can resolve. */
export const generateProxyEndpoints = (
  push: PushContext,
  proxy: ProxyView,
  names: ReadonlyArray<string>,
): ReadonlyArray<ResourceSpec<ClusterLoadAssignment>> =>
  names.flatMap((name): ReadonlyArray<ResourceSpec<ClusterLoadAssignment>> => {
    const parsed = parseClusterName(name)
    if (parsed === undefined) return []
    const service = push.serviceByHost.get(parsed.host)
    const servicePort = service !== undefined ? servicePortOf(service, parsed.port) : undefined
    if (service === undefined || servicePort === undefined) return []
    const rule = destinationRuleFor(push, proxy, service.hostname, service.namespace)
    const labels = subsetLabels(rule, parsed.subset)
    if (labels === undefined) return []
    const policy = clusterPolicy(rule, servicePort.port, parsed.subset)
    const locality = localityLbOf(policy)
    const opts = push.options
    const key = [
      "eds",
      push.fingerprint("service", service.hostname),
      push.fingerprint("endpoints", service.hostname),
      rule?.key ?? "-",
      opts.drainingLabel,
      opts.sendUnhealthyEndpoints ? "u" : "-",
      peerAuthenticationKey(push),
      // Priorities and weights relative to the proxy: only then its locality (and labels) count.
      localityLbActive(locality) ? `${proxy.locality}|${failoverPriorityKey(locality, proxy.labels)}` : "-",
    ].join(",")
    return [
      {
        name,
        key,
        build: () => ({
          cluster_name: name,
          endpoints: localityLbEndpoints(
            clusterLocalityGroups(push, proxy, service, servicePort, parsed.subset, rule) ?? [],
          ),
        }),
      },
    ]
  })
