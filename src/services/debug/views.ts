/**
 * Pure JSON shaping for the discovery debug interface (`/debug/*`): what each endpoint shows,
 * from the XdsServer's connection status, the PushContext and the config snapshot.
 */
import { apiKindOf, kindInfoOf } from "../config-model/kinds.js"
import type { ConfigResource } from "../config-model/resource.js"
import { undefinedSubsetWarnings } from "../config-model/subset-references.js"
import type { PushContext } from "../xds/model/push-context.js"
import type { ConnectionStatus } from "../xds/server.js"

/** The endpoints `/debug/list` names, with what each shows. */
export const DEBUG_ENDPOINTS: ReadonlyArray<{ readonly name: string; readonly help: string }> = [
  { name: "/debug/list", help: "This list" },
  { name: "/debug/version", help: "The server's build (as /version on the monitoring listener)" },
  { name: "/debug/adsz", help: "Connected xDS clients and their watches" },
  { name: "/debug/connections", help: "Connected xDS clients (same as adsz)" },
  {
    name: "/debug/syncz",
    help: "Per proxy and type: nonce sent, nonce acked, version, last NACK, requested resources not found",
  },
  { name: "/debug/configz", help: "Configuration resources the server holds" },
  {
    name: "/debug/gateway-api",
    help: "Gateways and VirtualServices generated from Gateway-API objects, with the objects each came from",
  },
  {
    name: "/debug/config_warnings",
    help: "Cross-resource config warnings: route destinations whose subset no DestinationRule defines",
  },
  { name: "/debug/registryz", help: "Services known to the registries" },
  { name: "/debug/endpointShardz", help: "Endpoints by service" },
  { name: "/debug/config_dump", help: "Resources of one proxy: ?proxyID=<node id>" },
  { name: "/debug/clusterz", help: "Remote clusters followed from remote-cluster Secrets, and their sync status" },
  { name: "/debug/push_status", help: "Push statistics" },
  { name: "/debug/pushcontext", help: "The current PushContext" },
  { name: "/debug/cachez", help: "Resource cache statistics" },
  { name: "/debug/mesh", help: "The mesh configuration" },
  { name: "/debug/resourcesz", help: "Known configuration kinds" },
  { name: "/debug/force_disconnect", help: "Closes a proxy's streams (UNSAFE_ENABLE_ADMIN_ENDPOINTS)" },
  {
    name: "/debug/ca_rotation",
    help: "Root key rotation: phase, roots, trust bundle version, agents not yet holding it",
  },
  { name: "/debug/ca_rotate_key", help: "Starts a root key rotation of the self-signed CA (POST over HTTP)" },
  {
    name: "/debug/ui",
    help: "The mesh page for a browser: proxies' sync state, refused config, pushes, certificates (HTTP only)",
  },
  { name: "/debug/ui/state", help: "What /debug/ui shows, as JSON: ?page=&pageSize=&q=&state= (HTTP only)" },
]

export const shortType = (typeUrl: string): string => {
  const name = typeUrl.slice(typeUrl.lastIndexOf(".") + 1)
  switch (name) {
    case "Cluster":
      return "cds"
    case "ClusterLoadAssignment":
      return "eds"
    case "Listener":
      return "lds"
    case "RouteConfiguration":
      return "rds"
    default:
      return name
  }
}

export interface SyncStatus {
  readonly proxy: string
  readonly connectionId: string
  readonly generator: string
  readonly delta: boolean
  readonly type: string
  readonly typeUrl: string
  /** The node's CLUSTER_ID and MESH_VERSION metadata ("" when absent), for `meshctl proxy-status`. */
  readonly clusterId: string
  readonly proxyVersion: string
  readonly nonceSent: string
  readonly nonceAcked: string
  readonly versionSent: string
  readonly versionAcked: string
  readonly lastError: string
  /**
   * What the server could not give this proxy: requested names with no resource and why
   * ("requested listener foo:80 not found: no service has host foo"). A proxyless client is
   * only told DEADLINE_EXCEEDED, so this is where to look.
   */
  readonly warnings: ReadonlyArray<string>
}

const metadataText = (c: ConnectionStatus, key: string): string => {
  const value = c.proxy?.metadata[key]
  return typeof value === "string" ? value : ""
}

/** `/debug/syncz`: one row per connection and watched type, like the reference's sync status. */
export const syncz = (connections: ReadonlyArray<ConnectionStatus>): ReadonlyArray<SyncStatus> =>
  connections.flatMap((c) =>
    c.watches.map((w) => ({
      proxy: c.nodeId,
      connectionId: c.id,
      generator: c.generator,
      delta: c.delta,
      type: shortType(w.typeUrl),
      typeUrl: w.typeUrl,
      clusterId: metadataText(c, "CLUSTER_ID"),
      proxyVersion: metadataText(c, "MESH_VERSION"),
      nonceSent: w.nonceSent ?? "",
      nonceAcked: w.nonceAcked ?? "",
      versionSent: w.versionSent ?? "",
      versionAcked: w.versionAcked ?? "",
      lastError: w.lastError ?? "",
      warnings: w.warnings ?? [],
    })),
  )

/** `/debug/adsz`: connections with their watches, connection time as ISO text. */
export const adsz = (connections: ReadonlyArray<ConnectionStatus>) => ({
  totalClients: connections.length,
  clients: connections.map((c) => ({ ...c, connectedAt: new Date(c.connectedAt).toISOString() })),
})

/** `/debug/configz`: resources as their kind, group, version, metadata and spec. */
export const configz = (resources: ReadonlyArray<ConfigResource>) =>
  resources.map((r) => {
    // As the document was written: the mesh's KubernetesGateway is a Gateway-API `Gateway`.
    const info = kindInfoOf(r.kind)
    return {
      kind: info === undefined ? r.kind : apiKindOf(info),
      apiVersion: r.group === "" ? r.version : `${r.group}/${r.version}`,
      metadata: r.meta,
      spec: r.spec,
    }
  })

/**
 * `/debug/config_warnings`: the served config's cross-resource warnings (subset-references.ts),
 * each with the resource, field and, for file config, where it is.
 */
export const configWarnings = (push: PushContext) =>
  undefinedSubsetWarnings(
    [...push.input.virtualServices, ...push.input.destinationRules],
    push.options.domainSuffix,
  ).map((w) => ({
    kind: w.kind ?? "",
    namespace: w.namespace ?? "",
    name: w.name ?? "",
    ...(w.file !== "" ? { file: w.file, documentIndex: w.documentIndex } : {}),
    path: w.path,
    message: w.message,
  }))

/** `/debug/endpointShardz`: endpoints grouped by service host. */
export const endpointShardz = (push: PushContext) =>
  Object.fromEntries([...push.endpointsByHost.entries()].sort(([a], [b]) => a.localeCompare(b)))

/** `/debug/pushcontext`: a summary of the current PushContext. */
export const pushContextSummary = (push: PushContext) => ({
  version: push.version,
  services: push.services.map((s) => s.hostname),
  virtualServices: [...push.virtualServiceByHost.keys()],
  destinationRules: [...push.destinationRuleByHost.keys()],
  endpoints: Object.fromEntries([...push.endpointsByHost.entries()].map(([host, eps]) => [host, eps.length])),
})

/** Loopback callers: 127.0.0.0/8, ::1 and IPv4-mapped loopback. */
export const isLoopback = (address: string | undefined): boolean => {
  if (address === undefined) return false
  const a = address.startsWith("::ffff:") ? address.slice(7) : address
  return a === "::1" || a.startsWith("127.")
}
