/**
 * What the outbound generators take from VirtualServices (through the routes helper): the
 * sidecar's VirtualServices indexed by host, which one routes a host, and the TCP proxy target
 * of a service port.
 */
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { type PushContext, resolveHost } from "../../model/push-context.js"
import type { TcpProxy } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { type VirtualServiceResource, virtualServicesForProxy } from "../routes/index.js"
import { type EgressScope, hostMatches, proxyScope } from "../scope.js"
import { outboundClusterName } from "../well-known.js"

export type { VirtualServiceResource } from "../routes/index.js"

/** Where a TCP proxy sends a connection: the tcp_proxy cluster fields, and its stat prefix. */
export interface TcpTarget {
  /** `{cluster}` or `{weighted_clusters}`. */
  readonly upstream: TcpProxy
  readonly statPrefix: string
}

export const clusterTarget = (cluster: string): TcpTarget => ({ upstream: { cluster }, statPrefix: cluster })

/** The default target of a service port: its cluster. */
export const serviceClusterTarget = (host: string, port: number): TcpTarget =>
  clusterTarget(outboundClusterName(host, port))

/** The sidecar's VirtualServices by FQDN host (the oldest wins), and their wildcard hosts. */
export interface VirtualServiceIndex {
  /** The VirtualServices, oldest first, with their hosts as FQDNs. */
  readonly virtualServices: ReadonlyArray<{
    readonly vs: VirtualServiceResource
    readonly hosts: ReadonlyArray<string>
  }>
  readonly byHost: ReadonlyMap<string, VirtualServiceResource>
  /** Wildcard hosts (`*.example.com`), in VirtualService age order. */
  readonly wildcards: ReadonlyArray<{ readonly host: string; readonly vs: VirtualServiceResource }>
  /** Whether a route of some VirtualService matches on client labels (output then depends on them). */
  readonly labelDependent: boolean
}

/** Whether any route of the VirtualService matches on the client's labels. */
export const usesSourceLabels = (vs: VirtualServiceResource): boolean =>
  [...(vs.spec.http ?? []), ...(vs.spec.tcp ?? []), ...(vs.spec.tls ?? [])].some((route) =>
    (route.match ?? []).some((m) => m.sourceLabels !== undefined && Object.keys(m.sourceLabels).length > 0),
  )

const indexes: LocalSlot<Map<string, VirtualServiceIndex>, PushContext> = { make: () => new Map() }

/** Whether two host names can name the same host (either may be a wildcard). */
export const hostsOverlap = (a: string, b: string): boolean => hostMatches(a, b) || hostMatches(b, a)

/**
 * Whether a Sidecar's egress listeners import a VirtualService: one of its hosts overlaps a host
 * an egress listener imports from the VirtualService's namespace (or from every namespace). The
 * whole VirtualService is imported then, every host of it.
 */
const imports = (egress: ReadonlyArray<EgressScope>, vs: VirtualServiceResource, hosts: ReadonlyArray<string>) =>
  egress.some((e) =>
    e.hosts.some(
      (h) =>
        h.namespace !== "~" &&
        (h.namespace === "*" || h.namespace === vs.meta.namespace) &&
        hosts.some((host) => hostsOverlap(h.host, host)),
    ),
  )

/**
 * The index of the VirtualServices `proxy` sees: exported to its namespace and imported by its
 * Sidecar's egress hosts (memoised per push, namespace and scope).
 */
export const virtualServiceIndex = (push: PushContext, proxy: ProxyView): VirtualServiceIndex => {
  const byNamespace = push.local(indexes)
  const scope = proxyScope(push, proxy)
  const memoKey = `${proxy.namespace}\u0000${scope.key}`
  const cached = byNamespace.get(memoKey)
  if (cached !== undefined) return cached
  let labelDependent = false
  const virtualServices: Array<{ vs: VirtualServiceResource; hosts: ReadonlyArray<string> }> = []
  const byHost = new Map<string, VirtualServiceResource>()
  const wildcards: Array<{ host: string; vs: VirtualServiceResource }> = []
  for (const vs of virtualServicesForProxy(push, proxy)) {
    const hosts = (vs.spec.hosts ?? []).map((raw) => resolveHost(raw, vs.meta.namespace, push.options.domainSuffix))
    if (scope.sidecar !== undefined && !imports(scope.egress, vs, hosts)) continue
    virtualServices.push({ vs, hosts })
    if (usesSourceLabels(vs)) labelDependent = true
    for (const host of hosts) {
      if (byHost.has(host)) continue
      byHost.set(host, vs)
      if (host.startsWith("*")) wildcards.push({ host, vs })
    }
  }
  const index = { virtualServices, byHost, wildcards, labelDependent }
  byNamespace.set(memoKey, index)
  return index
}

/** The VirtualService routing `host`: the one naming it, else the one with the most specific wildcard host. */
export const virtualServiceFor = (index: VirtualServiceIndex, host: string): VirtualServiceResource | undefined => {
  const exact = index.byHost.get(host)
  if (exact !== undefined) return exact
  let best: { host: string; vs: VirtualServiceResource } | undefined
  for (const w of index.wildcards)
    if (hostMatches(w.host, host) && (best === undefined || w.host.length > best.host.length)) best = w
  return best?.vs
}

/** A notice collector: each text once. */
export const noticeSink = () => {
  const seen = new Set<string>()
  const notices: Array<GeneratorNotice> = []
  return {
    notices,
    add: (more: ReadonlyArray<GeneratorNotice>) => {
      for (const n of more)
        if (!seen.has(n.message)) {
          seen.add(n.message)
          notices.push(n)
        }
    },
  }
}
