/**
 * A small evaluator of generated LDS/RDS (and CDS) resources: which listener, filter chain,
 * virtual host and route a connection or request reaches, following the data-plane proxy's
 * documented rules. Scenario tests ask it "where does this request go" instead of asserting on
 * the shape of the config.
 *
 * - Listener: traffic the capture rules redirect to the virtual outbound listener is handed to
 *   the listener of its original destination (`ip:port` first, then `0.0.0.0:port`); without
 *   one, the virtual outbound listener's own chains (passthrough or blackhole) take it.
 * - Filter chain: narrowed field by field (destination port, destination IP, server name,
 *   transport protocol, application protocols), a specific value winning over an empty one,
 *   never backtracking; no match falls to `default_filter_chain`.
 * - Virtual host: exact domain, then the longest `*.suffix`, then the longest `prefix.*`, then
 *   `*` (the Host's `:port` left out under `ignore_port_in_host_matching`). A virtual host with
 *   `require_tls` answers a plaintext request with a redirect to https. Route: the first whose
 *   path, headers and query parameters all match.
 */
import {
  VIRTUAL_INBOUND_LISTENER,
  VIRTUAL_INBOUND_PORT,
  VIRTUAL_OUTBOUND_LISTENER,
  VIRTUAL_OUTBOUND_PORT,
} from "../../../src/services/xds/proxygen/well-known.js"
import {
  arr,
  cidrPrefixMatch,
  type Headers,
  headerMatches,
  int,
  type Obj,
  obj,
  queryMatches,
  str,
  wrapped,
} from "./matchers.js"
import { evaluateRbac, type RbacContext } from "./rbac-eval.js"

// ---- listeners and filter chains ----

export interface Connection {
  readonly destinationPort: number
  readonly destinationIp?: string | undefined
  readonly sni?: string | undefined
  /** "tls" or "raw_buffer", as the TLS inspector reports. */
  readonly transportProtocol: string
  /** ALPN (TLS) or what the HTTP inspector detected ("http/1.1", "h2c"). */
  readonly applicationProtocols: ReadonlyArray<string>
}

const socketAddress = (listener: Obj): { address: string; port: number } | undefined => {
  const sa = obj(obj(listener.address)?.socket_address)
  if (sa === undefined) return undefined
  return { address: String(sa.address ?? ""), port: int(sa.port_value) ?? -1 }
}

/** The listener that takes a connection to `ip:port` handed over by the virtual outbound one. */
export const listenerFor = (listeners: ReadonlyArray<Obj>, ip: string | undefined, port: number): Obj | undefined => {
  const at = (address: string) =>
    listeners.find((l) => {
      const a = socketAddress(l)
      return a !== undefined && a.port === port && a.address === address && l.name !== VIRTUAL_OUTBOUND_LISTENER
    })
  return (
    (ip !== undefined ? at(ip) : undefined) ??
    at("0.0.0.0") ??
    (ip === undefined ? anyAtPort(listeners, port) : undefined)
  )
}

const anyAtPort = (listeners: ReadonlyArray<Obj>, port: number): Obj | undefined =>
  listeners.find((l) => socketAddress(l)?.port === port && l.name !== VIRTUAL_OUTBOUND_LISTENER)

export const listenerNamed = (listeners: ReadonlyArray<Obj>, name: string): Obj | undefined =>
  listeners.find((l) => l.name === name)

/** Keeps the chains matching `value` exactly if any, else those with the criterion unset. */
const narrow = (
  chains: ReadonlyArray<Obj>,
  unset: (m: Obj) => boolean,
  score: (m: Obj) => number /* < 0: no match; higher: more specific */,
): ReadonlyArray<Obj> => {
  const scored = chains.map((c) => ({ c, m: obj(c.filter_chain_match) ?? {} }))
  const specific = scored.filter(({ m }) => !unset(m)).map(({ c, m }) => ({ c, s: score(m) }))
  const best = Math.max(-1, ...specific.map(({ s }) => s))
  if (best >= 0) return specific.filter(({ s }) => s === best).map(({ c }) => c)
  return scored.filter(({ m }) => unset(m)).map(({ c }) => c)
}

