/**
 * InferencePool backends (the Gateway-API inference extension), as the reference serves them.
 * A pool becomes a headless "shadow" Service `<pool>-ip-<8 hex of sha256(pool)>` selecting the
 * pool's pods, one port `http-<i>` = 54321+i per target port, labelled with the endpoint picker
 * (service, port, failure mode) and owned by the pool. A route's InferencePool backend goes to
 * that Service's first port, and the route is marked to call the endpoint picker (ext_proc)
 * before picking an endpoint: the generated VirtualService carries, per HTTP route name, the
 * picker's host, port and failure mode in an annotation the proxy's route generator reads (the
 * reference keeps the same map beside its VirtualService). Each pool gets status per Gateway
 * whose controller accepted a route to it: Accepted (from that route's parent status) and
 * ResolvedRefs (the picker is a Service of the pool's namespace).
 */
import { createHash } from "node:crypto"
import type { ConfigResource } from "../config-model/resource.js"
import type { InferencePoolSpec } from "../config-model/schemas/gateway-api/inference-pool.js"
import type { BackendRef, HTTPRouteSpec } from "../config-model/schemas/gateway-api/types.js"
import type { VirtualServiceSpec } from "../config-model/schemas/virtual-service.js"
import type { Service } from "../registry/model.js"
import { type Condition, Reason } from "./conditions.js"
import { GATEWAY_API_GROUP, keyOf, type ResourceStatus, serviceHost } from "./model.js"
import type { ResolvedBackend } from "./resolved-backend.js"

export const INFERENCE_GROUP = "inference.networking.k8s.io"
export const INFERENCE_POOL_KIND = "InferencePool"

/** The first shadow port; the i-th target port is served as FIRST + i. */
export const FIRST_SHADOW_PORT = 54321
const MAX_SERVICE_NAME = 63
const HASH_LENGTH = 8
const SEPARATOR = "-ip-"

/** Labels of the shadow Service: which pool it stands for and the pool's endpoint picker. */
export const PoolLabel = {
  pool: "mesh.io/inferencepool-name",
  pickerService: "mesh.io/inferencepool-extension-service",
  pickerPort: "mesh.io/inferencepool-extension-port",
  pickerFailureMode: "mesh.io/inferencepool-extension-failure-mode",
  semantics: "internal.mesh.io/service-semantics",
} as const

/** On a generated VirtualService: JSON `{ <http route name>: EndpointPicker }`. */
export const INFERENCE_ROUTES_ANNOTATION = "internal.mesh.io/inference-pool-routes"

/** The shadow Service's name: the pool's, then `-ip-` and 8 hex of its hash, the base cut to fit 63. */
export const inferencePoolServiceName = (poolName: string): string => {
  const hash = createHash("sha256").update(poolName).digest("hex").slice(0, HASH_LENGTH)
  const base = poolName.slice(0, MAX_SERVICE_NAME - SEPARATOR.length - HASH_LENGTH)
  return `${base}${SEPARATOR}${hash}`
}

/** The endpoint picker one route calls: its cluster's host and port, and whether a failed call lets the request on. */
export interface EndpointPicker {
  readonly host: string
  readonly port: number
  readonly failureModeAllow: boolean
}

/** The picker of a pool; undefined without a port (the reference then builds no pool). */
export const endpointPickerOf = (
  pool: ConfigResource<InferencePoolSpec>,
  domainSuffix: string,
): EndpointPicker | undefined => {
  const ref = pool.spec.endpointPickerRef
  if (ref.port === undefined) return undefined
  return {
    host: serviceHost(ref.name, pool.meta.namespace, domainSuffix),
    port: ref.port.number,
    failureModeAllow: ref.failureMode === "FailOpen",
  }
}

