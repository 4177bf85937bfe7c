/**
 * The Gateways a router proxy applies and their servers merged per listener (the reference's
 * "merged gateway"): a router listens on every port any selected Gateway names, and several
 * Gateways may share a port. Servers on one port merge when they can share one listener:
 * plain-text HTTP servers into one HTTP connection manager (one route configuration
 * `http.<port>`), TLS servers into SNI filter chains. What cannot share is dropped with a notice:
 * a TLS server repeating a host another TLS server on the port already has (the proxy rejects
 * two filter chains with the same match), a server whose protocol cannot share the port, a
 * second TCP server on a port.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { GatewaySpec } from "../../../config-model/schemas/gateway.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { serviceInstances } from "../service-instances.js"

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

/** The Gateways that apply to a router: selector ⊆ labels, in every namespace or only its own. */
export const selectedGateways = (push: PushContext, proxy: ProxyView): ReadonlyArray<ConfigResource<GatewaySpec>> =>
  push.proxyConfig.gateways.filter(
    (gw) =>
      (!push.options.proxy.scopeGatewayToNamespace || gw.meta.namespace === proxy.namespace) &&
      matchesLabels(gw.spec.selector, proxy.labels),
  )

const notice = (gateway: string, message: string): GeneratorNotice => ({
  level: "warning",
  scope: "gateway",
  message: `Gateway ${gateway}: ${message}`,
})

const portKey = (port: number, bind: string) => `${bind}|${port}`

const merged = new WeakMap<PushContext, Map<string, MergedGateway>>()

/**
 * The Gateways selecting `proxy` and their servers merged per listener (memoised per push for
 * the proxies that see the same: namespace, labels, service instances).
 */
export const gatewaysForProxy = (push: PushContext, proxy: ProxyView): MergedGateway => {
  const instances = serviceInstances(push, proxy)
  // Legacy selector gateways listen on the target port of the service port the server names.
  const targetPorts = new Map<number, number>()
  for (const i of instances) if (!targetPorts.has(i.servicePort.port)) targetPorts.set(i.servicePort.port, i.targetPort)
  const memoKey = `${proxy.scopeKey}|${[...targetPorts].join(",")}`
  let byKey = merged.get(push)
  if (byKey === undefined) {
    byKey = new Map()
    merged.set(push, byKey)
  }
  const cached = byKey.get(memoKey)
  if (cached !== undefined) return cached
  const result = mergeGateways(selectedGateways(push, proxy), targetPorts)
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

export const mergeGateways = (
  gateways: ReadonlyArray<ConfigResource<GatewaySpec>>,
  targetPorts: ReadonlyMap<number, number> = new Map(),
): MergedGateway => {
  const warnings: Array<GeneratorNotice> = []
  const ports = new Map<string, PortState>()
  const portsByNumber = new Map<number, Array<PortState>>()
  const serversByRouteName = new Map<string, Array<GatewayServer>>()
  // listen port → SNI host → bind: TLS servers may not repeat a host on one listener.
  const tlsHosts = new Map<number, Map<string, string>>()

  for (const gw of gateways) {
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
      const listenPort = targetPorts.get(port) ?? port
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
            notice(gateway, `${where}: port ${listenPort} already has a ${plain.plainProtocol} server; server skipped`),
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
      JSON.stringify([
        gateways.map((gw) => [gw.meta.namespace, gw.meta.name, gw.spec]),
        [...targetPorts].sort(([a], [b]) => a - b),
      ]),
    ),
    warnings,
  }
}
