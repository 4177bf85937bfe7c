/**
 * `proxy-config listener`: listeners with the reference's filters (`--address`, `--port`,
 * `--type` HTTP/TCP/HTTP+TCP) and its tables: verbose (default) shows one row per filter chain
 * with what the chain matches and where it sends traffic; `--verbose=false` one row per
 * listener with its type.
 */
import { asArray, asNumber, asObject, asObjects, asString, type Json } from "./dump.js"
import { describeRouteConfig } from "./routes.js"
import { formatTable } from "./table.js"

const HCM = "envoy.filters.network.http_connection_manager"
const TCP_PROXY = "envoy.filters.network.tcp_proxy"
const PASSTHROUGH = "PassthroughCluster"

export interface ListenerFilter {
  readonly address: string
  readonly port: number
  readonly type: string
}

export const NO_LISTENER_FILTER: ListenerFilter = { address: "", port: 0, type: "" }

const addressOf = (address: unknown): string => {
  const a = asObject(address)
  const internal = asString(asObject(a?.envoy_internal_address)?.server_listener_name)
  if (internal !== "") return `envoy://${internal}`
  const pipe = asString(asObject(a?.pipe)?.path)
  if (pipe !== "") return pipe
  return asString(asObject(a?.socket_address)?.address)
}

/** A proxyless gRPC client's API listener has no address: its name is the `host:port` it serves. */
const apiListenerTarget = (listener: Json): { readonly host: string; readonly port: number } | undefined => {
  if (listener.address !== undefined || listener.api_listener === undefined) return undefined
  const name = asString(listener.name)
  const colon = name.lastIndexOf(":")
  return colon < 0 ? { host: name, port: 0 } : { host: name.slice(0, colon), port: Number(name.slice(colon + 1)) || 0 }
}

export const listenerAddresses = (listener: Json): ReadonlyArray<string> => {
  const api = apiListenerTarget(listener)
  if (api !== undefined) return [api.host]
  return [
    addressOf(listener.address),
    ...asObjects(listener.additional_addresses).map((extra) => addressOf(extra.address)),
  ]
}

export const listenerPort = (listener: Json): number =>
  apiListenerTarget(listener)?.port ?? asNumber(asObject(asObject(listener.address)?.socket_address)?.port_value) ?? 0

const chainsOf = (listener: Json): ReadonlyArray<Json> => [
  ...asObjects(listener.filter_chains),
  ...(asObject(listener.default_filter_chain) ? [listener.default_filter_chain as Json] : []),
]

const tcpCluster = (filter: Json): string => asString(asObject(filter.typed_config)?.cluster)

/** HTTP when a chain has a connection manager, TCP when one proxies TCP elsewhere than passthrough. */
export const listenerType = (listener: Json): string => {
  const filters = chainsOf(listener).flatMap((chain) => asObjects(chain.filters))
  const http = filters.some((f) => asString(f.name) === HCM)
  // Passthrough chains (PassthroughCluster, InboundPassthroughCluster, ...) do not make a listener TCP.
  const tcp = filters.some((f) => asString(f.name) === TCP_PROXY && !tcpCluster(f).includes(PASSTHROUGH))
  return http && tcp ? "HTTP+TCP" : http ? "HTTP" : tcp ? "TCP" : "UNKNOWN"
}

export const listenerMatches = (filter: ListenerFilter, listener: Json): boolean => {
  if (
    filter.address !== "" &&
    !listenerAddresses(listener).some((a) => a.toLowerCase() === filter.address.toLowerCase())
  )
    return false
  if (filter.port !== 0 && listenerPort(listener) !== filter.port) return false
  if (filter.type !== "" && listenerType(listener).toLowerCase() !== filter.type.toLowerCase()) return false
  return true
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** Named ALPN sets the reference abbreviates. */
const KNOWN_ALPNS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["App: HTTP TLS", ["http/1.0", "http/1.1", "h2c", "istio-http/1.0", "istio-http/1.1", "istio-h2"]],
  ["App: Istio HTTP Plain", ["istio", "istio-http/1.0", "istio-http/1.1", "istio-h2"]],
  ["App: TCP TLS", ["istio-peer-exchange", "istio"]],
  ["App: HTTP", ["http/1.1", "h2c"]],
]