/** The shadow Service as the orchestrator stores it (what the pool controller applies). */
export const shadowServiceObject = (pool: ConfigResource<InferencePoolSpec>) => {
  const ref = pool.spec.endpointPickerRef
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: inferencePoolServiceName(pool.meta.name),
      namespace: pool.meta.namespace,
      labels: {
        [PoolLabel.pool]: pool.meta.name,
        [PoolLabel.pickerService]: ref.name,
        [PoolLabel.pickerPort]: String(ref.port?.number ?? ""),
        [PoolLabel.pickerFailureMode]: ref.failureMode ?? "FailClose",
        [PoolLabel.semantics]: "inferencepool",
      },
      ownerReferences: [
        {
          apiVersion: `${INFERENCE_GROUP}/v1`,
          kind: INFERENCE_POOL_KIND,
          name: pool.meta.name,
        },
      ],
    },
    spec: {
      type: "ClusterIP",
      clusterIP: "None",
      selector: { ...pool.spec.selector.matchLabels },
      ports: pool.spec.targetPorts.map((target, i) => ({
        name: `http-${i}`,
        protocol: "TCP",
        port: FIRST_SHADOW_PORT + i,
        targetPort: target.number,
        ...(pool.spec.appProtocol !== undefined ? { appProtocol: pool.spec.appProtocol } : {}),
      })),
    },
  }
}

/** The shadow Service as the registry holds it, for file mode (no orchestrator to write it to). */
export const shadowRegistryService = (pool: ConfigResource<InferencePoolSpec>, domainSuffix: string): Service => {
  const object = shadowServiceObject(pool)
  return {
    hostname: serviceHost(object.metadata.name, pool.meta.namespace, domainSuffix),
    namespace: pool.meta.namespace,
    ports: object.spec.ports.map((p) => ({ name: p.name, port: p.port, protocol: "HTTP", targetPort: p.targetPort })),
    addresses: [],
    autoAllocatedAddresses: [],
    resolution: "STATIC",
    location: "MESH_INTERNAL",
    exportTo: [],
    labels: object.metadata.labels,
    selector: object.spec.selector,
    registry: "Orchestrator",
    clusterId: "Orchestrator",
    source: `Service/${pool.meta.namespace}/${object.metadata.name}`,
    ...(pool.meta.creationTimestamp !== undefined ? { creationTimestamp: pool.meta.creationTimestamp } : {}),
  }
}

/** Whether a backendRef names an InferencePool. */
export const isInferencePoolRef = (ref: Pick<BackendRef, "group" | "kind">): boolean =>
  ref.group === INFERENCE_GROUP && ref.kind === INFERENCE_POOL_KIND

/** The pools by `namespace/name`, and whether the extension is on. */
export interface InferencePools {
  readonly enabled: boolean
  readonly byKey: ReadonlyMap<string, ConfigResource<InferencePoolSpec>>
}

export const indexInferencePools = (
  pools: ReadonlyArray<ConfigResource<InferencePoolSpec>>,
  enabled: boolean,
): InferencePools => ({ enabled, byKey: new Map(pools.map((p) => [keyOf(p), p])) })

/**
 * Adds to each generated VirtualService the endpoint picker of every HTTP route of it whose
 * destination is a pool's shadow Service (the VirtualService schema has no place for it).
 */
export const withEndpointPickers = (
  vs: ConfigResource<VirtualServiceSpec>,
  pickers: ReadonlyMap<string, EndpointPicker>,
): ConfigResource<VirtualServiceSpec> => {
  if (pickers.size === 0) return vs
  const routes: Record<string, EndpointPicker> = {}
  for (const route of vs.spec.http ?? []) {
    const picker = (route.route ?? []).map((d) => pickers.get(d.destination.host)).find((p) => p !== undefined)
    if (picker !== undefined && route.name !== undefined) routes[route.name] = picker
  }
  if (Object.keys(routes).length === 0) return vs
  return {
    ...vs,
    meta: {
      ...vs.meta,
      annotations: { ...vs.meta.annotations, [INFERENCE_ROUTES_ANNOTATION]: JSON.stringify(routes) },
    },
  }
}

/** The endpoint pickers of a VirtualService's routes, by route name, from its annotation. */
export const endpointPickersOf = (
  annotations: Readonly<Record<string, string>> | undefined,
): ReadonlyMap<string, EndpointPicker> => {
  const raw = annotations?.[INFERENCE_ROUTES_ANNOTATION]
  if (raw === undefined) return new Map()
  try {
    const parsed = JSON.parse(raw) as Record<string, EndpointPicker>
    return new Map(
      Object.entries(parsed).filter(
        ([, p]) => typeof p?.host === "string" && Number.isInteger(p.port) && typeof p.failureModeAllow === "boolean",
      ),
    )
  } catch {
    return new Map()
  }
}

