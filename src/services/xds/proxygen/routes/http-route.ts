/**
 * VirtualService HTTP routes → Envoy `config.route.v3.Route` objects for one listener (port,
 * gateway, source proxy), and the route a service without a VirtualService gets.
 *
 * Each http route gives one Envoy route per match that applies to the listener (a route without
 * matches gives one catching everything); the first catch-all ends the list, as later routes
 * could never be reached. Destinations become `outbound|port|subset|host` clusters whether or
 * not the host is known: an unknown one has no cluster, so the proxy answers 503, as the
 * reference does (and the generator warns). A route to a cluster whose DestinationRule hashes
 * carries the hash key (hash-policy.ts): without it the cluster hashes nothing.
 */
import type { HTTPRoute } from "../../../config-model/schemas/virtual-service.js"
import { endpointPickersOf } from "../../../gateway-api/inference-pools.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import { type Draft, typed } from "../../protocol/typed-any.js"
import type {
  DirectResponseAction,
  HttpFilter,
  ProtoAny,
  RedirectAction,
  Route,
  RouteAction,
  RouteAction_RequestMirrorPolicy,
} from "../../protocol/xds-types.js"
import { Filter, outboundClusterName, TypedConfig } from "../well-known.js"
import type { HttpMatch } from "./delegate.js"
import { type DestinationHashes, type DestinationSpec, destinationCluster, destinationHashes } from "./destinations.js"
import { EXT_PROC_FILTER, extProcListenerFilter, extProcPerRoute } from "./ext-proc.js"
import { type DestinationHash, NO_HASH } from "./hash-policy.js"
import { isCatchAll, matchApplies, type RouteTarget, routeMatch } from "./http-match.js"
import { headerFields, headerMutations, percentPerHundred, percentPerMillion } from "./proto-values.js"
import { corsConfig, defaultRetryPolicy, faultConfig, retryPolicy, timeoutFields } from "./route-policies.js"
import type { VirtualServiceResource } from "./virtual-services.js"

export type { RouteTarget } from "./http-match.js"

export interface HttpRoutes {
  readonly routes: ReadonlyArray<Route>
  readonly warnings: ReadonlyArray<GeneratorNotice>
  /** What the routes read of DestinationRules (their destinations' hashes), for cache keys; "" for nothing. */
  readonly hashKey: string
}

/** The name of the route a service without a VirtualService gets. */
export const DEFAULT_ROUTE_NAME = "default"

/** The tracing operation of a route to `host:port` (`host:port/*` for the whole service). */
export const traceOperation = (host: string, port: number, path = "/*"): string => `${host}:${port}${path}`

/**
 * The route a service port without a VirtualService gets: everything to its cluster, no timeout,
 * default retries, and the cluster's hash key when its DestinationRule hashes.
 */
export const defaultHttpRoute = (host: string, port: number, hash: DestinationHash = NO_HASH): Route => ({
  name: DEFAULT_ROUTE_NAME,
  match: { prefix: "/" },
  route: {
    cluster: outboundClusterName(host, port),
    ...timeoutFields(undefined),
    retry_policy: defaultRetryPolicy(),
    ...(hash.policy !== undefined ? { hash_policy: [hash.policy] } : {}),
  },
  decorator: { operation: traceOperation(host, port) },
})

// ---------------------------------------------------------------------------------------------
// Actions

const REDIRECT_CODES: Readonly<Record<number, NonNullable<RedirectAction["response_code"]>>> = {
  301: "MOVED_PERMANENTLY",
  302: "FOUND",
  303: "SEE_OTHER",
  307: "TEMPORARY_REDIRECT",
  308: "PERMANENT_REDIRECT",
}

/** The path part of a redirect: the whole path (`uri`), or the matched prefix replaced (`prefixRewrite`). */
const redirectPath = (redirect: NonNullable<HTTPRoute["redirect"]>): RedirectAction => {
  if (redirect.prefixRewrite !== undefined && redirect.prefixRewrite !== "")
    return { prefix_rewrite: redirect.prefixRewrite }
  return redirect.uri === undefined || redirect.uri === "" ? {} : { path_redirect: redirect.uri }
}

