/**
 * Which VirtualServices a proxy's routes come from: those exported to its namespace
 * (`exportTo`, mesh config `defaultVirtualServiceExportTo`) and bound to the mesh (sidecars) or
 * to one of its gateways (routers), with delegate VirtualServices merged into their roots.
 *
 * Both are memoised per PushContext (WeakMap): every proxy of a namespace shares one array of
 * the same objects, so the route translation below can memoise per VirtualService object too.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { HTTPRoute, VirtualServiceSpec } from "../../../config-model/schemas/virtual-service.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { byAge, type PushContext, resolveHost } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { exportedTo } from "../scope.js"
import { type HttpMatch, mergeHttpRoute } from "./delegate.js"

export type VirtualServiceResource = ConfigResource<VirtualServiceSpec>

/** The mesh pseudo-gateway: a VirtualService bound to it applies to sidecars. */
export const MESH_GATEWAY = "mesh"

const describe = (vs: VirtualServiceResource): string => `VirtualService ${vs.meta.namespace}/${vs.meta.name}`

/**
 * A VirtualService `gateways` entry as `namespace/name` (`mesh` kept): a short name is in the
 * VirtualService's namespace; the legacy `name.namespace.svc.<suffix>` form is read too.
 */
export const resolveGatewayName = (gateway: string, namespace: string): string => {
  if (gateway === MESH_GATEWAY || gateway.includes("/")) return gateway
  const dot = gateway.indexOf(".")
  if (dot < 0) return `${namespace}/${gateway}`
  const rest = gateway.slice(dot + 1)
  const ns = rest.includes(".") ? rest.slice(0, rest.indexOf(".")) : rest
  return `${ns}/${gateway.slice(0, dot)}`
}

/** The gateways a VirtualService is bound to, resolved; `mesh` alone when it names none. */
export const boundGateways = (vs: VirtualServiceResource): ReadonlyArray<string> => {
  const gateways = vs.spec.gateways ?? []
  return gateways.length === 0 ? [MESH_GATEWAY] : gateways.map((g) => resolveGatewayName(g, vs.meta.namespace))
}

// ---------------------------------------------------------------------------------------------
// Delegates

interface Resolved {
  /** Root VirtualServices (those with hosts), oldest first, delegates merged in. */
  readonly roots: ReadonlyArray<VirtualServiceResource>
  readonly warnings: ReadonlyArray<GeneratorNotice>
  /** The delegates merged into a root: by the merged object (one of `roots`). */
  readonly delegates: WeakMap<VirtualServiceResource, ReadonlyArray<VirtualServiceResource>>
}

/** Delegate routes are written relative to the delegate's namespace: made absolute before merging. */
const absoluteRoute = (route: HTTPRoute, namespace: string, domainSuffix: string): HTTPRoute => {
  const fqdn = <D extends { readonly host: string }>(d: D): D => ({
    ...d,
    host: resolveHost(d.host, namespace, domainSuffix),
  })
  const out: Record<string, unknown> = { ...route }
  if (route.route !== undefined) out.route = route.route.map((r) => ({ ...r, destination: fqdn(r.destination) }))
  if (route.mirror !== undefined) out.mirror = fqdn(route.mirror)
  if (route.mirrors !== undefined) out.mirrors = route.mirrors.map((m) => ({ ...m, destination: fqdn(m.destination) }))
  if (route.match !== undefined)
    out.match = route.match.map(
      (m): HttpMatch =>
        m.gateways === undefined ? m : { ...m, gateways: m.gateways.map((g) => resolveGatewayName(g, namespace)) },
    )
  return out as HTTPRoute
}

