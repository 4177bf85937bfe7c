/**
 * The HTTP filter entries that reference a proxy's WasmPlugins through ECDS, and where they go in
 * an HTTP filter chain (the reference's order): AUTHN plugins before the JWT filter, AUTHZ
 * plugins before the RBAC filters, STATS then unspecified-phase plugins after them, before the
 * CORS/fault/router tail; within a phase by priority. Each entry only names its config: the
 * proxy fetches it over ADS (ECDS) and waits for it (initial fetch timeout 0), so a listener
 * never serves traffic without its plugins.
 */

import type { PushContext } from "../../model/push-context.js"
import type { HttpFilter } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { Filter, TypedConfig } from "../well-known.js"
import { wasmResourceName, wasmSource } from "./wasm-config.js"
import { type ListenerDirection, phaseOf, type WasmPhase, wasmPluginsForProxy } from "./wasm-plugins.js"

export interface WasmFilterRef {
  /** The HCM `http_filters` entry. */
  readonly filter: HttpFilter
  /** The filter it goes before (undefined: before the router), see `placeWasmFilters` for fallbacks. */
  readonly before?: string
  readonly phase: WasmPhase
}

const GRPC_STATS = "envoy.filters.http.grpc_stats"

/** Filters that close a chain: Wasm STATS and unspecified-phase plugins go before the first of them. */
const TAIL = new Set<string>([Filter.cors, Filter.fault, GRPC_STATS, Filter.router])

/**
 * The config types the proxy accepts for a plugin's name: the Wasm filter, and RBAC, which the
 * agent substitutes when it cannot fetch a module (deny-all for fail-closed plugins, allow-all
 * for fail-open ones), as the reference's agent does.
 */
export const WASM_CONFIG_TYPE_URLS: ReadonlyArray<string> = [TypedConfig.wasmHttp, TypedConfig.rbac]

/** An HTTP filter whose config comes from ECDS under `name`. */
export const ecdsHttpFilter = (name: string): HttpFilter => ({
  name,
  config_discovery: {
    config_source: { ads: {}, initial_fetch_timeout: { seconds: "0" }, resource_api_version: "V3" },
    type_urls: WASM_CONFIG_TYPE_URLS,
  },
})

const anchorOf = (phase: WasmPhase): string | undefined =>
  phase === "AUTHN" ? Filter.jwt : phase === "AUTHZ" ? Filter.rbac : undefined

/**
 * The Wasm filter entries for a listener of `proxy` (its port, when the listener has one: plugins
 * restricted to ports need it), in chain order. Plugins whose module URL cannot be served are left
 * out (`generateExtensionConfigs` reports them).
 */
export const wasmFilterRefs = (
  push: PushContext,
  proxy: ProxyView,
  direction: ListenerDirection,
  port?: number,
): ReadonlyArray<WasmFilterRef> =>
  wasmPluginsForProxy(push, proxy, undefined, port === undefined ? { direction } : { direction, port })
    .filter((plugin) => wasmSource(plugin.spec.url).kind !== "unsupported")
    .map((plugin) => {
      const phase = phaseOf(plugin.spec)
      const before = anchorOf(phase)
      return { filter: ecdsHttpFilter(wasmResourceName(plugin)), ...(before !== undefined ? { before } : {}), phase }
    })

const isRbac = (name: unknown): boolean => typeof name === "string" && name.startsWith(Filter.rbac)

/**
 * `filters` with the Wasm entries placed by phase. AUTHN goes before the first JWT filter, else
 * where AUTHZ goes; AUTHZ before the first RBAC filter, else after the last JWT filter, else where
 * STATS goes; STATS and unspecified-phase plugins before the first tail filter (CORS, fault, gRPC
 * stats, router) and after every auth filter.
 */
export const placeWasmFilters = (
  filters: ReadonlyArray<HttpFilter>,
  refs: ReadonlyArray<WasmFilterRef>,
): ReadonlyArray<HttpFilter> => {
  if (refs.length === 0) return filters
  const names = filters.map((f) => f.name)
  const firstTail = names.findIndex((n) => typeof n === "string" && TAIL.has(n))
  const tail = firstTail < 0 ? filters.length : firstTail
  const firstJwt = names.indexOf(Filter.jwt)
  const lastJwt = names.lastIndexOf(Filter.jwt)
  const firstRbac = names.findIndex(isRbac)
  const lastRbac = names.reduce<number>((last, n, i) => (isRbac(n) ? i : last), -1)
  const authzAt = firstRbac >= 0 ? firstRbac : lastJwt >= 0 ? lastJwt + 1 : tail
  const authnAt = Math.min(firstJwt >= 0 ? firstJwt : authzAt, authzAt)
  const statsAt = Math.max(tail, lastRbac + 1, lastJwt + 1, authzAt)
  const of = (phases: ReadonlyArray<WasmPhase>) => refs.filter((r) => phases.includes(r.phase)).map((r) => r.filter)
  return [
    ...filters.slice(0, authnAt),
    ...of(["AUTHN"]),
    ...filters.slice(authnAt, authzAt),
    ...of(["AUTHZ"]),
    ...filters.slice(authzAt, statsAt),
    ...of(["STATS"]),
    ...of(["UNSPECIFIED_PHASE"]),
    ...filters.slice(statsAt),
  ]
}
