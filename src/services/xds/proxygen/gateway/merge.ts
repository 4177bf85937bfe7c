/**
 * The Gateways a router proxy applies and their servers merged per listener (the reference's
 * "merged gateway"): a router listens on every port any selected Gateway names, and several
 * Gateways may share a port. Servers on one port merge when they can share one listener:
 * plain-text HTTP servers into one HTTP connection manager (one route configuration
 * `http.<port>`), TLS servers into SNI filter chains. What cannot share is dropped with a notice:
 * a TLS server repeating a host another TLS server on the port already has (the proxy rejects
 * two filter chains with the same match), a server whose protocol cannot share the port, a
 * second TCP server on a port.
 *
 * A Gateway applies to a router in one of two ways, as in the reference:
 * - by pod selector (legacy): a server port that is a port of a Service the router serves listens
 *   on the first such instance's target port, any other port as written;
 * - by the gateway-service annotation (Services named by hostname, in the Gateway's namespace):
 *   only when the router serves one of them, and each server port listens on the target ports of
 *   those Services' matching ports; a port none of them has gives no listener.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { GatewaySpec } from "../../../config-model/schemas/gateway.js"
import { Annotations } from "../../../constants.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { type ServiceInstance, serviceInstances } from "../service-instances.js"

export type GatewayServerSpec = GatewaySpec["servers"][number]
export type ServerTls = NonNullable<GatewayServerSpec["tls"]>
export type TlsMode = NonNullable<ServerTls["mode"]>

/** One Gateway server as the router applies it. */
export interface GatewayServer {
  /** The owning Gateway, `namespace/name`. */
  readonly gateway: string
  readonly gatewayName: string
  readonly gatewayNamespace: string
  /** The server's hosts with `./` made the Gateway's namespace and `*​/` dropped (`*​/*` is `*`). */
  readonly hosts: ReadonlyArray<string>
  /** The server's own port number (what VirtualService port matches compare with). */
  readonly port: number
  /** The port the router listens on (the service port translated to the target port). */
  readonly listenPort: number
  readonly portName: string
  /** The protocol, upper-cased as the reference parses it (HTTP, HTTPS, TLS, TCP, ...). */
  readonly protocol: string
  readonly bind: string
  readonly name: string
  readonly tls?: ServerTls
  /** TLS mode; PASSTHROUGH when `tls` leaves it unset (the proto default). */
  readonly tlsMode?: TlsMode
  /** The RDS name of an HTTP server (`http.<port>`, `https.<port>.<portName>.<gateway>.<namespace>`); empty otherwise. */
  readonly routeName: string
  /** The SNI names of a TLS server: its hosts without namespaces, sorted, unique. */
  readonly sniHosts: ReadonlyArray<string>
}

/** The servers sharing one listener (port and bind). */
export interface MergedPort {
  readonly listenPort: number
  readonly bind: string
  readonly servers: ReadonlyArray<GatewayServer>
}

export interface MergedGateway {
  /** The Gateways selecting the proxy, oldest first. */
  readonly gateways: ReadonlyArray<ConfigResource<GatewaySpec>>
  /** Their `namespace/name`s. */
  readonly names: ReadonlyArray<string>
  /** Listeners in the order their first server appears. */
  readonly ports: ReadonlyArray<MergedPort>
  /** HTTP servers by RDS name. */
  readonly serversByRouteName: ReadonlyMap<string, ReadonlyArray<GatewayServer>>
  /** The Gateways' content and the port translation: what the merge depends on. */
  readonly key: string
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

const HTTP_PROTOCOLS = new Set(["HTTP", "HTTP2", "GRPC", "GRPC-WEB", "HTTP_PROXY"])

export const isHttpProtocol = (protocol: string): boolean => HTTP_PROTOCOLS.has(protocol)

export const isPassthrough = (server: GatewayServer): boolean =>
  server.tlsMode === "PASSTHROUGH" || server.tlsMode === "AUTO_PASSTHROUGH"

/** A non-HTTP server with TLS settings (terminating or passing through). */
export const isTlsServer = (server: GatewayServer): boolean =>
  server.tls !== undefined && !isHttpProtocol(server.protocol)

/** An HTTP server, or an HTTPS server terminating TLS: served by an HTTP connection manager. */
export const isHttpServer = (server: GatewayServer): boolean =>
  isHttpProtocol(server.protocol) || (server.protocol === "HTTPS" && server.tls !== undefined && !isPassthrough(server))

export const isHttpsTerminating = (server: GatewayServer): boolean =>
  server.protocol === "HTTPS" && server.tls !== undefined && !isPassthrough(server)

/** `./host` → `<namespace>/host`, `*​/host` → `host`, `*​/*` → just `*` (the reference's sanitising). */
export const sanitizeHosts = (hosts: ReadonlyArray<string>, namespace: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const host of hosts) {
    const slash = host.indexOf("/")
    if (slash < 0) {
      out.push(host)
      continue
    }
    const ns = host.slice(0, slash)
    const name = host.slice(slash + 1)
    if (ns === ".") out.push(`${namespace}/${name}`)
    else if (ns === "*") {
      if (name === "*") return ["*"]
      out.push(name)
    } else out.push(host)
  }
  return out
}