const serverNameScore = (names: ReadonlyArray<string>, sni: string | undefined): number => {
  if (sni === undefined) return -1
  if (names.includes(sni)) return 10_000
  const wild = names.filter((n) => n.startsWith("*.") && sni.endsWith(n.slice(1))).map((n) => n.length)
  return wild.length > 0 ? Math.max(...wild) : -1
}

const list = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.map(String) : [])

/** The filter chain the proxy picks for a connection; undefined when none (connection closed). */
export const selectFilterChain = (listener: Obj, conn: Connection): Obj | undefined => {
  let chains: ReadonlyArray<Obj> = arr(listener.filter_chains)
  chains = narrow(
    chains,
    (m) => m.destination_port === undefined,
    (m) => (int(wrapped(m.destination_port)) === conn.destinationPort ? 0 : -1),
  )
  chains = narrow(
    chains,
    (m) => arr(m.prefix_ranges).length === 0,
    (m) =>
      conn.destinationIp === undefined
        ? -1
        : Math.max(-1, ...arr(m.prefix_ranges).map((r) => cidrPrefixMatch(r, conn.destinationIp!))),
  )
  chains = narrow(
    chains,
    (m) => list(m.server_names).length === 0,
    (m) => serverNameScore(list(m.server_names), conn.sni),
  )
  chains = narrow(
    chains,
    (m) => (str(m.transport_protocol) ?? "") === "",
    (m) => (m.transport_protocol === conn.transportProtocol ? 0 : -1),
  )
  chains = narrow(
    chains,
    (m) => list(m.application_protocols).length === 0,
    (m) => (list(m.application_protocols).some((p) => conn.applicationProtocols.includes(p)) ? 0 : -1),
  )
  if (chains.length > 1)
    throw new Error(`ambiguous filter chains: ${chains.map((c) => String(c.name ?? "?")).join(", ")}`)
  return chains[0] ?? obj(listener.default_filter_chain)
}

const typeName = (filter: Obj): string => {
  const url = str(obj(filter.typed_config)?.["@type"]) ?? ""
  return url.slice(url.lastIndexOf("/") + 1)
}