const resolveDelegatesOf = (push: PushContext): Resolved => {
  const all = [...push.input.virtualServices].sort(byAge)
  const defaults = push.options.proxy.defaultVirtualServiceExportTo
  const suffix = push.options.domainSuffix
  // Delegates are the VirtualServices without hosts; only they can be referenced.
  const delegates = new Map<string, VirtualServiceResource>()
  for (const vs of all)
    if ((vs.spec.hosts ?? []).length === 0) {
      const key = `${vs.meta.namespace}/${vs.meta.name}`
      if (!delegates.has(key)) delegates.set(key, vs)
    }
  const warnings: Array<GeneratorNotice> = []
  const delegatesOfMerged = new WeakMap<VirtualServiceResource, ReadonlyArray<VirtualServiceResource>>()
  const roots = all
    .filter((vs) => (vs.spec.hosts ?? []).length > 0)
    .map((root) => {
      const http = root.spec.http ?? []
      if (!http.some((r) => r.delegate !== undefined)) return root
      const used: Array<VirtualServiceResource> = []
      const merged = http.flatMap((route, i): ReadonlyArray<HTTPRoute> => {
        if (route.delegate === undefined) return [route]
        const namespace = route.delegate.namespace || root.meta.namespace
        const name = route.delegate.name ?? ""
        const delegate = delegates.get(`${namespace}/${name}`)
        if (
          delegate === undefined ||
          !exportedTo(delegate.spec.exportTo ?? [], delegate.meta.namespace, root.meta.namespace, defaults)
        ) {
          warnings.push({
            level: "warning",
            scope: "model",
            message: `${describe(root)}: field http[${i}].delegate: delegate VirtualService ${namespace}/${name} not found (or not exported to ${root.meta.namespace}); route dropped`,
          })
          return []
        }
        used.push(delegate)
        return (delegate.spec.http ?? []).flatMap((leaf, j): ReadonlyArray<HTTPRoute> => {
          if (leaf.delegate !== undefined) {
            warnings.push({
              level: "warning",
              scope: "model",
              message: `${describe(delegate)}: field http[${j}].delegate: a delegate cannot delegate again; route dropped`,
            })
            return []
          }
          const out = mergeHttpRoute(route, absoluteRoute(leaf, delegate.meta.namespace, suffix))
          if (out === undefined)
            warnings.push({
              level: "info",
              scope: "model",
              message: `${describe(delegate)}: field http[${j}].match: conflicts with the match of ${describe(root)} http[${i}]; route dropped`,
            })
          return out === undefined ? [] : [out]
        })
      })
      const result: VirtualServiceResource = { ...root, spec: { ...root.spec, http: merged } }
      delegatesOfMerged.set(result, used)
      return result
    })
  return { roots, warnings, delegates: delegatesOfMerged }
}

/** Resolved once per push. */
const resolvedSlot: LocalSlot<Resolved, PushContext> = { make: resolveDelegatesOf }

const resolveDelegates = (push: PushContext): Resolved => push.local(resolvedSlot)

/** What resolving delegate VirtualServices noticed (missing delegates, dropped routes). */
export const virtualServiceWarnings = (push: PushContext): ReadonlyArray<GeneratorNotice> =>
  resolveDelegates(push).warnings

/** The delegate VirtualServices merged into `vs` (a result of the functions below for `push`); empty for most. */
export const delegatesOf = (push: PushContext, vs: VirtualServiceResource): ReadonlyArray<VirtualServiceResource> =>
  resolveDelegates(push).delegates.get(vs) ?? []

// ---------------------------------------------------------------------------------------------
// Visibility

const visibleByPush: LocalSlot<Map<string, ReadonlyArray<VirtualServiceResource>>, PushContext> = {
  make: () => new Map(),
}

const memoised = (
  push: PushContext,
  key: string,
  compute: () => ReadonlyArray<VirtualServiceResource>,
): ReadonlyArray<VirtualServiceResource> => {
  const byKey = push.local(visibleByPush)
  let value = byKey.get(key)
  if (value === undefined) {
    value = compute()
    byKey.set(key, value)
  }
  return value
}

const visibleIn = (push: PushContext, namespace: string) => (vs: VirtualServiceResource) =>
  exportedTo(vs.spec.exportTo ?? [], vs.meta.namespace, namespace, push.options.proxy.defaultVirtualServiceExportTo)

/**
 * The VirtualServices a sidecar's routes come from: exported to its namespace, bound to the mesh
 * (`gateways` empty or naming `mesh`), delegates merged; oldest first (the reference's order).
 */
export const virtualServicesForProxy = (
  push: PushContext,
  proxy: Pick<ProxyView, "namespace">,
): ReadonlyArray<VirtualServiceResource> =>
  memoised(push, `mesh\u0000${proxy.namespace}`, () =>
    resolveDelegates(push).roots.filter(
      (vs) => visibleIn(push, proxy.namespace)(vs) && boundGateways(vs).includes(MESH_GATEWAY),
    ),
  )

/**
 * The VirtualServices bound to any of `gateways` (`namespace/name`) and exported to the gateway
 * proxy's namespace, delegates merged; oldest first.
 */
export const gatewayVirtualServices = (
  push: PushContext,
  gateways: ReadonlyArray<string>,
  proxyNamespace: string,
): ReadonlyArray<VirtualServiceResource> => {
  const wanted = [...new Set(gateways)].sort()
  return memoised(push, `gw\u0000${proxyNamespace}\u0000${wanted.join(",")}`, () =>
    resolveDelegates(push).roots.filter(
      (vs) => visibleIn(push, proxyNamespace)(vs) && boundGateways(vs).some((g) => wanted.includes(g)),
    ),
  )
}