const redirectAction = (redirect: NonNullable<HTTPRoute["redirect"]>, listenerPort: number): RedirectAction => ({
  ...(redirect.scheme ? { scheme_redirect: redirect.scheme } : {}),
  ...(redirect.authority ? { host_redirect: redirect.authority } : {}),
  // The proxy cannot derive the port from the request, but the routes are built per port.
  ...(redirect.port !== undefined
    ? { port_redirect: redirect.port }
    : redirect.derivePort === "FROM_REQUEST_PORT"
      ? { port_redirect: listenerPort }
      : {}),
  ...redirectPath(redirect),
  response_code: REDIRECT_CODES[redirect.redirectCode ?? 301] ?? "MOVED_PERMANENTLY",
})

const directResponseAction = (response: NonNullable<HTTPRoute["directResponse"]>): DirectResponseAction => ({
  status: response.status,
  ...(response.body?.string !== undefined
    ? { body: { inline_string: response.body.string } }
    : response.body?.bytes !== undefined
      ? { body: { inline_bytes: response.body.bytes } }
      : {}),
})

/** The mirror policies of a route: legacy `mirror` (+ `mirrorPercentage`/`mirrorPercent`) then `mirrors`. */
const mirrorPolicies = (
  http: HTTPRoute,
  cluster: (d: DestinationSpec) => string,
): ReadonlyArray<RouteAction_RequestMirrorPolicy> => {
  const fraction = (percentage: { readonly value?: number | undefined } | undefined, percent?: number) =>
    percentage !== undefined
      ? (percentage.value ?? 0) > 0
        ? percentPerMillion(percentage.value ?? 0)
        : undefined
      : percent !== undefined
        ? percent > 0
          ? percentPerHundred(percent)
          : undefined
        : percentPerHundred(100)
  const mirrors = [
    ...(http.mirror !== undefined
      ? [{ destination: http.mirror, value: fraction(http.mirrorPercentage, http.mirrorPercent) }]
      : []),
    ...(http.mirrors ?? []).map((m) => ({ destination: m.destination, value: fraction(m.percentage) })),
  ]
  return mirrors.flatMap(({ destination, value }) =>
    value === undefined
      ? []
      : [
          {
            cluster: cluster(destination),
            runtime_fraction: { default_value: value },
            trace_sampled: { value: false },
          },
        ],
  )
}

interface Built {
  /** The Route without match, name and decorator. */
  readonly body: Draft<Route>
}

