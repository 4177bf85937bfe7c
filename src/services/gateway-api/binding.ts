/**
 * Route parents: which of a route's parentRefs this controller answers for, and to which
 * listeners (with which hostnames) the route attaches.
 *
 * - A Gateway (kind Gateway, group gateway.networking.k8s.io, namespace the route's unless
 *   given) of a class this controller owns: listeners narrowed by sectionName and port, then
 *   those that are served and allow the route (allowedRoutes kinds; namespaces Same / All /
 *   Selector), then those whose hostname meets the route's. Failing each step in turn gives
 *   NoMatchingParent, NotAllowedByListeners, NoMatchingListenerHostname. A Gateway that does not
 *   exist is answered for too (NoMatchingParent): no other controller will.
 * - A Service (kind Service, group core) for mesh routing (GAMMA; HTTPRoute and GRPCRoute):
 *   it must be in the registry; `port` (or `sectionName`, a port name) narrows to one of its ports.
 * - A ListenerSet (kind ListenerSet) this controller reconciled: its entries, as a Gateway's
 *   listeners; one that does not exist is NoMatchingParent.
 * - Any other parent (another controller's Gateway, other kinds) is not this controller's.
 */
import type { ParentReference } from "../config-model/schemas/gateway-api/types.js"
import type { Service } from "../registry/model.js"
import { findService, type ServiceIndex } from "./backends.js"
import { type Problem, Reason } from "./conditions.js"
import { type GatewayState, gatewayAccepted, type ListenerState } from "./gateways.js"
import { intersectHostnames } from "./hostnames.js"
import { GATEWAY_API_GROUP, MESH_NETWORKING_GROUP, type RouteKind, serviceHost } from "./model.js"
import { normaliseGroup } from "./references.js"
import { namespaceLabelsOf, selectorMatches } from "./selectors.js"

export interface RouteIdentity {
  readonly kind: RouteKind
  readonly namespace: string
  readonly name: string
  /** The route's hostnames (TCPRoute has none). */
  readonly hostnames: ReadonlyArray<string>
}

export interface ListenerAttachment {
  readonly listener: ListenerState
  /** The hostnames the route serves through the listener (`*` for any). */
  readonly hostnames: ReadonlyArray<string>
}

export type ParentBinding =
  /** Not this controller's parent: no status, no config. */
  | { readonly type: "foreign" }
  | {
      readonly type: "gateway"
      readonly gateway: GatewayState
      readonly attachments: ReadonlyArray<ListenerAttachment>
      readonly problem?: Problem
    }
  /** A Service, or a ServiceEntry's services (one per host): mesh routing for their hosts. */
  | { readonly type: "service"; readonly services: ReadonlyArray<Service>; readonly port?: number }
  | { readonly type: "unattached"; readonly problem: Problem }

export interface BindingContext {
  /** Reconciled Gateways by `namespace/name`. */
  readonly gateways: ReadonlyMap<string, GatewayState>
  /** Every Gateway that exists, by `namespace/name` (to tell "missing" from "another controller's"). */
  readonly existingGateways: ReadonlySet<string>
  readonly services: ServiceIndex
  readonly namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>
  readonly domainSuffix: string
  /** Reconciled ListenerSets by `namespace/name` (listener-sets.ts), and every one that exists. */
  readonly listenerSets?: ReadonlyMap<string, GatewayState>
  readonly existingListenerSets?: ReadonlySet<string>
}

const namespaceAllowed = (
  listener: ListenerState,
  gatewayNamespace: string,
  route: RouteIdentity,
  ctx: BindingContext,
) => {
  const namespaces = listener.listener.allowedRoutes?.namespaces
  switch (namespaces?.from ?? "Same") {
    case "All":
      return true
    case "Selector":
      return (
        namespaces?.selector !== undefined &&
        selectorMatches(namespaces.selector, namespaceLabelsOf(ctx.namespaceLabels, route.namespace))
      )
    default:
      return route.namespace === gatewayNamespace
  }
}

const describeRef = (ref: ParentReference): string =>
  [
    ref.sectionName !== undefined ? `sectionName "${ref.sectionName}"` : undefined,
    ref.port !== undefined ? `port ${ref.port}` : undefined,
  ]
    .filter((s) => s !== undefined)
    .join(" and ")

/** `Gateway ns/name`, or `ListenerSet ns/name` for a ListenerSet (whose key carries its kind). */
const ownerName = (gateway: GatewayState): string =>
  gateway.resource.kind === "ListenerSet" ? gateway.key.replace("/", " ") : `Gateway ${gateway.key}`

