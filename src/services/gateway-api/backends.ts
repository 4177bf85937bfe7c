/**
 * Route backends → VirtualService destinations. A backend is a Service (the default kind; its
 * host `<name>.<namespace>.svc.<domainSuffix>` must be in the registry), a ServiceEntry (mesh
 * group; its one host) or a Hostname (mesh group; the name is the host). Another namespace needs
 * a ReferenceGrant from the route's kind and namespace. A port is required. Weights (default 1)
 * become percentages summing to 100, as a VirtualService requires of several destinations.
 */
import type { BackendRef } from "../config-model/schemas/gateway-api/types.js"
import type { Service } from "../registry/model.js"
import { Reason } from "./conditions.js"
import { INFERENCE_GROUP, type InferencePools, isInferencePoolRef, resolveInferencePool } from "./inference-pools.js"
import { GATEWAY_API_GROUP, MESH_NETWORKING_GROUP, type RouteKind, serviceHost } from "./model.js"
import { normaliseGroup, type ReferenceGrants, referenceAllowed } from "./references.js"
import type { Destination, ResolvedBackend } from "./resolved-backend.js"

/** The registry looked up by host and by the ServiceEntry a service comes from. */
export interface ServiceIndex {
  readonly byHost: ReadonlyMap<string, ReadonlyArray<Service>>
  /** `namespace/name` of a ServiceEntry → its hosts, sorted. */
  readonly serviceEntryHosts: ReadonlyMap<string, ReadonlyArray<string>>
}

export const indexServices = (services: ReadonlyArray<Service>): ServiceIndex => {
  const byHost = new Map<string, Array<Service>>()
  const entryHosts = new Map<string, Set<string>>()
  for (const service of services) {
    const list = byHost.get(service.hostname) ?? []
    list.push(service)
    byHost.set(service.hostname, list)
    const source = service.source ?? ""
    if (source.startsWith("ServiceEntry/")) {
      const key = source.slice("ServiceEntry/".length)
      const hosts = entryHosts.get(key) ?? new Set<string>()
      hosts.add(service.hostname)
      entryHosts.set(key, hosts)
    }
  }
  return {
    byHost,
    serviceEntryHosts: new Map([...entryHosts].map(([key, hosts]) => [key, [...hosts].sort()])),
  }
}

/**
 * Whether a host is a service `namespace` can see: its own namespace's, or one exported to it
 * (`*`, the namespace itself; not set: the mesh default, taken as everywhere).
 */
export const hostVisible = (index: ServiceIndex, host: string, namespace: string): boolean =>
  (index.byHost.get(host) ?? []).some(
    (s) =>
      s.namespace === namespace ||
      s.exportTo.length === 0 ||
      s.exportTo.includes("*") ||
      s.exportTo.includes(namespace),
  )

/** The registry's service for an orchestrator Service, if it exists. */
export const findService = (index: ServiceIndex, host: string, namespace: string): Service | undefined =>
  index.byHost.get(host)?.find((s) => s.namespace === namespace)

export interface BackendContext {
  readonly services: ServiceIndex
  readonly grants: ReferenceGrants
  readonly domainSuffix: string
  readonly routeKind: RouteKind
  readonly routeNamespace: string
  /** Whether a backend in another namespace needs a ReferenceGrant (not for a Service parent's routes). */
  readonly enforceGrants?: boolean
  /** InferencePools and whether the extension is on (inference-pools.ts); absent: off. */
  readonly inferencePools?: InferencePools
}

export type { Destination, ResolvedBackend } from "./resolved-backend.js"

const problem = (reason: string, message: string): ResolvedBackend => ({ ok: false, problem: { reason, message } })