interface RouteParentStatus {
  readonly parentRef: {
    readonly group?: string
    readonly kind?: string
    readonly name: string
    readonly namespace?: string
  }
  readonly controllerName: string
  readonly conditions: ReadonlyArray<{ readonly type: string; readonly status: string; readonly message: string }>
}

const poolCondition = (
  type: string,
  status: "True" | "False" | "Unknown",
  reason: string,
  message: string,
  generation: number | undefined,
  now: string,
): Condition =>
  ({
    type,
    status,
    reason,
    message,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: now,
  }) as Condition

const referencesPool = (route: ConfigResource<HTTPRouteSpec>, pool: ConfigResource<InferencePoolSpec>): boolean =>
  (route.spec.rules ?? []).some((rule) =>
    (rule.backendRefs ?? []).some(
      (ref) =>
        isInferencePoolRef(ref) &&
        ref.name === pool.meta.name &&
        (ref.namespace ?? route.meta.namespace) === pool.meta.namespace,
    ),
  )

/**
 * The status of every pool a route of ours reaches: one parent per Gateway that our controller
 * lists in such a route's status. Accepted follows that route parent's Accepted; ResolvedRefs
 * says whether the endpoint picker is a Service (kind) that exists in the pool's namespace.
 */
export const inferencePoolStatuses = (
  pools: ReadonlyArray<ConfigResource<InferencePoolSpec>>,
  httpRoutes: ReadonlyArray<ConfigResource<HTTPRouteSpec>>,
  routeStatuses: ReadonlyArray<ResourceStatus>,
  services: ReadonlyArray<Service>,
  options: { readonly controllerName: string; readonly domainSuffix: string; readonly now: string },
): ReadonlyArray<ResourceStatus> => {
  const parentsOf = (route: ConfigResource<HTTPRouteSpec>): ReadonlyArray<RouteParentStatus> => {
    const found = routeStatuses.find(
      (s) => s.kind === "HTTPRoute" && s.namespace === route.meta.namespace && s.name === route.meta.name,
    )
    const parents = (found?.status as { parents?: ReadonlyArray<RouteParentStatus> } | undefined)?.parents ?? []
    return parents.filter(
      (p) =>
        p.controllerName === options.controllerName &&
        (p.parentRef.kind ?? "Gateway") === "Gateway" &&
        (p.parentRef.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP,
    )
  }
  const out: Array<ResourceStatus> = []
  for (const pool of pools) {
    const routes = httpRoutes.filter((r) => referencesPool(r, pool))
    const gateways = new Map<string, { readonly namespace: string; readonly name: string }>()
    for (const route of routes)
      for (const p of parentsOf(route)) {
        const namespace = p.parentRef.namespace ?? route.meta.namespace
        gateways.set(`${namespace}/${p.parentRef.name}`, { namespace, name: p.parentRef.name })
      }
    if (gateways.size === 0) continue
    const generation = pool.meta.generation
    const resolved = resolvedRefsOf(pool, services, options.domainSuffix)
    const parents = [...gateways.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, gw]) => {
        const accepted = acceptedOf(routes, gw, parentsOf)
        return {
          parentRef: { group: GATEWAY_API_GROUP, kind: "Gateway", namespace: gw.namespace, name: gw.name },
          conditions: [
            poolCondition("Accepted", accepted.status, accepted.reason, accepted.message, generation, options.now),
            poolCondition("ResolvedRefs", resolved.status, resolved.reason, resolved.message, generation, options.now),
          ],
        }
      })
    out.push({
      kind: INFERENCE_POOL_KIND,
      namespace: pool.meta.namespace,
      name: pool.meta.name,
      ...(generation !== undefined ? { generation } : {}),
      status: { parents },
    })
  }
  return out
}

type Verdict = { readonly status: "True" | "False" | "Unknown"; readonly reason: string; readonly message: string }

