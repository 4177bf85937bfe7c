/**
 * `meshctl proxy-status <pod>`: what the control plane would send one proxy against what that
 * proxy holds, per type (clusters, listeners, routes). Only dynamic (xDS-delivered) resources
 * count: static ones come from the bootstrap, which the control plane does not send. Resources
 * are compared as sorted-key JSON, ordered by name, without the bookkeeping (`@type`, versions,
 * `last_updated`) that legitimately differs between the two dumps.
 */
import { asObject, asObjects, asString, type ConfigDump, type Json, SECTION, section } from "./dump.js"
import { unifiedDiff } from "./unified-diff.js"

/** Context lines around each change, as the reference prints them. */
export const DIFF_CONTEXT = 7

export interface TypeComparison {
  readonly type: "Clusters" | "Listeners" | "Routes"
  /** "" when they match. */
  readonly diff: string
  /** Routes only: when the proxy last loaded a route configuration (ISO text), if it says. */
  readonly lastLoaded?: string
}

const dynamicClusters = (dump: ConfigDump): ReadonlyArray<Json> =>
  asObjects(section(dump, SECTION.clusters)?.dynamic_active_clusters).flatMap((e) => {
    const cluster = asObject(e.cluster)
    return cluster === undefined ? [] : [cluster]
  })

const dynamicListeners = (dump: ConfigDump): ReadonlyArray<Json> =>
  asObjects(section(dump, SECTION.listeners)?.dynamic_listeners).flatMap((e) => {
    const listener = asObject(asObject(e.active_state)?.listener)
    return listener === undefined ? [] : [listener]
  })

const dynamicRouteEntries = (dump: ConfigDump) => asObjects(section(dump, SECTION.routes)?.dynamic_route_configs)

const dynamicRoutes = (dump: ConfigDump): ReadonlyArray<Json> =>
  dynamicRouteEntries(dump).flatMap((e) => {
    const route = asObject(e.route_config)
    return route === undefined ? [] : [route]
  })

/** JSON with object keys sorted at every level, so key order never shows as a difference. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  const object = asObject(value)
  if (object === undefined) return value
  return Object.fromEntries(
    Object.keys(object)
      .sort()
      .map((key) => [key, canonical(object[key])]),
  )
}

const render = (resources: ReadonlyArray<Json>): string => {
  const cleaned = resources
    .map(({ "@type": _, ...rest }) => rest)
    .sort((a, b) => asString(a.name).localeCompare(asString(b.name)))
  return JSON.stringify(canonical(cleaned), null, 2)
}

const compare = (
  type: TypeComparison["type"],
  controlPlane: ReadonlyArray<Json>,
  proxy: ReadonlyArray<Json>,
): TypeComparison => ({
  type,
  diff: unifiedDiff(render(controlPlane), render(proxy), { from: `Meshd ${type}`, to: `Proxy ${type}` }, DIFF_CONTEXT),
})

/** The newest `last_updated` of the proxy's dynamic route configurations. */
const routesLastLoaded = (dump: ConfigDump): string | undefined =>
  dynamicRouteEntries(dump)
    .map((e) => asString(e.last_updated))
    .filter((t) => t !== "" && !Number.isNaN(Date.parse(t)))
    .sort((a, b) => Date.parse(b) - Date.parse(a))[0]

export const compareDumps = (controlPlane: ConfigDump, proxy: ConfigDump): ReadonlyArray<TypeComparison> => {
  const lastLoaded = routesLastLoaded(proxy)
  return [
    compare("Clusters", dynamicClusters(controlPlane), dynamicClusters(proxy)),
    compare("Listeners", dynamicListeners(controlPlane), dynamicListeners(proxy)),
    { ...compare("Routes", dynamicRoutes(controlPlane), dynamicRoutes(proxy)), ...(lastLoaded ? { lastLoaded } : {}) },
  ]
}

/** A time as Go's RFC1123 layout prints it in UTC: `Thu, 26 Nov 2026 22:07:12 UTC`. */
const rfc1123 = (iso: string): string => new Date(iso).toUTCString().replace(/GMT$/, "UTC")

/** The report: per type "<Type> Match" or "<Type> Don't Match" and its diff. */
export const comparisonReport = (comparisons: ReadonlyArray<TypeComparison>): string =>
  comparisons
    .map((c) => {
      if (c.diff !== "") return `${c.type} Don't Match\n${c.diff.replace(/\n$/, "")}`
      if (c.type === "Routes")
        return `Routes Match (RDS last loaded at ${c.lastLoaded ? rfc1123(c.lastLoaded) : "<none>"})`
      return `${c.type} Match`
    })
    .join("\n")

/** Whether every type matches. */
export const allMatch = (comparisons: ReadonlyArray<TypeComparison>): boolean => comparisons.every((c) => c.diff === "")