const filterOf = (filters: ReadonlyArray<Obj>, type: string): Obj | undefined => {
  const f = filters.find((x) => typeName(x) === type)
  return f === undefined ? undefined : obj(f.typed_config)
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
const TCP_PROXY = "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy"
const NETWORK_RBAC = "envoy.extensions.filters.network.rbac.v3.RBAC"
const HTTP_RBAC = "envoy.extensions.filters.http.rbac.v3.RBAC"
const HTTP_FAULT = "envoy.extensions.filters.http.fault.v3.HTTPFault"
const FAULT_FILTER = "envoy.filters.http.fault"
const TLS_CONTEXT = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"

export const httpConnectionManager = (chain: Obj): Obj | undefined => filterOf(arr(chain.filters), HCM)

/** Where a TCP proxy filter sends the connection. */
export type TcpTarget =
  | { readonly kind: "cluster"; readonly cluster: string }
  | { readonly kind: "weighted"; readonly clusters: ReadonlyArray<{ readonly name: string; readonly weight: number }> }

export const tcpTarget = (chain: Obj): TcpTarget | undefined => {
  const tcp = filterOf(arr(chain.filters), TCP_PROXY)
  if (tcp === undefined) return undefined
  const weighted = obj(tcp.weighted_clusters)
  if (weighted !== undefined)
    return {
      kind: "weighted",
      clusters: arr(weighted.clusters).map((c) => ({ name: String(c.name), weight: int(c.weight) ?? 0 })),
    }
  return { kind: "cluster", cluster: String(tcp.cluster ?? "") }
}

// ---- routes ----

const pctOf = (p: Obj | undefined): number | undefined => {
  if (p === undefined) return undefined
  const denominator =
    { HUNDRED: 100, TEN_THOUSAND: 10_000, MILLION: 1_000_000 }[String(p.denominator ?? "HUNDRED")] ?? 100
  return ((int(p.numerator) ?? 0) * 100) / denominator
}

const seconds = (d: unknown): number | undefined => {
  const o = obj(d)
  return o === undefined ? undefined : (int(o.seconds) ?? 0) + (int(o.nanos) ?? 0) / 1e9
}

export interface Fault {
  readonly abort?: { readonly httpStatus?: number; readonly grpcStatus?: number; readonly percent: number }
  readonly delay?: { readonly seconds: number; readonly percent: number }
  readonly config: Obj
}

/** The fault filter's per-route (or per-virtual-host) config: HTTPFault, maybe in a FilterConfig. */
const faultOf = (perFilter: unknown): Fault | undefined => {
  const entry = obj(obj(perFilter)?.[FAULT_FILTER])
  if (entry === undefined) return undefined
  const config = str(entry["@type"])?.endsWith(HTTP_FAULT) ? entry : obj(entry.config)
  if (config === undefined) return undefined
  const abort = obj(config.abort)
  const delay = obj(config.delay)
  return {
    config,
    ...(abort !== undefined
      ? {
          abort: {
            ...(abort.http_status !== undefined ? { httpStatus: int(abort.http_status)! } : {}),
            ...(abort.grpc_status !== undefined ? { grpcStatus: int(abort.grpc_status)! } : {}),
            percent: pctOf(obj(abort.percentage)) ?? 100,
          },
        }
      : {}),
    ...(delay !== undefined
      ? { delay: { seconds: seconds(delay.fixed_delay) ?? 0, percent: pctOf(obj(delay.percentage)) ?? 100 } }
      : {}),
  }
}

export interface HttpRequest {
  /** The Host / :authority header as sent (with `:port` when the client adds it). */
  readonly host: string
  /** Path with optional query string. */
  readonly path?: string
  readonly method?: string
  /** Request headers (any case). */
  readonly headers?: Readonly<Record<string, string>>
  /** The request came over TLS (for a virtual host's `require_tls`); plaintext when unset. */
  readonly tls?: boolean
}

export type RouteOutcome =
  | { readonly kind: "no-route-config"; readonly name: string }
  | { readonly kind: "no-virtual-host"; readonly routeConfig: Obj }
  | { readonly kind: "no-route"; readonly virtualHost: Obj }
  | RouteHit

export interface RouteHit {
  readonly kind: "route"
  readonly routeConfig: Obj
  readonly virtualHost: Obj
  readonly route: Obj
  readonly cluster?: string
  readonly weightedClusters?: ReadonlyArray<{ readonly name: string; readonly weight: number }>
  readonly clusterHeader?: string
  readonly redirect?: Obj
  readonly directResponse?: { readonly status: number; readonly body?: string }
  readonly fault?: Fault
  /** The route timeout in seconds as the proxy applies it (15 when unset; 0 = none). */
  readonly timeoutSeconds?: number
  readonly retries?: { readonly attempts: number; readonly retryOn?: string; readonly perTryTimeoutSeconds?: number }
  readonly mirrors: ReadonlyArray<string>
  readonly prefixRewrite?: string
  readonly hostRewrite?: string
}

const domainScore = (domain: string, host: string): number => {
  const d = domain.toLowerCase()
  if (d === host) return 4_000_000
  if (d === "*") return 1
  if (d.startsWith("*") && host.length > d.length - 1 && host.endsWith(d.slice(1))) return 3_000_000 + d.length
  if (d.endsWith("*") && host.length > d.length - 1 && host.startsWith(d.slice(0, -1))) return 2_000_000 + d.length
  return -1
}

export const selectVirtualHost = (routeConfig: Obj, host: string): Obj | undefined => {
  let best: Obj | undefined
  let bestScore = 0
  for (const vh of arr(routeConfig.virtual_hosts)) {
    for (const d of list(vh.domains)) {
      const s = domainScore(d, host.toLowerCase())
      if (s > bestScore) {
        best = vh
        bestScore = s
      }
    }
  }
  return best
}

const parseQuery = (path: string): Record<string, string> => {
  const q = path.includes("?") ? path.slice(path.indexOf("?") + 1) : ""
  const out: Record<string, string> = {}
  for (const part of q.split("&").filter((p) => p !== "")) {
    const [k, v = ""] = part.split("=")
    out[decodeURIComponent(k!)] = decodeURIComponent(v)
  }
  return out
}

export const requestHeaders = (req: HttpRequest): Headers => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(req.headers ?? {})) out[k.toLowerCase()] = v
  out[":authority"] = req.host
  out[":path"] = req.path ?? "/"
  out[":method"] = req.method ?? "GET"
  if (out.host === undefined) out.host = req.host
  return out
}

