/**
 * The reference's EnvoyFilter match rules, on proto objects: which proxy a patch applies to
 * (`match.proxy`), in which patch context, and which listener, filter chain, filter, route
 * configuration, virtual host, route or cluster it names.
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { ProxyView } from "../proxy-view.js"
import { VIRTUAL_INBOUND_LISTENER, VIRTUAL_OUTBOUND_LISTENER } from "../well-known.js"
import type { CompiledPatch, PatchContext } from "./patches.js"

export const obj = (v: unknown): ProtoObject | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as ProtoObject) : undefined
export const str = (v: unknown): string => (typeof v === "string" ? v : "")
export const arr = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
/** A number, a numeric string (64-bit values) or a wrapper `{value}`. */
export const num = (v: unknown): number => {
  if (typeof v === "number") return v
  if (typeof v === "string" && v !== "") return Number(v)
  const wrapped = obj(v)?.value
  return wrapped !== undefined ? num(wrapped) : 0
}

/** `match.proxy`: the version regex (unanchored, as Go's MatchString) and exact metadata values. */
export const proxyMatch = (proxy: ProxyView, patch: CompiledPatch): boolean => {
  if (patch.proxyVersion !== undefined) {
    if (proxy.version === "" || !patch.proxyVersion.test(proxy.version)) return false
  }
  for (const [k, v] of Object.entries(patch.match.proxy?.metadata ?? {})) if (proxy.metadata[k] !== v) return false
  return true
}

export const contextMatch = (context: PatchContext, patch: CompiledPatch): boolean =>
  patch.context === "ANY" || patch.context === context

const isVirtualListener = (name: string): boolean =>
  name === VIRTUAL_INBOUND_LISTENER || name === VIRTUAL_OUTBOUND_LISTENER

const listenerPort = (listener: ProtoObject): number | undefined => {
  const socket = obj(obj(listener.address)?.socket_address)
  return socket === undefined ? undefined : num(socket.port_value)
}

export const listenerMatch = (listener: ProtoObject, patch: CompiledPatch): boolean => {
  const m = patch.match.listener
  if (m === undefined) return true
  const name = str(listener.name)
  if (m.name !== undefined && m.name !== "" && m.name !== name) return false
  // On the virtual listeners the port names a filter chain's destination port (filterChainMatch).
  if (patch.applyTo !== "LISTENER" && isVirtualListener(name)) return true
  if (m.portNumber !== undefined && m.portNumber !== 0 && listenerPort(listener) !== m.portNumber) return false
  return true
}

export const filterChainMatch = (listener: ProtoObject, fc: ProtoObject, patch: CompiledPatch): boolean => {
  const lm = patch.match.listener
  if (lm === undefined) return true
  const fcm = obj(fc.filter_chain_match)
  const destinationPort = fcm?.destination_port === undefined ? undefined : num(fcm.destination_port)
  if (isVirtualListener(str(listener.name)) && (lm.portNumber ?? 0) > 0 && destinationPort !== lm.portNumber)
    return false
  const m = lm.filterChain
  if (m === undefined) return true
  if (m.name !== undefined && m.name !== "" && m.name !== str(fc.name)) return false
  if (m.sni !== undefined && m.sni !== "" && !arr(fcm?.server_names).includes(m.sni)) return false
  if (
    m.transportProtocol !== undefined &&
    m.transportProtocol !== "" &&
    str(fcm?.transport_protocol) !== m.transportProtocol
  )
    return false
  if (m.applicationProtocols !== undefined && m.applicationProtocols !== "") {
    if (fcm === undefined) return false
    const have = arr(fcm.application_protocols)
    for (const p of m.applicationProtocols.split(",")) if (!have.includes(p)) return false
  }
  if (m.destinationPort !== undefined && m.destinationPort > 0 && destinationPort !== m.destinationPort) return false
  return true
}

/** Whether the patch names a network filter (`filterChain.filter`). */
export const hasNetworkFilterMatch = (patch: CompiledPatch): boolean =>
  patch.match.listener?.filterChain?.filter !== undefined

export const networkFilterMatch = (filter: ProtoObject, patch: CompiledPatch): boolean =>
  !hasNetworkFilterMatch(patch) || (patch.match.listener?.filterChain?.filter?.name ?? "") === str(filter.name)

/** Whether the patch names an HTTP filter (`filterChain.filter.subFilter`). */
export const hasHttpFilterMatch = (patch: CompiledPatch): boolean =>
  patch.match.listener?.filterChain?.filter?.subFilter !== undefined

export const httpFilterMatch = (filter: ProtoObject, patch: CompiledPatch): boolean =>
  !hasHttpFilterMatch(patch) || (patch.match.listener?.filterChain?.filter?.subFilter?.name ?? "") === str(filter.name)

