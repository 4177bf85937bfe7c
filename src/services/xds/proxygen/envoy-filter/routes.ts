/**
 * ROUTE_CONFIGURATION (MERGE), VIRTUAL_HOST (ADD, MERGE, REMOVE) and HTTP_ROUTE (ADD, MERGE,
 * REMOVE, INSERT_BEFORE/AFTER/FIRST) patches on one RouteConfiguration, in the reference's order:
 * route configuration merges, then per virtual host its merges/removes and per route its
 * merges/removes, then route inserts, then virtual host adds. Used for RDS and for route
 * configurations inline in an HTTP connection manager (the inbound side).
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import {
  arr,
  contextMatch,
  hasRouteMatch,
  obj,
  routeConfigurationMatch,
  routeMatch,
  str,
  virtualHostMatch,
} from "./match.js"
import { guard, type PatchSet, patchesOf, patchValue, typeOf, warn } from "./patch-set.js"
import type { PatchContext } from "./patches.js"
import { mergeMessage } from "./proto-merge.js"

const objects = (v: unknown): ReadonlyArray<ProtoObject> => arr(v).filter((x): x is ProtoObject => obj(x) !== undefined)

const patchRoutes = (set: PatchSet, context: PatchContext, rc: ProtoObject, vhost: ProtoObject): ProtoObject => {
  const patches = patchesOf(set, "HTTP_ROUTE")
  const applies = (p: (typeof patches)[number]) =>
    contextMatch(context, p) && routeConfigurationMatch(context, rc, p) && virtualHostMatch(vhost, p)
  const routeType = typeOf("HTTP_ROUTE")
  let routes: Array<ProtoObject> = []
  for (const original of objects(vhost.routes)) {
    let route: ProtoObject | undefined = original
    for (const p of patches) {
      if (route === undefined || !applies(p) || !routeMatch(route, p)) continue
      if (p.operation === "REMOVE") route = undefined
      else if (p.operation === "MERGE") {
        const current: ProtoObject = route
        route = guard(set, p, current, () => mergeMessage(current, patchValue(p), routeType))
      }
    }
    if (route !== undefined) routes.push(route)
  }
  for (const p of patches) {
    if (!applies(p)) continue
    const value = () => patchValue(p)
    switch (p.operation) {
      case "ADD":
        routes.push(value())
        break
      case "INSERT_AFTER": {
        if (!hasRouteMatch(p)) {
          routes.push(value())
          break
        }
        const at = routes.findIndex((r) => routeMatch(r, p))
        if (at >= 0) routes = [...routes.slice(0, at + 1), value(), ...routes.slice(at + 1)]
        break
      }
      case "INSERT_BEFORE":
      case "INSERT_FIRST": {
        if (!hasRouteMatch(p)) {
          routes = [value(), ...routes]
          break
        }
        const at = routes.findIndex((r) => routeMatch(r, p))
        if (at < 0) break
        // INSERT_FIRST with a route named in the match still goes first, once that route exists.
        const position = p.operation === "INSERT_FIRST" ? 0 : at
        routes = [...routes.slice(0, position), value(), ...routes.slice(position)]
        break
      }
      default:
        break
    }
  }
  const { routes: _old, ...rest } = vhost
  return vhost.routes === undefined && routes.length === 0 ? rest : { ...rest, routes }
}

/** Applies the route patches to one route configuration in `context`. */
export const patchRouteConfiguration = (set: PatchSet, context: PatchContext, original: ProtoObject): ProtoObject => {
  let rc = original
  const rcType = typeOf("ROUTE_CONFIGURATION")
  for (const p of patchesOf(set, "ROUTE_CONFIGURATION")) {
    if (p.operation !== "MERGE" || !contextMatch(context, p) || !routeConfigurationMatch(context, rc, p)) continue
    const current = rc
    rc = guard(set, p, current, () => mergeMessage(current, patchValue(p), rcType))
  }
  const vhostPatches = patchesOf(set, "VIRTUAL_HOST")
  const routePatches = patchesOf(set, "HTTP_ROUTE")
  if (vhostPatches.length === 0 && routePatches.length === 0) return rc
  const vhostType = typeOf("VIRTUAL_HOST")
  const removed = new Set<string>()
  const vhosts: Array<ProtoObject> = []
  for (const original of objects(rc.virtual_hosts)) {
    let vhost = original
    for (const p of vhostPatches) {
      if (!contextMatch(context, p) || !routeConfigurationMatch(context, rc, p) || !virtualHostMatch(vhost, p)) continue
      if (p.operation === "REMOVE") removed.add(str(vhost.name))
      else if (p.operation === "MERGE") {
        const current = vhost
        vhost = guard(set, p, current, () => mergeMessage(current, patchValue(p), vhostType))
      }
    }
    vhosts.push(routePatches.length === 0 ? vhost : patchRoutes(set, context, rc, vhost))
  }
  for (const p of vhostPatches) {
    if (p.operation !== "ADD" || !contextMatch(context, p) || !routeConfigurationMatch(context, rc, p)) continue
    const added = patchValue(p)
    if (vhosts.some((v) => str(v.name) === str(added.name))) {
      warn(
        set,
        `${p.where}: virtual host "${str(added.name)}" already exists in route configuration "${str(rc.name)}"; ADD skipped`,
      )
      continue
    }
    vhosts.push(added)
  }
  const kept = removed.size === 0 ? vhosts : vhosts.filter((v) => !removed.has(str(v.name)))
  if (rc.virtual_hosts === undefined && kept.length === 0) return rc
  return { ...rc, virtual_hosts: kept }
}

/** The patch context of an RDS route configuration: gateway, inbound (`inbound|…`) or outbound. */
export const routeConfigurationContext = (set: PatchSet, rc: ProtoObject): PatchContext =>
  set.proxy.kind === "router" ? "GATEWAY" : str(rc.name).startsWith("inbound|") ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND"
