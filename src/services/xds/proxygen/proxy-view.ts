/**
 * What the proxy generators know of the proxy asking (a sidecar or a gateway): read from its node
 * id (`type~ip~pod.namespace~domain`) and the metadata the agent sends (`NAMESPACE`, `LABELS`,
 * `INSTANCE_IPS`, `INTERCEPTION_MODE`, ...). Proxyless gRPC clients (`GENERATOR: grpc`) never
 * get here: the gRPC generators serve them.
 */
import { createHash } from "node:crypto"

export type ProxyKind = "sidecar" | "router"

export type InterceptionMode = "REDIRECT" | "TPROXY" | "NONE"

export interface ProxyView {
  readonly kind: ProxyKind
  /** The whole node id. */
  readonly id: string
  /** The workload's addresses: `INSTANCE_IPS`, else the node id's ip. */
  readonly ips: ReadonlyArray<string>
  /** The pod (or VM) name: the node id's third part before the first dot, or metadata `NAME`. */
  readonly name: string
  readonly namespace: string
  /** Workload labels (metadata `LABELS`). */
  readonly labels: Readonly<Record<string, string>>
  readonly serviceAccount: string
  readonly clusterId: string
  readonly network: string
  /** `region/zone/subzone` of the node's locality (or metadata REGION/ZONE/SUBZONE); empty when unknown. */
  readonly locality: string
  /** `MESH_VERSION` (or the upstream `ISTIO_VERSION`), empty when not sent. */
  readonly version: string
  /** How inbound traffic reaches the proxy (metadata `INTERCEPTION_MODE`, default REDIRECT). */
  readonly interceptionMode: InterceptionMode
  /** The agent answers DNS for the workload (metadata `DNS_CAPTURE`). */
  readonly dnsCapture: boolean
  /** Its outbound HTTP listeners accept HTTP/1.0 (metadata `HTTP10` = `1`). */
  readonly http10: boolean
  readonly metadata: Readonly<Record<string, unknown>>
  /**
   * The digest of everything above a generated resource set may depend on except the name and
   * addresses: replicas of one workload share it, so their sets are built once per push.
   */
  readonly scopeKey: string
}

const truthy = (value: unknown): boolean => value === true || value === "true" || value === "1" || value === "TRUE"

const stringOf = (value: unknown): string => (typeof value === "string" ? value : "")

const labelsOf = (raw: unknown): Readonly<Record<string, string>> => {
  const labels: Record<string, string> = {}
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw))
    for (const [k, v] of Object.entries(raw)) if (typeof v === "string") labels[k] = v
  return labels
}

const interceptionOf = (value: unknown): InterceptionMode => {
  const mode = stringOf(value).toUpperCase()
  return mode === "TPROXY" || mode === "NONE" ? mode : "REDIRECT"
}

/**
 * The view of a sidecar or router node (a `waypoint` node is a router: the waypoint generator
 * recognises it by its id and labels); undefined for other node types (the caller serves them
 * with the gRPC generators).
 */
export const proxyView = (
  id: string,
  metadata: Readonly<Record<string, unknown>>,
  locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string } | null,
): ProxyView | undefined => {
  const parts = id.split("~")
  const type = parts[0]
  if (type !== "sidecar" && type !== "router" && type !== "waypoint") return undefined
  const podAndNamespace = parts[2] ?? ""
  const dot = podAndNamespace.indexOf(".")
  const idName = dot < 0 ? podAndNamespace : podAndNamespace.slice(0, dot)
  const idNamespace = dot < 0 ? "" : podAndNamespace.slice(dot + 1)
  const instanceIps = stringOf(metadata.INSTANCE_IPS)
    .split(",")
    .map((ip) => ip.trim())
    .filter((ip) => ip !== "")
  const ips = instanceIps.length > 0 ? instanceIps : parts[1] !== undefined && parts[1] !== "" ? [parts[1]] : []
  const labels = labelsOf(metadata.LABELS)
  const namespace = stringOf(metadata.NAMESPACE) || idNamespace
  const region = locality?.region || stringOf(metadata.REGION)
  const zone = locality?.zone || stringOf(metadata.ZONE)
  const subzone = locality?.sub_zone || stringOf(metadata.SUBZONE)
  const view = {
    kind: type === "sidecar" ? "sidecar" : "router",
    locality: region === "" && zone === "" && subzone === "" ? "" : `${region}/${zone}/${subzone}`,
    id,
    ips,
    name: stringOf(metadata.NAME) || idName,
    namespace,
    labels,
    serviceAccount: stringOf(metadata.SERVICE_ACCOUNT),
    clusterId: stringOf(metadata.CLUSTER_ID),
    network: stringOf(metadata.NETWORK),
    version: stringOf(metadata.MESH_VERSION) || stringOf(metadata.ISTIO_VERSION),
    interceptionMode: interceptionOf(metadata.INTERCEPTION_MODE),
    dnsCapture: truthy(metadata.DNS_CAPTURE),
    http10: stringOf(metadata.HTTP10) === "1",
    metadata,
  } as const
  const scopeKey = createHash("sha1")
    .update(
      JSON.stringify([
        view.kind,
        // A waypoint node gets other resources than a router with the same labels.
        type === "waypoint",
        view.namespace,
        Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)),
        view.serviceAccount,
        view.clusterId,
        view.network,
        view.locality,
        // IPv6-only proxies resolve DNS clusters with V6_ONLY.
        ips.length > 0 && ips.every((ip) => ip.includes(":")),
        view.interceptionMode,
        view.dnsCapture,
        view.http10,
      ]),
    )
    .digest("base64url")
    .slice(0, 16)
  return { ...view, scopeKey }
}