export const routeMatches = (match: Obj, req: HttpRequest): boolean => {
  const full = req.path ?? "/"
  const path = full.split("?")[0]!
  const sensitive = wrapped(match.case_sensitive) !== false
  const cmp = (s: string) => (sensitive ? s : s.toLowerCase())
  let pathOk: boolean
  if (match.prefix !== undefined) pathOk = cmp(path).startsWith(cmp(String(match.prefix)))
  else if (match.path !== undefined) pathOk = cmp(path) === cmp(String(match.path))
  else if (match.path_separated_prefix !== undefined) {
    const p = cmp(String(match.path_separated_prefix))
    pathOk = cmp(path) === p || cmp(path).startsWith(`${p}/`)
  } else if (obj(match.safe_regex) !== undefined)
    pathOk = new RegExp(`^(?:${String(obj(match.safe_regex)!.regex)})$`).test(path)
  else throw new Error(`the evaluator does not know the route match ${JSON.stringify(match)}`)
  if (!pathOk) return false
  const headers = requestHeaders(req)
  if (match.grpc !== undefined && !(headers["content-type"] ?? "").startsWith("application/grpc")) return false
  if (!arr(match.headers).every((h) => headerMatches(h, headers))) return false
  const query = parseQuery(full)
  return arr(match.query_parameters).every((q) => queryMatches(q, query))
}

const routeHit = (routeConfig: Obj, virtualHost: Obj, route: Obj): RouteHit => {
  const action = obj(route.route)
  const redirect = obj(route.redirect)
  const direct = obj(route.direct_response)
  const fault = faultOf(route.typed_per_filter_config) ?? faultOf(virtualHost.typed_per_filter_config)
  const hit: { -readonly [K in keyof RouteHit]?: RouteHit[K] } = {
    kind: "route",
    routeConfig,
    virtualHost,
    route,
    mirrors: [],
    ...(fault !== undefined ? { fault } : {}),
  }
  if (redirect !== undefined) return { ...hit, redirect } as RouteHit
  if (direct !== undefined) {
    const body = obj(direct.body)
    return {
      ...hit,
      directResponse: {
        status: int(direct.status) ?? 0,
        ...(body?.inline_string !== undefined ? { body: String(body.inline_string) } : {}),
      },
    } as RouteHit
  }
  if (action === undefined) return hit as RouteHit
  const weighted = obj(action.weighted_clusters)
  if (weighted !== undefined)
    hit.weightedClusters = arr(weighted.clusters).map((c) => ({
      name: String(c.name),
      weight: int(wrapped(c.weight)) ?? 0,
    }))
  else if (action.cluster !== undefined) hit.cluster = String(action.cluster)
  else if (action.cluster_header !== undefined) hit.clusterHeader = String(action.cluster_header)
  hit.timeoutSeconds = seconds(action.timeout) ?? 15
  const retry = obj(action.retry_policy) ?? obj(virtualHost.retry_policy)
  if (retry !== undefined) {
    const perTry = seconds(retry.per_try_timeout)
    hit.retries = {
      attempts: int(wrapped(retry.num_retries)) ?? 1,
      ...(retry.retry_on !== undefined ? { retryOn: String(retry.retry_on) } : {}),
      ...(perTry !== undefined ? { perTryTimeoutSeconds: perTry } : {}),
    }
  }
  hit.mirrors = arr(action.request_mirror_policies).map((m) => String(m.cluster))
  if (action.prefix_rewrite !== undefined) hit.prefixRewrite = String(action.prefix_rewrite)
  if (action.host_rewrite_literal !== undefined) hit.hostRewrite = String(action.host_rewrite_literal)
  return hit as RouteHit
}

/** A request against one RouteConfiguration. */
export const evaluateRouteConfig = (routeConfig: Obj, req: HttpRequest): RouteOutcome => {
  const host = wrapped(routeConfig.ignore_port_in_host_matching) === true ? withoutPort(req.host) : req.host
  const virtualHost = selectVirtualHost(routeConfig, host)
  if (virtualHost === undefined) return { kind: "no-virtual-host", routeConfig }
  // The proxy answers before routing: 301 to the same URL over https (the route is a stand-in).
  const requireTls = str(virtualHost.require_tls) ?? "NONE"
  if (requireTls !== "NONE" && req.tls !== true)
    return {
      kind: "route",
      routeConfig,
      virtualHost,
      route: { name: "require_tls" },
      redirect: { https_redirect: true, response_code: "MOVED_PERMANENTLY" },
      mirrors: [],
    }
  const route = arr(virtualHost.routes).find((r) => routeMatches(obj(r.match) ?? {}, req))
  if (route === undefined) return { kind: "no-route", virtualHost }
  return routeHit(routeConfig, virtualHost, route)
}