/** A host without its `namespace/` part. */
export const bareHost = (host: string): string => {
  const slash = host.indexOf("/")
  return slash < 0 ? host : host.slice(slash + 1)
}

const routeNameOf = (
  protocol: string,
  passthrough: boolean,
  hasTls: boolean,
  port: number,
  listenPort: number,
  portName: string,
  gateway: ConfigResource<GatewaySpec>,
  bind: string,
): string => {
  const suffix = bind === "" ? "" : `.${bind}`
  if (isHttpProtocol(protocol)) return `http.${listenPort}${suffix}`
  if (protocol === "HTTPS" && hasTls && !passthrough)
    return `https.${port}.${portName}.${gateway.meta.name}.${gateway.meta.namespace}${suffix}`
  return ""
}

/** A Gateway applying to a router and how its server ports become the router's listen ports. */
export interface GatewayBinding {
  readonly gateway: ConfigResource<GatewaySpec>
  /** The listen ports of a server port: none when the Gateway's Services do not have it. */
  readonly listenPorts: (port: number) => ReadonlyArray<number>
  /** What the port translation depends on (for memo keys). */
  readonly key: string
}

/** The hostnames a Gateway's gateway-service annotation names; undefined without the annotation. */
export const gatewayServiceHosts = (gw: ConfigResource<GatewaySpec>): ReadonlySet<string> | undefined => {
  const value = gw.meta.annotations?.[Annotations.gatewayService]
  if (value === undefined) return undefined
  return new Set(
    value
      .split(",")
      .map((h) => h.trim())
      .filter((h) => h !== ""),
  )
}

const instanceKey = (instances: ReadonlyArray<ServiceInstance>): string =>
  instances.map((i) => `${i.service.hostname}:${i.servicePort.port}>${i.targetPort}`).join(",")

/**
 * The Gateways that apply to a router (in every namespace or only its own) with their port
 * translation: annotated ones when the router serves one of their Services, the others when their
 * selector ⊆ the router's labels (no selector: every router).
 */
export const gatewayBindings = (
  push: PushContext,
  proxy: ProxyView,
  instances: ReadonlyArray<ServiceInstance>,
): ReadonlyArray<GatewayBinding> => {
  const legacyTarget = new Map<number, number>()
  for (const i of instances)
    if (!legacyTarget.has(i.servicePort.port)) legacyTarget.set(i.servicePort.port, i.targetPort)
  const legacyKey = `legacy:${[...legacyTarget].join(",")}`
  const out: Array<GatewayBinding> = []
  for (const gw of push.proxyConfig.gateways) {
    if (push.options.proxy.scopeGatewayToNamespace && gw.meta.namespace !== proxy.namespace) continue
    const services = gatewayServiceHosts(gw)
    if (services !== undefined) {
      const mine = instances.filter(
        (i) => services.has(i.service.hostname) && i.service.namespace === gw.meta.namespace,
      )
      if (mine.length === 0) continue
      out.push({
        gateway: gw,
        listenPorts: (port) => [...new Set(mine.filter((i) => i.servicePort.port === port).map((i) => i.targetPort))],
        key: `services:${instanceKey(mine)}`,
      })
    } else if (matchesLabels(gw.spec.selector, proxy.labels))
      out.push({ gateway: gw, listenPorts: (port) => [legacyTarget.get(port) ?? port], key: legacyKey })
  }
  return out
}

