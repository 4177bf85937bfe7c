/**
 * xDS resource type URLs the server answers, and the order in which a push sends them (clusters
 * before their endpoints, listeners before their routes, then the extension configs the
 * listeners reference and the DNS name table), so that a client never references a resource it
 * has not yet been offered. Proxyless gRPC clients use the first four; sidecars and gateways
 * all of them.
 */

export const TypeUrl = {
  Cluster: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  Endpoint: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  Listener: "type.googleapis.com/envoy.config.listener.v3.Listener",
  Route: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
  /** SDS over ADS: gateway and DestinationRule credentials by name. */
  Secret: "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
  /** ECDS: WasmPlugin filter configs. */
  ExtensionConfig: "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig",
  /** NDS: the DNS name table of the agent's DNS proxy (proto/mesh/networking/nds/v1). */
  NameTable: "type.googleapis.com/mesh.networking.nds.v1.NameTable",
  /** Workload discovery for the node proxy (ambient): workloads and services by address (proto/mesh/workload). */
  Address: "type.googleapis.com/mesh.workload.Address",
  /** The node proxy's L4 authorizations (proto/mesh/security). */
  Authorization: "type.googleapis.com/mesh.security.Authorization",
} as const

export type TypeUrl = (typeof TypeUrl)[keyof typeof TypeUrl]

/** Push order: CDS, EDS, LDS, RDS, SDS, ECDS, NDS, then the node proxy's addresses and authorizations. */
export const PUSH_ORDER: ReadonlyArray<TypeUrl> = [
  TypeUrl.Cluster,
  TypeUrl.Endpoint,
  TypeUrl.Listener,
  TypeUrl.Route,
  TypeUrl.Secret,
  TypeUrl.ExtensionConfig,
  TypeUrl.NameTable,
  TypeUrl.Address,
  TypeUrl.Authorization,
]

const SHORT: Record<string, string> = {
  [TypeUrl.Cluster]: "cds",
  [TypeUrl.Endpoint]: "eds",
  [TypeUrl.Listener]: "lds",
  [TypeUrl.Route]: "rds",
  [TypeUrl.Secret]: "sds",
  [TypeUrl.ExtensionConfig]: "ecds",
  [TypeUrl.NameTable]: "nds",
  [TypeUrl.Address]: "wds",
  [TypeUrl.Authorization]: "authz",
}

/** `cds`, `eds`, `lds`, `rds`, `sds`, `ecds`, `nds`, `wds`, `authz` (metric labels, logs); other type URLs keep their last segment. */
export const shortType = (typeUrl: string): string => SHORT[typeUrl] ?? typeUrl.slice(typeUrl.lastIndexOf(".") + 1)

export const isKnownType = (typeUrl: string): typeUrl is TypeUrl => typeUrl in SHORT

/** Types whose empty subscription means "everything" (state-of-the-world wildcard). */
export const isWildcardType = (typeUrl: string): boolean =>
  typeUrl === TypeUrl.Cluster ||
  typeUrl === TypeUrl.Listener ||
  typeUrl === TypeUrl.NameTable ||
  typeUrl === TypeUrl.Address ||
  typeUrl === TypeUrl.Authorization

/** Position of a type in the push order (unknown types last). */
export const pushRank = (typeUrl: string): number => {
  const index = PUSH_ORDER.indexOf(typeUrl as TypeUrl)
  return index === -1 ? PUSH_ORDER.length : index
}