/** What a filter chain matches: SNI, transport, ALPN and destination address/port; ALL when nothing. */
export const describeChainMatch = (chain: Json): string => {
  const match = asObject(chain.filter_chain_match) ?? {}
  const descriptions: Array<string> = []
  const serverNames = asArray(match.server_names).map(asString)
  if (serverNames.length > 0) descriptions.push(`SNI: ${serverNames.join(",")}`)
  const transport = asString(match.transport_protocol)
  if (transport !== "") descriptions.push(`Trans: ${transport}`)
  const alpns = asArray(match.application_protocols).map(asString)
  if (alpns.length > 0) {
    const known = KNOWN_ALPNS.find(([, list]) => sameList(list, alpns))
    descriptions.push(known?.[0] ?? `App: ${alpns.join(",")}`)
  }
  const port = asNumber(match.destination_port)
  const portText = port === undefined ? "" : `:${port}`
  const ranges = asObjects(match.prefix_ranges).map(
    (r) => `${asString(r.address_prefix)}/${asNumber(r.prefix_len) ?? 0}`,
  )
  if (ranges.length > 0) descriptions.push(`Addr: ${ranges.join(",")}${portText}`)
  else if (portText !== "") descriptions.push(`Addr: *${portText}`)
  return descriptions.length === 0 ? "ALL" : descriptions.join("; ")
}

/** Where a chain sends traffic: its RDS route, inline routes, or TCP cluster. */
export const describeChainDestination = (chain: Json): string => {
  for (const filter of asObjects(chain.filters)) {
    const config = asObject(filter.typed_config) ?? {}
    const name = asString(filter.name)
    if (name === HCM) {
      const inline = asObject(config.route_config)
      if (inline !== undefined) return describeRouteConfig(inline)
      const rds = asString(asObject(config.rds)?.route_config_name)
      return rds === "" ? "HTTP" : `Route: ${rds}`
    }
    if (name === TCP_PROXY) {
      const cluster = tcpCluster(filter)
      if (cluster === "") return "WeightedClusters"
      return cluster.includes("Cluster") ? cluster : `Cluster: ${cluster}`
    }
  }
  return "Non-HTTP/Non-TCP"
}

/** By port, then address. */
export const filteredListeners = (listeners: ReadonlyArray<Json>, filter: ListenerFilter): ReadonlyArray<Json> =>
  listeners
    .filter((l) => listenerMatches(filter, l))
    .slice()
    .sort((a, b) => {
      const byPort = listenerPort(a) - listenerPort(b)
      if (byPort !== 0) return byPort
      const [x, y] = [listenerAddresses(a).join(","), listenerAddresses(b).join(",")]
      return x < y ? -1 : x > y ? 1 : 0
    })

export const listenerTable = (listeners: ReadonlyArray<Json>, filter: ListenerFilter, verbose: boolean): string => {
  const chosen = filteredListeners(listeners, filter)
  if (!verbose) {
    return formatTable([
      ["ADDRESSES", "PORT", "TYPE"],
      ...chosen.map((l) => [listenerAddresses(l).join(","), `${listenerPort(l)}`, listenerType(l)]),
    ])
  }
  return formatTable([
    ["ADDRESSES", "PORT", "MATCH", "DESTINATION"],
    ...chosen.flatMap((l) =>
      chainsOf(l).map((chain) => [
        listenerAddresses(l).join(","),
        `${listenerPort(l)}`,
        describeChainMatch(chain),
        describeChainDestination(chain),
      ]),
    ),
  ])
}