const notice = (gateway: string, message: string): GeneratorNotice => ({
  level: "warning",
  scope: "gateway",
  message: `Gateway ${gateway}: ${message}`,
})

const portKey = (port: number, bind: string) => `${bind}|${port}`

const merged: LocalSlot<Map<string, MergedGateway>, PushContext> = { make: () => new Map() }

/**
 * The Gateways selecting `proxy` and their servers merged per listener (memoised per push for
 * the proxies that see the same: namespace, labels, service instances).
 */
export const gatewaysForProxy = (push: PushContext, proxy: ProxyView): MergedGateway => {
  const instances = serviceInstances(push, proxy)
  const memoKey = `${proxy.scopeKey}|${instanceKey(instances)}`
  const byKey = push.local(merged)
  const cached = byKey.get(memoKey)
  if (cached !== undefined) return cached
  const result = mergeGateways(gatewayBindings(push, proxy, instances))
  byKey.set(memoKey, result)
  return result
}

interface PortState {
  readonly listenPort: number
  readonly bind: string
  readonly servers: Array<GatewayServer>
  /** The first server's protocol when the port is plain text (HTTP or TCP); undefined for TLS ports. */
  readonly plainProtocol?: string
}

/** The reference's rule: an HTTP server joins a port whose first server is HTTP (or the same protocol). */
const canMerge = (incoming: string, existing: string): boolean =>
  (isHttpProtocol(incoming) || incoming === existing) && isHttpProtocol(existing)