export const resolveBackend = (ref: BackendRef, ctx: BackendContext): ResolvedBackend => {
  const group = normaliseGroup(ref.group)
  const kind = ref.kind ?? "Service"
  const namespace = ref.namespace ?? ctx.routeNamespace
  const weight = ref.weight ?? 1
  const what = `${kind} ${namespace}/${ref.name}`
  const port = ref.port
  const grantedFor = (targetGroup: string) =>
    ctx.enforceGrants === false ||
    referenceAllowed(
      ctx.grants,
      { group: GATEWAY_API_GROUP, kind: ctx.routeKind, namespace: ctx.routeNamespace },
      { group: targetGroup, kind, namespace, name: ref.name },
    )
  const withPort = (host: string): ResolvedBackend =>
    port === undefined
      ? {
          ok: false,
          problem: { reason: Reason.BackendNotFound, message: `port is required in backendRef ${what}` },
          malformed: true,
        }
      : { ok: true, destination: { host, port: { number: port } }, weight }
  if (group === "" && kind === "Service") {
    if (!grantedFor(""))
      return problem(
        Reason.RefNotPermitted,
        `backendRef ${what} not accessible to a ${ctx.routeKind} in namespace "${ctx.routeNamespace}" (missing a ReferenceGrant?)`,
      )
    const host = serviceHost(ref.name, namespace, ctx.domainSuffix)
    if (findService(ctx.services, host, namespace) === undefined)
      return problem(Reason.BackendNotFound, `backend(${host}) not found`)
    return withPort(host)
  }
  if (group === MESH_NETWORKING_GROUP && kind === "Hostname") {
    // The name is the host itself: it may not name a namespace, and must be a known service.
    if (ref.namespace !== undefined)
      return {
        ok: false,
        problem: { reason: Reason.InvalidDestination, message: "namespace may not be set with Hostname type" },
        malformed: true,
      }
    if (!hostVisible(ctx.services, ref.name, ctx.routeNamespace))
      return problem(Reason.BackendNotFound, `backend(${ref.name}) not found`)
    return withPort(ref.name)
  }
  if (group === MESH_NETWORKING_GROUP && kind === "ServiceEntry") {
    if (!grantedFor(MESH_NETWORKING_GROUP))
      return problem(
        Reason.RefNotPermitted,
        `backendRef ${what} not accessible to a ${ctx.routeKind} in namespace "${ctx.routeNamespace}" (missing a ReferenceGrant?)`,
      )
    const hosts = ctx.services.serviceEntryHosts.get(`${namespace}/${ref.name}`) ?? []
    if (hosts.length === 0) return problem(Reason.BackendNotFound, `backend ${what} not found`)
    if (hosts.length > 1)
      return problem(
        Reason.BackendNotFound,
        `backend ${what} has ${hosts.length} hosts; a backend must have exactly one`,
      )
    return withPort(hosts[0]!)
  }
  if (isInferencePoolRef({ group, kind })) {
    if (!grantedFor(INFERENCE_GROUP))
      return problem(
        Reason.RefNotPermitted,
        `backendRef ${what} not accessible to a ${ctx.routeKind} in namespace "${ctx.routeNamespace}" (missing a ReferenceGrant?)`,
      )
    return resolveInferencePool(
      ref,
      namespace,
      ctx.inferencePools,
      (host) => findService(ctx.services, host, namespace),
      ctx.domainSuffix,
    )
  }
  return problem(Reason.InvalidKind, `referencing unsupported backendRef: group "${group}" kind "${kind}"`)
}

/**
 * Integer percentages in proportion to `weights` summing to 100 (largest remainders get the
 * rounding, earlier first on ties); all zero when the weights sum to zero.
 */
export const percentages = (weights: ReadonlyArray<number>): ReadonlyArray<number> => {
  const total = weights.reduce((a, b) => a + b, 0)
  if (total <= 0) return weights.map(() => 0)
  const exact = weights.map((w) => (w * 100) / total)
  const out = exact.map(Math.floor)
  let left = 100 - out.reduce((a, b) => a + b, 0)
  const order = exact.map((e, i) => ({ i, frac: e - Math.floor(e) })).sort((a, b) => b.frac - a.frac || a.i - b.i)
  for (const { i } of order) {
    if (left <= 0) break
    out[i] = out[i]! + 1
    left--
  }
  return out
}

export interface WeightedDestination {
  readonly destination: Destination
  /** Absent for a lone destination (it takes all traffic). */
  readonly weight?: number
}

/**
 * The destinations of backends with a weight, as a VirtualService route lists them; empty when
 * no backend has a weight.
 */
export const weightedDestinations = (
  backends: ReadonlyArray<{ readonly destination: Destination; readonly weight: number }>,
): ReadonlyArray<WeightedDestination> => {
  const live = backends.filter((b) => b.weight > 0)
  if (live.length <= 1) return live.map((b) => ({ destination: b.destination }))
  const shares = percentages(live.map((b) => b.weight))
  return live.map((b, i) => ({ destination: b.destination, weight: shares[i]! }))
}
