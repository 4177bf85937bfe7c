/**
 * A proxy config dump as the proxy's admin `/config_dump` prints it (and as mesh-discovery's
 * `/debug/config_dump?proxyID=` mirrors it for proxyless clients): `{"configs": [...]}`, each
 * entry an Any-typed `envoy.admin.v3.*ConfigDump` section with the protos' snake_case names.
 * Sections are picked by the tail of their `@type`, so v2 and v3 admin dumps read alike.
 */
import { Either } from "effect"

export type Json = Record<string, unknown>

export const asObject = (v: unknown): Json | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined
export const asArray = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
export const asObjects = (v: unknown): ReadonlyArray<Json> =>
  asArray(v).flatMap((item) => (asObject(item) === undefined ? [] : [item as Json]))
export const asString = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? `${v}` : "")
/** A number, a string number, or a wrapper `{value: n}` (UInt32Value and friends). */
export const asNumber = (v: unknown): number | undefined => {
  const inner = asObject(v)?.value ?? v
  if (typeof inner === "number") return inner
  if (typeof inner === "string" && inner !== "" && Number.isFinite(Number(inner))) return Number(inner)
  return undefined
}

export interface ConfigDump {
  readonly raw: Json
  readonly configs: ReadonlyArray<Json>
}

export const SECTION = {
  bootstrap: "BootstrapConfigDump",
  clusters: "ClustersConfigDump",
  listeners: "ListenersConfigDump",
  routes: "RoutesConfigDump",
  endpoints: "EndpointsConfigDump",
  secrets: "SecretsConfigDump",
} as const

const typeTail = (section: Json): string => asString(section["@type"]).split(".").pop() ?? ""

/** Parses a dump's text; the error says why it is not one. */
export const parseConfigDump = (text: string): Either.Either<ConfigDump, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return Either.left(`not JSON: ${(e as Error).message}`)
  }
  const raw = asObject(parsed)
  if (raw === undefined || !Array.isArray(raw.configs)) {
    return Either.left('not a proxy config dump: no "configs" array (expected the admin /config_dump output)')
  }
  const configs = asObjects(raw.configs)
  if (configs.length > 0 && !configs.some((c) => typeTail(c).endsWith("ConfigDump"))) {
    return Either.left('not a proxy config dump: no "configs" entry has an @type ending in ConfigDump')
  }
  return Either.right({ raw, configs })
}

export const section = (dump: ConfigDump, name: string): Json | undefined =>
  dump.configs.find((c) => typeTail(c) === name)

/** Static then dynamic active clusters, as the proxy knows them. */
export const clustersOf = (dump: ConfigDump): ReadonlyArray<Json> => {
  const s = section(dump, SECTION.clusters)
  if (s === undefined) return []
  return [...asObjects(s.static_clusters), ...asObjects(s.dynamic_active_clusters)].flatMap((entry) => {
    const cluster = asObject(entry.cluster)
    return cluster === undefined ? [] : [cluster]
  })
}

/** Static and dynamic listeners (active state, else warming). */
export const listenersOf = (dump: ConfigDump): ReadonlyArray<Json> => {
  const s = section(dump, SECTION.listeners)
  if (s === undefined) return []
  const statics = asObjects(s.static_listeners).flatMap((e) => (asObject(e.listener) ? [e.listener as Json] : []))
  const dynamics = asObjects(s.dynamic_listeners).flatMap((e) => {
    const state = asObject(e.active_state) ?? asObject(e.warming_state)
    const listener = asObject(state?.listener)
    return listener === undefined ? [] : [listener]
  })
  return [...statics, ...dynamics]
}

export const routeConfigsOf = (dump: ConfigDump): ReadonlyArray<Json> => {
  const s = section(dump, SECTION.routes)
  if (s === undefined) return []
  return [...asObjects(s.static_route_configs), ...asObjects(s.dynamic_route_configs)].flatMap((e) =>
    asObject(e.route_config) ? [e.route_config as Json] : [],
  )
}

export const endpointConfigsOf = (dump: ConfigDump): ReadonlyArray<Json> => {
  const s = section(dump, SECTION.endpoints)
  if (s === undefined) return []
  return [...asObjects(s.static_endpoint_configs), ...asObjects(s.dynamic_endpoint_configs)].flatMap((e) =>
    asObject(e.endpoint_config) ? [e.endpoint_config as Json] : [],
  )
}

export const bootstrapOf = (dump: ConfigDump): Json | undefined => asObject(section(dump, SECTION.bootstrap)?.bootstrap)
