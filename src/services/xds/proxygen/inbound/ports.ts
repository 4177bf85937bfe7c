/**
 * The ports a sidecar's inbound side serves: one per target port of its service instances, or,
 * when the Sidecar resource that applies to it lists `ingress` listeners, exactly those (the
 * reference replaces the service ports with them). Each port says how the chains match it
 * (protocol class), which inbound cluster it forwards to and where that cluster sends traffic.
 *
 * Two instances on one target port with different protocol classes cannot share a filter chain:
 * the first (lowest service port order, see service-instances.ts) is kept and the others are
 * counted (`pilot_conflict_inbound_listener`).
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { ServerTLSSettings } from "../../../config-model/schemas/gateway.js"
import type { SidecarSpec } from "../../../config-model/schemas/sidecar.js"
import { type Protocol, parseProtocol } from "../../../registry/model.js"
import type { LocalSlot } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { proxyScope } from "../scope.js"
import { instancesKey, serviceInstances } from "../service-instances.js"
import { inboundClusterName } from "../well-known.js"

/** How a port's chains are matched: HTTP (connection manager), TCP (tcp_proxy) or detected. */
export type ProtocolClass = "http" | "tcp" | "auto"

/** Where an inbound cluster sends traffic. */
export type InboundEndpoint =
  /** A fixed address (loopback): a STATIC cluster. */
  | { readonly kind: "static"; readonly address: string; readonly port: number }
  /** The connection's original destination (the workload's own address), optionally another port. */
  | { readonly kind: "original"; readonly port?: number }
  /** A unix domain socket. */
  | { readonly kind: "pipe"; readonly path: string }

export interface InboundPort {
  /** The port the workload is reached on: the chains match it as `destination_port`. */
  readonly port: number
  readonly protocol: Protocol
  readonly protocolClass: ProtocolClass
  /** `inbound|<port>||`. */
  readonly cluster: string
  readonly endpoint: InboundEndpoint
  /** The service (host and port) the port serves, for the route decorator; absent for Sidecar ingress. */
  readonly service?: { readonly host: string; readonly port: number }
  /**
   * Sidecar ingress `tls`: the workload's own TLS where the port's mTLS mode is DISABLE. With it
   * the port's protocol class is the one after TLS termination (HTTPS is served as HTTP).
   */
  readonly tls?: ServerTLSSettings
  /** Sidecar ingress: the listener address it names (`bind`), else the proxy's own. */
  readonly sidecarIngress?: { readonly bind?: string }
  /** Sidecar ingress listeners name their Sidecar (`ns/name ingress[i]`), for warnings. */
  readonly origin?: string
}

export interface InboundPorts {
  readonly ports: ReadonlyArray<InboundPort>
  /** Instances dropped because another instance on the same target port has another protocol class. */
  readonly conflicts: number
  readonly warnings: ReadonlyArray<string>
  /** What the ports were computed from (instances or the Sidecar's ingress): a cache key part. */
  readonly key: string
}

/** UDP is not proxied: undefined. */
export const protocolClass = (protocol: Protocol): ProtocolClass | undefined => {
  switch (protocol) {
    case "HTTP":
    case "HTTP2":
    case "GRPC":
    case "GRPC-Web":
    case "HTTP_PROXY":
      return "http"
    case "TCP":
    case "HTTPS":
    case "TLS":
    case "MONGO":
    case "REDIS":
    case "MYSQL":
      return "tcp"
    case "UDP":
      return undefined
    default:
      return "auto"
  }
}

const UNIX_PREFIX = "unix://"

/**
 * A Sidecar ingress `defaultEndpoint`: `127.0.0.1:<port>`/`[::1]:<port>` is a fixed loopback
 * address; `0.0.0.0:<port>`/`[::]:<port>` or unset means the workload's own address (the
 * reference forwards to the instance IP), so the original destination with the port replaced.
 */