/** `host:port` → `host` (IPv6 literals in brackets keep their colons). */
const withoutPort = (host: string): string => {
  const m = /^(\[[^\]]*\]|[^:]*):\d+$/.exec(host)
  return m === null ? host : m[1]!
}

const routeConfigOf = (hcm: Obj, routes: ReadonlyArray<Obj>): Obj | { readonly missing: string } => {
  const inline = obj(hcm.route_config)
  if (inline !== undefined) return inline
  const name = String(obj(hcm.rds)?.route_config_name ?? "")
  return routes.find((r) => r.name === name) ?? { missing: name }
}

// ---- outbound ----

export type OutboundHttpOutcome =
  | { readonly kind: "no-listener" }
  | { readonly kind: "no-chain"; readonly listener: Obj }
  | { readonly kind: "not-http"; readonly listener: Obj; readonly chain: Obj; readonly tcp?: TcpTarget }
  | (RouteOutcome & { readonly listener?: Obj })

export interface OutboundHttpInput extends HttpRequest {
  readonly listeners: ReadonlyArray<Obj>
  readonly routes: ReadonlyArray<Obj>
  readonly port: number
  /** The destination address (a service VIP); without it, the `0.0.0.0:port` listener. */
  readonly destinationIp?: string
  /** HTTPS: the TLS server name the client sends (the request is then over TLS, ALPN h2/http1.1). */
  readonly sni?: string
}

/** Where a sidecar (or gateway) sends an HTTP request to `host` on `port`. */
export const outboundHttp = (input: OutboundHttpInput): OutboundHttpOutcome => {
  const listener = listenerFor(input.listeners, input.destinationIp, input.port)
  if (listener === undefined) return { kind: "no-listener" }
  const tls = input.sni !== undefined
  const chain = selectFilterChain(listener, {
    destinationPort: input.port,
    destinationIp: input.destinationIp,
    sni: input.sni,
    transportProtocol: tls ? "tls" : "raw_buffer",
    applicationProtocols: tls ? ["h2", "http/1.1"] : ["http/1.1"],
  })
  if (chain === undefined) return { kind: "no-chain", listener }
  const hcm = httpConnectionManager(chain)
  if (hcm === undefined) {
    const tcp = tcpTarget(chain)
    return { kind: "not-http", listener, chain, ...(tcp !== undefined ? { tcp } : {}) }
  }
  const routeConfig = routeConfigOf(hcm, input.routes)
  if ("missing" in routeConfig) return { kind: "no-route-config", name: String(routeConfig.missing) }
  return { ...evaluateRouteConfig(routeConfig, { ...input, tls }), listener }
}

export type OutboundTcpOutcome =
  | (TcpTarget & { readonly listener: Obj; readonly chain: Obj })
  | { readonly kind: "http"; readonly listener: Obj; readonly chain: Obj }
  | { readonly kind: "no-chain"; readonly listener?: Obj }

export interface OutboundTcpInput {
  readonly listeners: ReadonlyArray<Obj>
  readonly vip: string
  readonly port: number
  readonly sni?: string
  /** ALPN the client offers (TLS) or the HTTP inspector saw. */
  readonly applicationProtocols?: ReadonlyArray<string>
}