const bindToGateway = (
  route: RouteIdentity,
  ref: ParentReference,
  gateway: GatewayState,
  ctx: BindingContext,
): ParentBinding => {
  const unattached = (reason: string, message: string): ParentBinding => ({
    type: "gateway",
    gateway,
    attachments: [],
    problem: { reason, message },
  })
  if (!gatewayAccepted(gateway)) return unattached(Reason.NoMatchingParent, `${ownerName(gateway)} is not accepted`)
  const named = gateway.listeners.filter(
    (l) =>
      (ref.sectionName === undefined || l.listener.name === ref.sectionName) &&
      (ref.port === undefined || l.listener.port === ref.port),
  )
  if (named.length === 0) {
    return unattached(Reason.NoMatchingParent, `no listener of ${ownerName(gateway)} with ${describeRef(ref)}`)
  }
  const gatewayNamespace = gateway.resource.meta.namespace
  const notAllowed: Array<string> = []
  const allowed = named.filter((l) => {
    if (!l.served) {
      notAllowed.push(`listener ${l.listener.name} is not programmed`)
      return false
    }
    if (!l.supportedKinds.some((k) => k.kind === route.kind)) {
      notAllowed.push(`listener ${l.listener.name} does not allow ${route.kind}`)
      return false
    }
    if (!namespaceAllowed(l, gatewayNamespace, route, ctx)) {
      notAllowed.push(`listener ${l.listener.name} does not allow routes from namespace ${route.namespace}`)
      return false
    }
    return true
  })
  if (allowed.length === 0) return unattached(Reason.NotAllowedByListeners, notAllowed.join("; "))
  const attachments = allowed
    .map((listener) => ({
      listener,
      hostnames: route.kind === "TCPRoute" ? ["*"] : intersectHostnames(listener.listener.hostname, route.hostnames),
    }))
    .filter((a) => a.hostnames.length > 0)
  if (attachments.length === 0) {
    return unattached(
      Reason.NoMatchingListenerHostname,
      `no hostname of the route matches a listener hostname of ${ownerName(gateway)}`,
    )
  }
  return { type: "gateway", gateway, attachments }
}

const bindToService = (route: RouteIdentity, ref: ParentReference, ctx: BindingContext): ParentBinding => {
  const namespace = ref.namespace ?? route.namespace
  const host = serviceHost(ref.name, namespace, ctx.domainSuffix)
  const service = findService(ctx.services, host, namespace)
  if (service === undefined) {
    return {
      type: "unattached",
      problem: { reason: Reason.NoMatchingParent, message: `parent service: "${ref.name}" not found` },
    }
  }
  const port =
    ref.port ??
    (ref.sectionName !== undefined ? service.ports.find((p) => p.name === ref.sectionName)?.port : undefined)
  const portExists = port === undefined || service.ports.some((p) => p.port === port)
  if ((ref.sectionName !== undefined && port === undefined) || !portExists) {
    return {
      type: "unattached",
      problem: { reason: Reason.NoMatchingParent, message: `Service ${host} has no port with ${describeRef(ref)}` },
    }
  }
  return { type: "service", services: [service], ...(port !== undefined ? { port } : {}) }
}

/** A ServiceEntry parent (issue 36 group 2): mesh routing for each of its hosts. */
const bindToServiceEntry = (route: RouteIdentity, ref: ParentReference, ctx: BindingContext): ParentBinding => {
  const namespace = ref.namespace ?? route.namespace
  const key = `${namespace}/${ref.name}`
  const services = (ctx.services.serviceEntryHosts.get(key) ?? []).flatMap(
    (host) => ctx.services.byHost.get(host)?.filter((s) => s.source === `ServiceEntry/${key}`) ?? [],
  )
  if (services.length === 0) {
    return {
      type: "unattached",
      problem: { reason: Reason.NoMatchingParent, message: `parent service entry: "${ref.name}" not found` },
    }
  }
  return { type: "service", services, ...(ref.port !== undefined ? { port: ref.port } : {}) }
}

export const bindParent = (route: RouteIdentity, ref: ParentReference, ctx: BindingContext): ParentBinding => {
  const group = normaliseGroup(ref.group ?? GATEWAY_API_GROUP)
  const kind = ref.kind ?? "Gateway"
  const namespace = ref.namespace ?? route.namespace
  if (group === GATEWAY_API_GROUP && kind === "Gateway") {
    const key = `${namespace}/${ref.name}`
    const gateway = ctx.gateways.get(key)
    if (gateway !== undefined) return bindToGateway(route, ref, gateway, ctx)
    if (ctx.existingGateways.has(key)) return { type: "foreign" }
    return { type: "unattached", problem: { reason: Reason.NoMatchingParent, message: `Gateway ${key} not found` } }
  }
  if (group === GATEWAY_API_GROUP && kind === "ListenerSet") {
    // A ListenerSet's entries bind as a Gateway's listeners do (its namespace is their `Same`).
    const key = `${namespace}/${ref.name}`
    const listenerSet = ctx.listenerSets?.get(key)
    if (listenerSet !== undefined) return bindToGateway(route, ref, listenerSet, ctx)
    if (ctx.existingListenerSets?.has(key)) return { type: "foreign" }
    return { type: "unattached", problem: { reason: Reason.NoMatchingParent, message: `ListenerSet ${key} not found` } }
  }
  if (group === "" && kind === "Service") return bindToService(route, ref, ctx)
  if (group === MESH_NETWORKING_GROUP && kind === "ServiceEntry") return bindToServiceEntry(route, ref, ctx)
  return { type: "foreign" }
}
