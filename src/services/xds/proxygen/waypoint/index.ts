/**
 * The waypoint generator: what a proxy serving a `mesh-waypoint` Gateway gets (waypoint-proxy.ts
 * says which proxies those are and what each serves). LDS: `connect_terminate`, `main_internal`,
 * `connect_originate` (listeners.ts); CDS: the internal clusters, one per bound service port and
 * subset, and outbound clusters for destinations outside them (clusters.ts); EDS: those outbound
 * clusters' endpoints, by name as for any proxy; RDS: none (routes are inline per chain).
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { type Generated, noNotices } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import type { Cluster, Listener } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { waypointClusters } from "./clusters.js"
import { waypointListeners } from "./listeners.js"
import { CONNECT_ORIGINATE, CONNECT_TERMINATE, MAIN_INTERNAL } from "./names.js"
import { type WaypointScope, waypointOf, waypointScope } from "./waypoint-proxy.js"

export { waypointOf } from "./waypoint-proxy.js"

/** What the listeners and the clusters of a scope depend on beyond the inline routes and policies. */
const scopeKey = (push: PushContext, scope: WaypointScope): string =>
  JSON.stringify([
    scope.ref,
    scope.services.map((s) => [s.hostname, push.fingerprint("service", s.hostname)]),
    scope.workloadAddresses,
  ])

const scopeFor = (push: PushContext, proxy: ProxyView): WaypointScope | undefined => {
  const ref = waypointOf(proxy)
  return ref === undefined ? undefined : waypointScope(push, ref)
}

export const generateWaypointListeners = (push: PushContext, proxy: ProxyView): Generated<Listener> => {
  const scope = scopeFor(push, proxy)
  if (scope === undefined) return { resources: [], warnings: noNotices }
  const { listeners, main } = waypointListeners(push, scope)
  const key = `${scopeKey(push, scope)}|${main.key}`
  const keys: Record<string, string> = {
    [CONNECT_TERMINATE]: "waypoint|connect_terminate",
    [MAIN_INTERNAL]: `waypoint|main_internal|${key}`,
    [CONNECT_ORIGINATE]: "waypoint|connect_originate",
  }
  const resources = listeners.map(
    (listener): ResourceSpec<Listener> => ({
      name: String(listener.name),
      key: keys[String(listener.name)] ?? `waypoint|${String(listener.name)}|${key}`,
      build: () => listener,
    }),
  )
  const notices = scope.notices.map((message) => ({ level: "info" as const, scope: "ambient", message }))
  return { resources, warnings: [...main.warnings, ...notices] }
}

export const generateWaypointClusters = (push: PushContext, proxy: ProxyView): Generated<Cluster> => {
  const scope = scopeFor(push, proxy)
  if (scope === undefined) return { resources: [], warnings: noNotices }
  return waypointClusters(push, proxy, scope, waypointListeners(push, scope).main.outboundClusters)
}