/** Where a sidecar sends a TCP (or TLS) connection to `vip:port`. */
export const outboundTcp = (input: OutboundTcpInput): OutboundTcpOutcome => {
  const conn: Connection = {
    destinationPort: input.port,
    destinationIp: input.vip,
    sni: input.sni,
    transportProtocol: input.sni !== undefined ? "tls" : "raw_buffer",
    applicationProtocols: input.applicationProtocols ?? [],
  }
  const own = listenerFor(input.listeners, input.vip, input.port)
  const virtual =
    listenerNamed(input.listeners, VIRTUAL_OUTBOUND_LISTENER) ??
    input.listeners.find((l) => socketAddress(l)?.port === VIRTUAL_OUTBOUND_PORT)
  const listener = own ?? virtual
  if (listener === undefined) return { kind: "no-chain" }
  let chain = selectFilterChain(listener, conn)
  let at = listener
  if (chain === undefined && own !== undefined && virtual !== undefined) {
    chain = selectFilterChain(virtual, conn)
    at = virtual
  }
  if (chain === undefined) return { kind: "no-chain", listener: at }
  if (httpConnectionManager(chain) !== undefined) return { kind: "http", listener: at, chain }
  const tcp = tcpTarget(chain)
  if (tcp === undefined) return { kind: "no-chain", listener: at }
  return { ...tcp, listener: at, chain }
}

// ---- inbound ----

export interface InboundInput {
  readonly listeners: ReadonlyArray<Obj>
  readonly routes?: ReadonlyArray<Obj>
  readonly port: number
  readonly destinationIp?: string | undefined
  /** Whether the client speaks TLS (a mesh peer with mTLS, or its own TLS with `ownTls`). */
  readonly tls: boolean
  /**
   * The client's TLS is meant for the workload itself (an HTTPS client outside the mesh, no mesh
   * certificate): a TCP chain that does not terminate TLS passes it through untouched.
   */
  readonly ownTls?: boolean | undefined
  /** ALPN; by default what a mesh peer (TLS) or the HTTP inspector (plaintext HTTP) gives. */
  readonly alpn?: ReadonlyArray<string> | undefined
  /** The client certificate's URI SAN; undefined without a client certificate. */
  readonly principal?: string | undefined
  readonly sourceIp?: string | undefined
  /** Given (any of them), the connection carries this HTTP request. */
  readonly path?: string | undefined
  readonly method?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly host?: string | undefined
}

export type InboundOutcome =
  | { readonly kind: "no-listener" }
  | { readonly kind: "no-chain" }
  /** The chain's TLS does not fit the client (plaintext to a TLS chain, no client certificate...). */
  | { readonly kind: "handshake-failed"; readonly chain: Obj; readonly reason: string }
  /** TLS bytes reached an HTTP connection manager that does not terminate TLS: the codec refuses them. */
  | { readonly kind: "http-codec-error"; readonly chain: Obj }
  | { readonly kind: "denied"; readonly chain: Obj; readonly filter: string; readonly policy?: string }
  | {
      readonly kind: "allowed"
      readonly chain: Obj
      readonly cluster?: string
      readonly route?: RouteOutcome
      readonly policy?: string
    }

const tlsContextOf = (chain: Obj): Obj | undefined => {
  const socket = obj(chain.transport_socket)
  const config = obj(socket?.typed_config)
  return config !== undefined && str(config["@type"])?.endsWith(TLS_CONTEXT) ? config : undefined
}

const TLS_INSPECTOR = "envoy.filters.listener.tls_inspector"
const HTTP_INSPECTOR = "envoy.filters.listener.http_inspector"

/** Whether a listener filter's `filter_disabled` predicate holds for a connection to `port`. */
const predicateHolds = (p: Obj | undefined, port: number): boolean => {
  if (p === undefined) return false
  const range = obj(p.destination_port_range)
  if (range !== undefined) return port >= (int(range.start) ?? 0) && port < (int(range.end) ?? 0)
  const or = obj(p.or_match)
  if (or !== undefined) return arr(or.rules).some((r) => predicateHolds(r, port))
  const and = obj(p.and_match)
  if (and !== undefined) return arr(and.rules).every((r) => predicateHolds(r, port))
  const not = obj(p.not_match)
  if (not !== undefined) return !predicateHolds(not, port)
  return p.any_match === true
}

/** Whether the listener runs the listener filter `name` for a connection to `port`. */
const listenerFilterRuns = (listener: Obj, name: string, port: number): boolean => {
  const filter = arr(listener.listener_filters).find((f) => f.name === name)
  return filter !== undefined && !predicateHolds(obj(filter.filter_disabled), port)
}