const acceptedOf = (
  routes: ReadonlyArray<ConfigResource<HTTPRouteSpec>>,
  gw: { readonly namespace: string; readonly name: string },
  parentsOf: (route: ConfigResource<HTTPRouteSpec>) => ReadonlyArray<RouteParentStatus>,
): Verdict => {
  for (const route of routes)
    for (const p of parentsOf(route)) {
      if (p.parentRef.name !== gw.name || (p.parentRef.namespace ?? route.meta.namespace) !== gw.namespace) continue
      const accepted = p.conditions.find((c) => c.type === "Accepted")
      if (accepted === undefined)
        return {
          status: "Unknown",
          reason: "Accepted",
          message: "Referenced by an HTTPRoute unknown parentRef Gateway status",
        }
      if (accepted.status === "True")
        return {
          status: "True",
          reason: "Accepted",
          message: "Referenced by an HTTPRoute accepted by the parentRef Gateway",
        }
      return {
        status: "False",
        reason: "HTTPRouteNotAccepted",
        message: `Referenced HTTPRoute ${keyOf(route)} not accepted by Gateway ${gw.namespace}/${gw.name}: ${accepted.message}`,
      }
    }
  return {
    status: "False",
    reason: "HTTPRouteNotAccepted",
    message: `No HTTPRoute found referencing this InferencePool with Gateway ${gw.namespace}/${gw.name} as parent`,
  }
}

const resolvedRefsOf = (
  pool: ConfigResource<InferencePoolSpec>,
  services: ReadonlyArray<Service>,
  domainSuffix: string,
): Verdict => {
  const ref = pool.spec.endpointPickerRef
  const kind = ref.kind ?? "Service"
  if (kind !== "Service")
    return { status: "False", reason: "InvalidExtensionRef", message: `Unsupported ExtensionRef kind ${kind}` }
  const host = serviceHost(ref.name, pool.meta.namespace, domainSuffix)
  if (!services.some((s) => s.hostname === host && s.namespace === pool.meta.namespace))
    return { status: "False", reason: "InvalidExtensionRef", message: `Referenced ExtensionRef not found ${ref.name}` }
  return { status: "True", reason: "ResolvedRefs", message: "Referenced ExtensionRef resolved successfully" }
}

/**
 * Where a backendRef to a pool goes (already granted): the first port of its shadow Service.
 * The extension off is an unsupported kind; a host name instead of the pool's name fails the
 * rule; a missing pool or shadow Service, or a pool whose picker has no port, fails its share.
 */
export const resolveInferencePool = (
  ref: BackendRef,
  namespace: string,
  pools: InferencePools | undefined,
  findShadow: (host: string) => Service | undefined,
  domainSuffix: string,
): ResolvedBackend => {
  const fail = (reason: string, message: string, malformed?: boolean): ResolvedBackend => ({
    ok: false,
    problem: { reason, message },
    ...(malformed === true ? { malformed } : {}),
  })
  if (pools?.enabled !== true)
    return fail(
      Reason.InvalidKind,
      "InferencePool is not enabled. To enable, set ENABLE_GATEWAY_API_INFERENCE_EXTENSION to true in mesh-discovery",
    )
  if (ref.name.includes("."))
    return fail(
      Reason.InvalidDestination,
      "InferencePool.Name invalid; the name of the InferencePool must be used, not the hostname.",
      true,
    )
  const pool = pools.byKey.get(`${namespace}/${ref.name}`)
  if (pool === undefined) return fail(Reason.BackendNotFound, `backend(${ref.name}) not found`)
  const host = serviceHost(inferencePoolServiceName(ref.name), namespace, domainSuffix)
  const shadow = findShadow(host)
  if (shadow === undefined) return fail(Reason.BackendNotFound, `backend(${host}) not found`)
  if (endpointPickerOf(pool, domainSuffix) === undefined)
    return fail(Reason.InvalidDestination, "InferencePool service invalid, extensionRef labels not found")
  const first = shadow.ports[0]
  return {
    ok: true,
    destination: { host, ...(first !== undefined ? { port: { number: first.port } } : {}) },
    weight: ref.weight ?? 1,
  }
}

/** The endpoint picker of every pool's shadow host, for `withEndpointPickers`. */
export const pickersByShadowHost = (
  pools: InferencePools,
  domainSuffix: string,
): ReadonlyMap<string, EndpointPicker> => {
  const out = new Map<string, EndpointPicker>()
  if (!pools.enabled) return out
  for (const pool of pools.byKey.values()) {
    const picker = endpointPickerOf(pool, domainSuffix)
    if (picker !== undefined)
      out.set(serviceHost(inferencePoolServiceName(pool.meta.name), pool.meta.namespace, domainSuffix), picker)
  }
  return out
}