export const mergeGateways = (bindings: ReadonlyArray<GatewayBinding>): MergedGateway => {
  const gateways = bindings.map((b) => b.gateway)
  const warnings: Array<GeneratorNotice> = []
  const ports = new Map<string, PortState>()
  const portsByNumber = new Map<number, Array<PortState>>()
  const serversByRouteName = new Map<string, Array<GatewayServer>>()
  // listen port → SNI host → bind: TLS servers may not repeat a host on one listener.
  const tlsHosts = new Map<number, Map<string, string>>()

  for (const binding of bindings) {
    const gw = binding.gateway
    const gateway = `${gw.meta.namespace}/${gw.meta.name}`
    const names = new Set<string>()
    for (const [index, spec] of (gw.spec.servers ?? []).entries()) {
      const where = `servers[${index}]`
      if (spec.name !== undefined && spec.name !== "") {
        if (names.has(spec.name)) warnings.push(notice(gateway, `${where}.name ${spec.name} is not unique`))
        names.add(spec.name)
      }
      const bind = spec.bind ?? ""
      if (bind.startsWith("unix://")) {
        warnings.push(
          notice(gateway, `${where}.bind: unix domain sockets are not supported on gateways; server skipped`),
        )
        continue
      }
      const port = spec.port.number ?? 0
      if (port <= 0) {
        warnings.push(notice(gateway, `${where}.port.number is not set; server skipped`))
        continue
      }
      const listenPorts = binding.listenPorts(port)
      if (listenPorts.length === 0) {
        warnings.push(
          notice(gateway, `${where}.port.number ${port} is not a port of the Gateway's Services; server skipped`),
        )
        continue
      }
      for (const listenPort of listenPorts) {
        const protocol = spec.port.protocol.toUpperCase()
        const tlsMode = spec.tls === undefined ? undefined : (spec.tls.mode ?? "PASSTHROUGH")
        const passthrough = tlsMode === "PASSTHROUGH" || tlsMode === "AUTO_PASSTHROUGH"
        const hosts = sanitizeHosts(spec.hosts, gw.meta.namespace)
        const server: GatewayServer = {
          gateway,
          gatewayName: gw.meta.name,
          gatewayNamespace: gw.meta.namespace,
          hosts,
          port,
          listenPort,
          portName: spec.port.name,
          protocol,
          bind,
          name: spec.name ?? "",
          ...(spec.tls !== undefined ? { tls: spec.tls } : {}),
          ...(tlsMode !== undefined ? { tlsMode } : {}),
          routeName: routeNameOf(
            protocol,
            passthrough,
            spec.tls !== undefined,
            port,
            listenPort,
            spec.port.name,
            gw,
            bind,
          ),
          sniHosts: spec.tls === undefined ? [] : [...new Set(hosts.map(bareHost))].sort(),
        }

        if (server.tls !== undefined) {
          let known = tlsHosts.get(listenPort)
          if (known === undefined) {
            known = new Map()
            tlsHosts.set(listenPort, known)
          }
          const duplicates = server.hosts.filter((h) => known.get(h) === bind)
          if (duplicates.length > 0) {
            warnings.push(
              notice(
                gateway,
                `${where}: duplicate host names ${duplicates.join(", ")} on port ${listenPort}; server skipped`,
              ),
            )
            continue
          }
          for (const h of server.hosts) known.set(h, bind)
        }

        const existing = portsByNumber.get(listenPort)
        const sameBind = ports.get(portKey(listenPort, bind))
        if (existing === undefined) {
          const state: PortState = {
            listenPort,
            bind,
            servers: [server],
            ...(isTlsServer(server) ? {} : { plainProtocol: protocol }),
          }
          ports.set(portKey(listenPort, bind), state)
          portsByNumber.set(listenPort, [state])
          if (isHttpServer(server)) serversByRouteName.set(server.routeName, [server])
          continue
        }
        const plain = existing.find((p) => p.plainProtocol !== undefined)
        if (plain !== undefined) {
          if (plain.bind === bind && !canMerge(protocol, plain.plainProtocol!)) {
            warnings.push(
              notice(
                gateway,
                `${where}: port ${listenPort} ${protocol} conflicts with the ${plain.plainProtocol} server already on it; server skipped`,
              ),
            )
            continue
          }
          if (server.routeName === "" && plain.bind === bind) {
            warnings.push(
              notice(
                gateway,
                `${where}: port ${listenPort} already has a ${plain.plainProtocol} server; server skipped`,
              ),
            )
            continue
          }
          if (sameBind === undefined) {
            const state: PortState = { listenPort, bind, servers: [server], plainProtocol: protocol }
            ports.set(portKey(listenPort, bind), state)
            existing.push(state)
          } else sameBind.servers.push(server)
          const list = serversByRouteName.get(server.routeName)
          if (list === undefined) serversByRouteName.set(server.routeName, [server])
          else list.push(server)
          continue
        }
        // A TLS port: servers are told apart by SNI.
        if (server.tls === undefined && sameBind !== undefined) {
          warnings.push(
            notice(
              gateway,
              `${where}: port ${listenPort} serves TLS; a server without TLS settings cannot join it; server skipped`,
            ),
          )
          continue
        }
        if (isHttpServer(server)) {
          if (server.routeName === "" || serversByRouteName.has(server.routeName)) {
            warnings.push(
              notice(
                gateway,
                `${where}: HTTPS port name ${server.portName} is not unique on port ${listenPort}; server skipped`,
              ),
            )
            continue
          }
          serversByRouteName.set(server.routeName, [server])
        }
        if (sameBind === undefined) {
          const state: PortState = { listenPort, bind, servers: [server] }
          ports.set(portKey(listenPort, bind), state)
          existing.push(state)
        } else sameBind.servers.push(server)
      }
    }
  }

  const list: ReadonlyArray<MergedPort> = [...ports.values()].map((p) => ({
    listenPort: p.listenPort,
    bind: p.bind,
    servers: p.servers,
  }))
  const names = gateways.map((gw) => `${gw.meta.namespace}/${gw.meta.name}`)
  return {
    gateways,
    names,
    ports: list,
    serversByRouteName,
    key: digest(
      JSON.stringify(bindings.map((b) => [b.gateway.meta.namespace, b.gateway.meta.name, b.gateway.spec, b.key])),
    ),
    warnings,
  }
}