const buildAction = (
  push: PushContext,
  vs: VirtualServiceResource,
  http: HTTPRoute,
  index: number,
  target: RouteTarget,
  hashes: DestinationHashes,
  warn: (message: string) => void,
): Built => {
  const namespace = vs.meta.namespace
  const headers = headerMutations(http.headers)
  const body: Draft<Route> = { ...headerFields(headers) }
  const perFilter: Record<string, ProtoAny> = {}
  if (http.fault !== undefined && http.redirect === undefined && http.directResponse === undefined) {
    const fault = faultConfig(http.fault)
    if (fault !== undefined) perFilter[Filter.fault] = fault
    else warn(`field http[${index}].fault: no delay or abort the proxy supports; fault ignored`)
  }
  if (http.corsPolicy !== undefined) perFilter[Filter.cors] = corsConfig(http.corsPolicy)
  // A route to an InferencePool asks the pool's endpoint picker which pod to use.
  const picker = http.name !== undefined ? endpointPickersOf(vs.meta.annotations).get(http.name) : undefined
  if (picker !== undefined && http.redirect === undefined && http.directResponse === undefined)
    perFilter[EXT_PROC_FILTER] = extProcPerRoute(picker)

  if (http.redirect !== undefined) body.redirect = redirectAction(http.redirect, target.port)
  else if (http.directResponse !== undefined) body.direct_response = directResponseAction(http.directResponse)
  else {
    const cluster = (d: DestinationSpec, at: string) =>
      destinationCluster(push, d, namespace, target.port, (host) =>
        warn(`field ${at}.host: ${host} is not in the service registry; requests to it get 503`),
      )
    const all = http.route ?? []
    // Zero weights are dropped when other destinations remain (a lone destination gets all traffic).
    const kept = all.map((d, j) => ({ d, j })).filter(({ d }) => all.length === 1 || (d.weight ?? 0) > 0)
    const weighted = kept.map(({ d, j }) => {
      const ops = headerMutations(d.headers)
      return {
        name: cluster(d.destination, `http[${index}].route[${j}].destination`),
        weight: all.length === 1 ? 100 : (d.weight ?? 0),
        ops,
        hash: hashes.byDestination.get(d) ?? NO_HASH,
      }
    })
    const action: Draft<RouteAction> = {}
    // As the reference: each destination's hash key, in order; a lone hashing destination's
    // retries may go back to the host they hashed to.
    const hashPolicies = weighted.flatMap((w) => (w.hash.policy !== undefined ? [w.hash.policy] : []))
    if (hashPolicies.length > 0) action.hash_policy = hashPolicies
    const consistent = weighted.length === 1 && weighted[0]!.hash.consistent
    let authority = headers.authority
    if (http.rewrite?.authority) authority = http.rewrite.authority
    if (weighted.length === 1) {
      const only = weighted[0]!
      action.cluster = only.name
      // A lone destination's header operations join the route's.
      Object.assign(
        body,
        headerFields({
          request_headers_to_add: [...(body.request_headers_to_add ?? []), ...only.ops.request_headers_to_add],
          request_headers_to_remove: [...(body.request_headers_to_remove ?? []), ...only.ops.request_headers_to_remove],
          response_headers_to_add: [...(body.response_headers_to_add ?? []), ...only.ops.response_headers_to_add],
          response_headers_to_remove: [
            ...(body.response_headers_to_remove ?? []),
            ...only.ops.response_headers_to_remove,
          ],
        }),
      )
      if (authority === undefined && only.ops.authority !== undefined) authority = only.ops.authority
    } else if (weighted.length > 1) {
      action.weighted_clusters = {
        clusters: weighted.map((w) => ({
          name: w.name,
          weight: { value: w.weight },
          ...headerFields(w.ops),
          ...(w.ops.authority !== undefined ? { host_rewrite_literal: w.ops.authority } : {}),
        })),
      }
    } else {
      warn(`field http[${index}].route: no destination with a weight; route dropped`)
    }
    const rewrite = http.rewrite
    if (rewrite?.uriRegexRewrite?.match && rewrite.uriRegexRewrite.rewrite !== undefined)
      action.regex_rewrite = {
        pattern: { regex: rewrite.uriRegexRewrite.match },
        substitution: rewrite.uriRegexRewrite.rewrite,
      }
    else if (rewrite?.uri) action.prefix_rewrite = rewrite.uri
    if (authority !== undefined) action.host_rewrite_literal = authority
    Object.assign(action, timeoutFields(http.timeout))
    const retries = retryPolicy(http.retries, consistent)
    if (retries !== undefined) action.retry_policy = retries
    const mirrors = mirrorPolicies(http, (d) => cluster(d, `http[${index}].mirror`))
    if (mirrors.length > 0) action.request_mirror_policies = mirrors
    if (weighted.length > 0) body.route = action
  }
  if (Object.keys(perFilter).length > 0) body.typed_per_filter_config = perFilter
  return { body }
}

/** The tracing operation of a route: `host:port<path>` for one cluster, else `<vs name>:port<path>`. */
const operationOf = (route: Route, vsName: string, port: number): string => {
  const match = route.match ?? {}
  const path =
    match.prefix !== undefined
      ? `${match.prefix}*`
      : match.path !== undefined
        ? match.path
        : match.safe_regex?.regex !== undefined
          ? match.safe_regex.regex
          : "/*"
  const cluster = route.route?.cluster
  if (typeof cluster === "string") {
    const [, clusterPort, , host] = cluster.split("|")
    if (host !== undefined) return traceOperation(host, Number(clusterPort), path)
  }
  return traceOperation(vsName, port, path)
}

const routeName = (http: HTTPRoute, match: HttpMatch | undefined): string | undefined => {
  const own = http.name ?? ""
  const sub = match?.name ?? ""
  const name = own !== "" && sub !== "" ? `${own}.${sub}` : own !== "" ? own : sub
  return name === "" ? undefined : name
}