/** Whether the patch names a listener filter (`listener.listenerFilter`). */
export const hasListenerFilterMatch = (patch: CompiledPatch): boolean =>
  (patch.match.listener?.listenerFilter ?? "") !== ""

export const listenerFilterMatch = (filter: ProtoObject, patch: CompiledPatch): boolean =>
  !hasListenerFilterMatch(patch) || patch.match.listener?.listenerFilter === str(filter.name)

/**
 * `direction|port|subset|host` (cluster names, inbound route names) → its parts; other names
 * give port 0 and empty parts.
 */
export const parseSubsetKey = (name: string): { direction: string; port: number; subset: string; host: string } => {
  const parts = name.split("|")
  if (parts.length < 4) return { direction: "", port: 0, subset: "", host: "" }
  const port = Number(parts[1])
  return {
    direction: parts[0] ?? "",
    port: Number.isInteger(port) ? port : 0,
    subset: parts[2] ?? "",
    host: parts.slice(3).join("|"),
  }
}

/** The reference's gateway RDS names: `http.<port>`, `https.<port>.<portName>.<gateway>.<namespace>`. */
const parseGatewayRouteName = (name: string): { port: number; portName: string; gateway: string } => {
  const parts = name.split(".")
  if (name.startsWith("http.") && parts.length >= 2) return { port: Number(parts[1]) || 0, portName: "", gateway: "" }
  if (name.startsWith("https.") && parts.length >= 5)
    return { port: Number(parts[1]) || 0, portName: parts[2] ?? "", gateway: `${parts[4]}/${parts[3]}` }
  return { port: 0, portName: "", gateway: "" }
}

export const routeConfigurationMatch = (context: PatchContext, rc: ProtoObject, patch: CompiledPatch): boolean => {
  const m = patch.match.routeConfiguration
  if (m === undefined) return true
  const name = str(rc.name)
  if (m.name !== undefined && m.name !== "" && m.name !== name) return false
  if (context !== "GATEWAY") {
    // Sidecar route configurations are named by port (`80`), inbound ones `inbound|8080||`.
    const port = name.startsWith("inbound|") ? parseSubsetKey(name).port : Number.parseInt(name, 10) || 0
    return m.portNumber === undefined || m.portNumber === 0 || m.portNumber === port
  }
  const parsed = parseGatewayRouteName(name)
  if (m.portNumber !== undefined && m.portNumber !== 0 && m.portNumber !== parsed.port) return false
  if (m.portName !== undefined && m.portName !== "" && m.portName !== parsed.portName) return false
  if (m.gateway !== undefined && m.gateway !== "" && m.gateway !== parsed.gateway) return false
  return true
}

export const virtualHostMatch = (vhost: ProtoObject, patch: CompiledPatch): boolean => {
  const m = patch.match.routeConfiguration?.vhost
  if (m === undefined) return true
  if (m.name !== undefined && m.name !== "" && m.name !== str(vhost.name)) return false
  if (m.domainName !== undefined && m.domainName !== "" && !arr(vhost.domains).includes(m.domainName)) return false
  return true
}

/** Whether the patch names a route (`vhost.route`). */
export const hasRouteMatch = (patch: CompiledPatch): boolean =>
  patch.match.routeConfiguration?.vhost?.route !== undefined

export const routeMatch = (route: ProtoObject, patch: CompiledPatch): boolean => {
  const m = patch.match.routeConfiguration?.vhost?.route
  if (m === undefined) return true
  if (m.name !== undefined && m.name !== "" && m.name !== str(route.name)) return false
  switch (m.action) {
    case "ROUTE":
      return route.route !== undefined
    case "REDIRECT":
      return route.redirect !== undefined
    case "DIRECT_RESPONSE":
      return route.direct_response !== undefined
    default:
      return true
  }
}

/**
 * `match.cluster`: a name matches exactly (and alone); else subset, service and port are read from
 * the `outbound|port|subset|host` name. An inbound cluster's name has no host: its services
 * (`inboundHosts`, when the caller knows them) stand in.
 */
export const clusterMatch = (
  cluster: ProtoObject,
  patch: CompiledPatch,
  inboundHosts: (port: number) => ReadonlyArray<string>,
): boolean => {
  const m = patch.match.cluster
  if (m === undefined) return true
  const name = str(cluster.name)
  if (m.name !== undefined && m.name !== "") return m.name === name
  const key = parseSubsetKey(name)
  if (m.subset !== undefined && m.subset !== "" && m.subset !== key.subset) return false
  if (m.service !== undefined && m.service !== "") {
    const hosts = key.direction === "inbound" && key.host === "" ? inboundHosts(key.port) : [key.host]
    if (!hosts.includes(m.service)) return false
  }
  if (m.portNumber !== undefined && m.portNumber !== 0 && m.portNumber !== key.port) return false
  return true
}