/** Whether a request to the sidecar's `port` gets through its inbound listener, and to where. */
export const inbound = (input: InboundInput): InboundOutcome => {
  const listener =
    listenerNamed(input.listeners, VIRTUAL_INBOUND_LISTENER) ??
    input.listeners.find((l) => socketAddress(l)?.port === VIRTUAL_INBOUND_PORT)
  if (listener === undefined) return { kind: "no-listener" }
  const http = input.path !== undefined || input.method !== undefined || input.headers !== undefined
  // Without the TLS inspector on the port, the transport stays raw_buffer even for TLS; the HTTP
  // inspector only sniffs plaintext it is enabled for (and finds no HTTP in TLS bytes).
  const tlsSeen = input.tls && listenerFilterRuns(listener, TLS_INSPECTOR, input.port)
  const sniffed = !input.tls && listenerFilterRuns(listener, HTTP_INSPECTOR, input.port)
  const alpn = tlsSeen
    ? (input.alpn ?? (http ? ["istio-http/1.1", "istio"] : ["istio-peer-exchange", "istio"]))
    : sniffed
      ? (input.alpn ?? (http ? ["http/1.1"] : []))
      : []
  const chain = selectFilterChain(listener, {
    destinationPort: input.port,
    destinationIp: input.destinationIp,
    transportProtocol: tlsSeen ? "tls" : "raw_buffer",
    applicationProtocols: alpn,
  })
  if (chain === undefined) return { kind: "no-chain" }
  const tls = tlsContextOf(chain)
  if (input.tls && tls === undefined && httpConnectionManager(chain) !== undefined)
    return { kind: "http-codec-error", chain }
  const passedThrough = input.ownTls === true && tls === undefined
  if (input.tls && tls === undefined && !passedThrough)
    return { kind: "handshake-failed", chain, reason: "TLS to a plaintext chain" }
  if (!input.tls && tls !== undefined) return { kind: "handshake-failed", chain, reason: "plaintext to a TLS chain" }
  if (tls !== undefined && wrapped(tls.require_client_certificate) === true && input.principal === undefined)
    return { kind: "handshake-failed", chain, reason: "no client certificate" }
  const principal = tls !== undefined ? input.principal : undefined
  const req: HttpRequest = {
    host: input.host ?? "*",
    tls: tls !== undefined,
    ...(input.path !== undefined ? { path: input.path } : {}),
    ...(input.method !== undefined ? { method: input.method } : {}),
    ...(input.headers !== undefined ? { headers: input.headers } : {}),
  }
  const base: RbacContext = {
    principal,
    sourceIp: input.sourceIp,
    destinationIp: input.destinationIp,
    destinationPort: input.port,
  }
  let allowedBy: string | undefined
  for (const filter of arr(chain.filters)) {
    if (typeName(filter) !== NETWORK_RBAC) continue
    const d = evaluateRbac(obj(filter.typed_config)!, base)
    if (d.decision === "deny")
      return {
        kind: "denied",
        chain,
        filter: String(filter.name),
        ...(d.policy !== undefined ? { policy: d.policy } : {}),
      }
    allowedBy = d.policy ?? allowedBy
  }
  const hcm = httpConnectionManager(chain)
  if (hcm === undefined) {
    const tcp = tcpTarget(chain)
    const cluster = tcp?.kind === "cluster" ? tcp.cluster : undefined
    return {
      kind: "allowed",
      chain,
      ...(cluster !== undefined ? { cluster } : {}),
      ...(allowedBy !== undefined ? { policy: allowedBy } : {}),
    }
  }
  const ctx: RbacContext = { ...base, http: { path: req.path ?? "/", headers: requestHeaders(req) } }
  for (const filter of arr(hcm.http_filters)) {
    if (typeName(filter) !== HTTP_RBAC) continue
    const d = evaluateRbac(obj(filter.typed_config)!, ctx)
    if (d.decision === "deny")
      return {
        kind: "denied",
        chain,
        filter: String(filter.name),
        ...(d.policy !== undefined ? { policy: d.policy } : {}),
      }
    allowedBy = d.policy ?? allowedBy
  }
  const routeConfig = routeConfigOf(hcm, input.routes ?? [])
  const route = "missing" in routeConfig ? undefined : evaluateRouteConfig(routeConfig, req)
  const cluster = route?.kind === "route" ? route.cluster : undefined
  return {
    kind: "allowed",
    chain,
    ...(cluster !== undefined ? { cluster } : {}),
    ...(route !== undefined ? { route } : {}),
    ...(allowedBy !== undefined ? { policy: allowedBy } : {}),
  }
}