const translate = (
  push: PushContext,
  vs: VirtualServiceResource,
  target: RouteTarget,
  hashes: DestinationHashes,
): HttpRoutes => {
  const warnings: Array<GeneratorNotice> = []
  const warn = (message: string) =>
    warnings.push({
      level: "warning",
      scope: "model",
      message: `VirtualService ${vs.meta.namespace}/${vs.meta.name}: ${message}`,
    })
  const routes: Array<Route> = []
  const https = vs.spec.http ?? []
  for (const [index, http] of https.entries()) {
    // Delegating routes are replaced by their delegate's routes before translation.
    if (http.delegate !== undefined) continue
    const matches: ReadonlyArray<HttpMatch | undefined> = (http.match ?? []).length === 0 ? [undefined] : http.match!
    let built: Built | undefined
    let catchAll = false
    for (const [j, match] of matches.entries()) {
      if (!matchApplies(match, target, vs.meta.namespace)) continue
      built ??= buildAction(push, vs, http, index, target, hashes, warn)
      const { body } = built
      if (body.route === undefined && body.redirect === undefined && body.direct_response === undefined) break
      const translated = routeMatch(match)
      for (const key of translated.skipped)
        warn(
          `field http[${index}].match[${j}].headers.${key}: JWT claim routing needs a gateway with RequestAuthentication; condition ignored`,
        )
      const name = routeName(http, match)
      const route: Draft<Route> = {
        ...(name !== undefined ? { name } : {}),
        match: translated.match,
        ...body,
      }
      route.decorator = { operation: operationOf(route, vs.meta.name, target.port) }
      routes.push(route)
      if (isCatchAll(match)) {
        catchAll = true
        break
      }
    }
    if (catchAll) break
  }
  return { routes, warnings, hashKey: hashes.key }
}

const routesByPush: LocalSlot<WeakMap<VirtualServiceResource, Map<string, HttpRoutes>>, PushContext> = {
  make: () => new WeakMap(),
}

/** Whether any match of the VirtualService depends on who asks (labels, namespace). */
const readsSource = (vs: VirtualServiceResource): boolean =>
  (vs.spec.http ?? []).some((h) =>
    (h.match ?? []).some((m) => Object.keys(m.sourceLabels ?? {}).length > 0 || (m.sourceNamespace ?? "") !== ""),
  )

/**
 * The Envoy routes of `vs`'s http routes for `target` (memoised per push, VirtualService object
 * and what of the target the result reads: its port and gateways, who asks when a match reads
 * that, and the hashes of the destinations as the asking proxy's DestinationRules set them).
 */
export const httpRoutesFor = (push: PushContext, vs: VirtualServiceResource, target: RouteTarget): HttpRoutes => {
  const byVs = push.local(routesByPush)
  let byTarget = byVs.get(vs)
  if (byTarget === undefined) {
    byTarget = new Map()
    byVs.set(vs, byTarget)
  }
  const gateways = [...(target.gateway !== undefined ? [target.gateway] : []), ...(target.gateways ?? [])].join(",")
  const hashes = destinationHashes(push, vs, target)
  const key = `${
    readsSource(vs)
      ? JSON.stringify([target.port, gateways, target.sourceNamespace, Object.entries(target.sourceLabels).sort()])
      : `${target.port}|${gateways}`
  }|${hashes.key}`
  let result = byTarget.get(key)
  if (result === undefined) {
    result = translate(push, vs, target, hashes)
    byTarget.set(key, result)
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// Filters

/** The optional HTTP filters routes use through `typed_per_filter_config`, in the reference's chain order. */
export const httpFilterNamesNeeded = (routes: ReadonlyArray<Route>): ReadonlyArray<string> => {
  const used = new Set<string>()
  const scan = (config: unknown) => {
    if (typeof config === "object" && config !== null) for (const name of Object.keys(config)) used.add(name)
  }
  for (const route of routes) {
    scan(route.typed_per_filter_config)
    const clusters = route.route?.weighted_clusters?.clusters
    for (const c of clusters ?? []) scan(c.typed_per_filter_config)
  }
  return [EXT_PROC_FILTER, Filter.fault, Filter.cors].filter((name) => used.has(name))
}

/** The HttpFilter entry of an optional filter named by `httpFilterNamesNeeded` (placed before the router). */
export const optionalHttpFilter = (name: string): HttpFilter =>
  name === EXT_PROC_FILTER
    ? extProcListenerFilter()
    : { name, typed_config: name === Filter.cors ? typed(TypedConfig.cors, {}) : typed(TypedConfig.fault, {}) }