const ingressEndpoint = (defaultEndpoint: string | undefined, listenPort: number): InboundEndpoint => {
  const ep = defaultEndpoint ?? ""
  if (ep === "") return { kind: "original" }
  if (ep.startsWith(UNIX_PREFIX)) return { kind: "pipe", path: ep.slice(UNIX_PREFIX.length) }
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(ep)
  if (m === null) return { kind: "original" }
  const host = m[1] ?? m[2] ?? ""
  const port = Number(m[3])
  if (host === "127.0.0.1" || host === "::1") return { kind: "static", address: host, port }
  return port === listenPort ? { kind: "original" } : { kind: "original", port }
}

const fromIngress = (sidecar: ConfigResource<SidecarSpec>): InboundPorts => {
  const warnings: Array<string> = []
  const ports: Array<InboundPort> = []
  const seen = new Set<number>()
  const id = `Sidecar ${sidecar.meta.namespace}/${sidecar.meta.name}`
  ;(sidecar.spec.ingress ?? []).forEach((ingress, i) => {
    const port = ingress.port.number ?? 0
    const protocol = parseProtocol(ingress.port.protocol)
    const klass = protocolClass(protocol)
    if (port <= 0 || klass === undefined || seen.has(port)) {
      warnings.push(`${id} field ingress[${i}].port: port ${port} (${protocol}) cannot be served inbound, skipped`)
      return
    }
    seen.add(port)
    // TLS the sidecar terminates leaves the protocol inside it: HTTPS is HTTP, TLS is TCP.
    const served = ingress.tls !== undefined && protocol === "HTTPS" ? "http" : klass
    const bind = ingress.bind ?? ""
    ports.push({
      port,
      protocol,
      protocolClass: served,
      cluster: inboundClusterName(port),
      endpoint: ingressEndpoint(ingress.defaultEndpoint, port),
      ...(ingress.tls !== undefined ? { tls: ingress.tls } : {}),
      sidecarIngress: bind !== "" ? { bind } : {},
      origin: `${id} ingress[${i}]`,
    })
  })
  return {
    ports: ports.sort((a, b) => a.port - b.port),
    conflicts: 0,
    warnings,
    key: `sidecar:${sidecar.meta.namespace}/${sidecar.meta.name}:${JSON.stringify(sidecar.spec.ingress)}`,
  }
}

const memo: LocalSlot<Map<string, InboundPorts>, PushContext> = { make: () => new Map() }

/** The inbound ports of a sidecar (memoised per push, scope and instances). */
export const inboundPorts = (push: PushContext, proxy: ProxyView): InboundPorts => {
  const sidecar = proxyScope(push, proxy).sidecar
  if (sidecar !== undefined && (sidecar.spec.ingress?.length ?? 0) > 0) return fromIngress(sidecar)
  const instances = serviceInstances(push, proxy)
  const key = instancesKey(instances)
  const byKey = push.local(memo)
  const cached = byKey.get(key)
  if (cached !== undefined) return cached
  const ports: Array<InboundPort> = []
  const byPort = new Map<number, InboundPort>()
  let conflicts = 0
  for (const instance of instances) {
    const klass = protocolClass(instance.servicePort.protocol)
    if (klass === undefined) continue
    const existing = byPort.get(instance.targetPort)
    if (existing !== undefined) {
      if (existing.protocolClass !== klass) conflicts++
      continue
    }
    const port: InboundPort = {
      port: instance.targetPort,
      protocol: instance.servicePort.protocol,
      protocolClass: klass,
      cluster: inboundClusterName(instance.targetPort),
      endpoint: { kind: "static", address: "127.0.0.1", port: instance.targetPort },
      service: { host: instance.service.hostname, port: instance.servicePort.port },
    }
    byPort.set(instance.targetPort, port)
    ports.push(port)
  }
  const result: InboundPorts = { ports, conflicts, warnings: [], key: `instances:${key}` }
  byKey.set(key, result)
  return result
}
