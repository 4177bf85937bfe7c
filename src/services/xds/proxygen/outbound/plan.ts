/**
 * The outbound plan of a sidecar: which listeners (`0.0.0.0_80`, `10.0.0.5_3306`, ...) it gets,
 * what each holds (an HTTP chain to a route configuration, SNI chains, a TCP chain) and which
 * route configurations exist, from the services of its scope and the Sidecar's egress listeners.
 * Conflicts are settled here, as the reference does, and counted: two TCP services on one address
 * and port keep the first (oldest, then by host name); an HTTP port on the wildcard address wins
 * over a TCP service without a VIP there. A headless service (resolution NONE) has no VIP: its
 * TCP and TLS ports get a listener per endpoint address instead, as the reference builds them,
 * so a connection to one pod IP reaches that service's chain rather than passthrough. The plan
 * is small data, built once per push and scope
 * key; the listener and route builders turn it into protos only when asked.
 */
import type { Protocol, Service } from "../../../registry/model.js"
import { parseProtocol } from "../../../registry/model.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { tcpRouteCluster, tlsRoutes, virtualServiceKey } from "../routes/index.js"
import { egressAdmits, proxyScope } from "../scope.js"
import { listenerName } from "../well-known.js"
import {
  noticeSink,
  serviceClusterTarget,
  type TcpTarget,
  type VirtualServiceIndex,
  virtualServiceFor,
  virtualServiceIndex,
} from "./route-deps.js"

export const WILDCARD = "0.0.0.0"
/** Where listeners bind when the proxy binds them itself (no capture): the reference's outbound bind address. */
export const LOCALHOST = "127.0.0.1"

export type TrafficPolicy = "ALLOW_ANY" | "REGISTRY_ONLY"

export interface TlsChainPlan {
  readonly serverNames: ReadonlyArray<string>
  readonly target: TcpTarget
}

export interface ListenerPlan {
  readonly name: string
  readonly address: string
  readonly port: number
  readonly bindToPort: boolean
  /** The route configuration of the HTTP chain (sniffed: HTTP/1.1 or h2c), when the listener has one. */
  httpRoute?: string
  readonly tls: Array<TlsChainPlan>
  /** The chain taking what no other chain matches; without one, unmatched traffic passes through (or not). */
  tcp?: { readonly target: TcpTarget; readonly explicit: boolean } | undefined
  /** What the bytes depend on beyond the fields above: service and VirtualService fingerprints. */
  readonly deps: Set<string>
}

/** A route configuration: a port's (`"80"`) or one service port's (`"host:port"`, sniffed VIP listeners). */
export interface RoutePlan {
  readonly name: string
  readonly port: number
  readonly hosts: Array<string>
}

export interface OutboundConflicts {
  /** `pilot_conflict_outbound_listener_tcp_over_current_tcp`: TCP (or SNI) chains dropped for an earlier one. */
  readonly tcpOverCurrentTcp: number
  /** TCP services without a VIP dropped because an HTTP port shares their wildcard listener. */
  readonly tcpOverCurrentHttp: number
}

export interface OutboundPlan {
  readonly trafficPolicy: TrafficPolicy
  readonly listeners: ReadonlyArray<ListenerPlan>
  readonly routes: ReadonlyMap<string, RoutePlan>
  readonly conflicts: OutboundConflicts
  readonly index: VirtualServiceIndex
  /** What the plan was built from: proxies with the same plan key get the same plan. */
  readonly key: string
  /** What the TCP/TLS routes of the VirtualServices read had to say. */
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

const HTTP_FAMILY: ReadonlySet<Protocol> = new Set(["HTTP", "HTTP2", "GRPC", "GRPC-Web", "HTTP_PROXY"])
const TLS_FAMILY: ReadonlySet<Protocol> = new Set(["TLS", "HTTPS"])

type PortClass = "http" | "auto" | "tls" | "tcp" | "none"

const classOf = (protocol: Protocol): PortClass =>
  HTTP_FAMILY.has(protocol)
    ? "http"
    : protocol === "UNSUPPORTED"
      ? "auto"
      : TLS_FAMILY.has(protocol)
        ? "tls"
        : protocol === "UDP"
          ? "none"
          : "tcp"

/** One group of services listened for alike: a Sidecar egress listener, or the whole scope. */
interface EgressGroup {
  readonly services: ReadonlyArray<Service>
  /** Only this port (0: every port of the services not claimed by another group). */
  readonly port: number
  /** The egress listener's protocol, overriding the services' (undefined: theirs). */
  readonly protocol?: Protocol
  readonly bind: string
  readonly bindToPort: boolean
}

const byAgeThenHost = (a: Service, b: Service): number => {
  const ta = a.creationTimestamp ?? ""
  const tb = b.creationTimestamp ?? ""
  if (ta !== tb) return ta < tb ? -1 : 1
  return a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0
}

const egressGroups = (push: PushContext, proxy: ProxyView): ReadonlyArray<EgressGroup> => {
  const scope = proxyScope(push, proxy)
  const services = [...scope.services].sort(byAgeThenHost)
  const noCapture = proxy.interceptionMode === "NONE"
  const raw = scope.sidecar?.spec.egress ?? []
  if (raw.length === 0) return [{ services, port: 0, bind: noCapture ? LOCALHOST : WILDCARD, bindToPort: noCapture }]
  return raw.flatMap((listener, i): ReadonlyArray<EgressGroup> => {
    const egress = scope.egress[i]
    const bind = listener.bind ?? ""
    // Unix domain socket egress listeners are not built (yet): nothing to listen on.
    if (egress === undefined || bind.startsWith("unix://")) return []
    const bindToPort = noCapture || listener.captureMode === "NONE"
    const protocol = listener.port?.protocol !== undefined ? parseProtocol(listener.port.protocol) : undefined
    return [
      {
        services: services.filter((s) => egressAdmits(egress, s)),
        port: listener.port?.number ?? 0,
        ...(protocol !== undefined ? { protocol } : {}),
        bind: bind !== "" ? bind : bindToPort ? LOCALHOST : WILDCARD,
        bindToPort,
      },
    ]
  })
}

/** The outbound traffic policy of the proxy: its Sidecar's, else the mesh's. */
export const trafficPolicyOf = (push: PushContext, proxy: ProxyView): TrafficPolicy =>
  proxyScope(push, proxy).sidecar?.spec.outboundTrafficPolicy?.mode ?? push.options.proxy.outboundTrafficPolicy

const plans: LocalSlot<Map<string, OutboundPlan>, PushContext> = { make: () => new Map() }

/**
 * What a plan depends on besides the push: the scope, the namespace (VirtualService visibility,
 * short host names), the capture mode, and the workload labels only when a VirtualService
 * matches on them. Replicas and workloads alike in a namespace share one plan.
 */
const planKey = (push: PushContext, proxy: ProxyView, index: VirtualServiceIndex): string =>
  `${proxyScope(push, proxy).key}|${proxy.namespace}|${proxy.interceptionMode}|${
    index.labelDependent ? JSON.stringify(Object.entries(proxy.labels).sort(([a], [b]) => (a < b ? -1 : 1))) : ""
  }`

/** The outbound plan of `proxy` (memoised per push and plan key). */
export const outboundPlan = (push: PushContext, proxy: ProxyView): OutboundPlan => {
  const byKey = push.local(plans)
  const index = virtualServiceIndex(push, proxy)
  const key = planKey(push, proxy, index)
  const cached = byKey.get(key)
  if (cached !== undefined) return cached
  const plan = buildPlan(push, proxy, index, key)
  byKey.set(key, plan)
  return plan
}

const buildPlan = (push: PushContext, proxy: ProxyView, index: VirtualServiceIndex, key: string): OutboundPlan => {
  const listeners = new Map<string, ListenerPlan>()
  const routes = new Map<string, RoutePlan>()
  let tcpOverCurrentTcp = 0
  let tcpOverCurrentHttp = 0

  const listenerAt = (address: string, port: number, bindToPort: boolean): ListenerPlan => {
    const name = listenerName(address, port)
    let listener = listeners.get(name)
    if (listener === undefined) {
      listener = { name, address, port, bindToPort, tls: [], deps: new Set() }
      listeners.set(name, listener)
    }
    return listener
  }
  const routeFor = (name: string, port: number, host: string): void => {
    let route = routes.get(name)
    if (route === undefined) {
      route = { name, port, hosts: [] }
      routes.set(name, route)
    }
    if (!route.hosts.includes(host)) route.hosts.push(host)
  }
  const sink = noticeSink()
  const source = { sourceLabels: proxy.labels, sourceNamespace: proxy.namespace }
  const vsOf = (host: string) => virtualServiceFor(index, host)
  const depend = (listener: ListenerPlan, host: string): void => {
    listener.deps.add(`${host}=${push.fingerprint("service", host)}`)
    const vs = virtualServiceFor(index, host)
    if (vs !== undefined) listener.deps.add(`vs:${virtualServiceKey(push, vs)}`)
  }
  /** The VirtualService's first applying `tcp` route, else the service port's cluster. */
  const serviceTarget = (service: Service, port: number, vip: string | undefined): TcpTarget => {
    const vs = vsOf(service.hostname)
    const route = vs !== undefined ? tcpRouteCluster(push, vs, port, vip, source) : undefined
    if (route === undefined) return serviceClusterTarget(service.hostname, port)
    sink.add(route.warnings)
    return { upstream: route.tcpProxy, statPrefix: route.clusters[0] ?? service.hostname }
  }
  const sniRoutes = (service: Service, port: number): ReadonlyArray<TlsChainPlan> => {
    const vs = vsOf(service.hostname)
    if (vs === undefined) return []
    return tlsRoutes(push, vs, port, source).map((route) => {
      sink.add(route.warnings)
      return {
        serverNames: route.sniHosts,
        target: { upstream: route.tcpProxy, statPrefix: route.clusters[0] ?? service.hostname },
      }
    })
  }
  const takeTcp = (listener: ListenerPlan, service: Service, port: number, explicit: boolean): void => {
    if (explicit && listener.httpRoute !== undefined && listener.address === WILDCARD) {
      tcpOverCurrentHttp++
      return
    }
    if (listener.tcp !== undefined) {
      tcpOverCurrentTcp++
      return
    }
    const vip = listener.address === WILDCARD || listener.address === LOCALHOST ? undefined : listener.address
    listener.tcp = { target: serviceTarget(service, port, vip), explicit }
    depend(listener, service.hostname)
  }
  const addTls = (listener: ListenerPlan, chains: ReadonlyArray<TlsChainPlan>, host: string): void => {
    const taken = new Set(listener.tls.flatMap((c) => c.serverNames))
    for (const chain of chains) {
      const serverNames = chain.serverNames.filter((n) => !taken.has(n))
      if (serverNames.length < chain.serverNames.length) tcpOverCurrentTcp++
      if (serverNames.length === 0) continue
      for (const n of serverNames) taken.add(n)
      listener.tls.push({ serverNames, target: chain.target })
    }
    depend(listener, host)
  }

  const groups = egressGroups(push, proxy)
  const claimed = new Set(groups.filter((g) => g.port > 0).map((g) => g.port))
  for (const group of groups) {
    // Per-VIP listeners only where the capture rules deliver connections by original destination.
    const perVip = group.bind === WILDCARD && !group.bindToPort
    for (const service of group.services) {
      for (const servicePort of service.ports) {
        const port = servicePort.port
        if (group.port > 0 ? port !== group.port : claimed.has(port)) continue
        const kind = classOf(group.protocol ?? servicePort.protocol)
        const host = service.hostname
        const vips = perVip ? listenAddresses(push, service, servicePort.name, kind) : []
        if (kind === "http") {
          const listener = listenerAt(group.bind, port, group.bindToPort)
          if (listener.tcp?.explicit === true && listener.address === WILDCARD) {
            // An HTTP port wins the wildcard listener over a TCP service without a VIP.
            listener.tcp = undefined
            tcpOverCurrentHttp++
          }
          listener.httpRoute = String(port)
          routeFor(String(port), port, host)
        } else if (kind === "auto") {
          if (vips.length > 0) {
            for (const vip of vips) {
              const listener = listenerAt(vip, port, group.bindToPort)
              if (listener.tcp !== undefined) {
                tcpOverCurrentTcp++
                continue
              }
              const route = `${host}:${port}`
              listener.httpRoute = route
              routeFor(route, port, host)
              takeTcp(listener, service, port, false)
            }
          } else {
            const listener = listenerAt(group.bind, port, group.bindToPort)
            listener.httpRoute ??= String(port)
            routeFor(listener.httpRoute, port, host)
            takeTcp(listener, service, port, false)
          }
        } else if (kind === "tls") {
          const sni = sniRoutes(service, port)
          if (vips.length > 0) {
            for (const vip of vips) {
              const listener = listenerAt(vip, port, group.bindToPort)
              addTls(listener, sni, host)
              takeTcp(listener, service, port, true)
            }
          } else {
            const listener = listenerAt(group.bind, port, group.bindToPort)
            // Without a VIP, the SNI tells the services of a wildcard listener apart.
            addTls(
              listener,
              sni.length > 0 ? sni : [{ serverNames: [host], target: serviceTarget(service, port, undefined) }],
              host,
            )
          }
        } else if (kind === "tcp") {
          if (vips.length > 0)
            for (const vip of vips) takeTcp(listenerAt(vip, port, group.bindToPort), service, port, true)
          else takeTcp(listenerAt(group.bind, port, group.bindToPort), service, port, true)
        }
      }
    }
  }
  return {
    trafficPolicy: trafficPolicyOf(push, proxy),
    listeners: [...listeners.values()],
    routes,
    conflicts: { tcpOverCurrentTcp, tcpOverCurrentHttp },
    index,
    key,
    warnings: sink.notices,
  }
}

/**
 * Where a service port gets per-address listeners: its VIPs; for a headless service's TCP, TLS
 * and sniffed ports, its endpoints' addresses (HTTP ports share the wildcard listener anyway).
 */
const listenAddresses = (
  push: PushContext,
  service: Service,
  portName: string,
  kind: PortClass,
): ReadonlyArray<string> => {
  if (service.addresses.length > 0 || service.resolution !== "NONE" || kind === "http" || kind === "none")
    return service.addresses
  const addresses = new Set<string>()
  for (const endpoint of push.endpointsByHost.get(service.hostname) ?? [])
    if (endpoint.servicePortName === portName && endpoint.healthStatus !== "UNHEALTHY") addresses.add(endpoint.address)
  return [...addresses].sort()
}

/**
 * A digest of the plan of one listener: its address, chains and targets and the fingerprints of
 * the services and VirtualServices they came from. Not memoised: its one caller runs once per
 * plan (`generateOutboundListeners`), and a plan's listeners are its own.
 */
export const listenerPlanDigest = (listener: ListenerPlan): string =>
  digest(
    JSON.stringify([
      listener.name,
      listener.bindToPort,
      listener.httpRoute ?? "",
      listener.tls,
      listener.tcp ?? null,
      [...listener.deps].sort(),
    ]),
  )
