/**
 * `proxy-config route`: route configurations (static and RDS) with `--name`, and the reference's
 * tables: verbose (default) one row per route of each virtual host — its domains shortened to
 * the two shortest-written forms, its path match and the VirtualService that produced it —
 * skipping passthrough routes; `--verbose=false` the number of virtual hosts per config.
 */

import { describeManagement } from "./clusters.js"
import { asArray, asObject, asObjects, asString, type Json } from "./dump.js"
import { formatTable } from "./table.js"

/** `<prefix>*`, `PathPrefix:<p>`, the exact path, or `regex <re>`; headers are not shown. */
export const describeMatch = (match: unknown): string => {
  const m = asObject(match) ?? {}
  const conditions: Array<string> = []
  if (asString(m.prefix) !== "") conditions.push(`${asString(m.prefix)}*`)
  if (asString(m.path_separated_prefix) !== "") conditions.push(`PathPrefix:${asString(m.path_separated_prefix)}`)
  if (asString(m.path) !== "") conditions.push(asString(m.path))
  const regex = asString(asObject(m.safe_regex)?.regex)
  if (regex !== "") conditions.push(`regex ${regex}`)
  return conditions.join(" ")
}

/** Drops `x.svc.cluster.local` and `x.svc` when the shorter `x` is also listed. */
const withoutExpansions = (domains: ReadonlyArray<string>): ReadonlyArray<string> => {
  const all = new Set(domains)
  const redundant = (d: string) =>
    [".svc.cluster.local", ".svc"].some((suffix) => d.endsWith(suffix) && all.has(d.slice(0, -suffix.length)))
  return domains.filter((d) => !redundant(d))
}

/** The domains without a port (IPv6 literals kept), the first two and a count of the rest. */
export const describeRouteDomains = (domains: ReadonlyArray<string>): string => {
  if (domains.length === 0) return ""
  if (domains.length === 1) return domains[0] ?? ""
  const portless = withoutExpansions(
    domains.filter((d) => !d.includes(":") || (d.split(":").length > 3 && d.endsWith("]"))),
  )
  return portless.length > 2
    ? `${portless.slice(0, 2).join(", ")} + ${portless.length - 2} more...`
    : portless.join(", ")
}

const routeCluster = (route: Json): string => asString(asObject(route.route)?.cluster)

const isPassthrough = (route: Json): boolean => routeCluster(route) === "PassthroughCluster"

/** For inline route configs of listeners: the lone catch-all cluster, else the hosts and matches. */
export const describeRouteConfig = (config: Json): string => {
  const hosts = asObjects(config.virtual_hosts)
  const only = hosts.length === 1 ? hosts[0] : undefined
  const routes = asObjects(only?.routes)
  const domains = asArray(only?.domains).map(asString)
  if (only !== undefined && routes.length === 1 && domains.length === 1 && domains[0] === "*") {
    const cluster = routeCluster(routes[0] ?? {})
    if (cluster !== "" && asString(asObject(routes[0]?.match)?.prefix) === "/") return cluster
  }
  const described = hosts.map((vh) => {
    const names = asArray(vh.domains).map(asString)
    const matches = asObjects(vh.routes)
      .map((r) => describeMatch(r.match))
      .join(", ")
    return names.length === 1 && names[0] === "*" ? matches : `${names.join(",")} ${matches}`
  })
  return `Inline Route: ${described.join("; ")}`
}

/** Numeric names (ports) first in numeric order, then the others by name. */
const byName = (a: Json, b: Json): number => {
  const [x, y] = [asString(a.name), asString(b.name)]
  const [nx, ny] = [/^\d+$/.test(x) ? Number(x) : undefined, /^\d+$/.test(y) ? Number(y) : undefined]
  if (nx !== undefined && ny !== undefined) return nx - ny
  if (nx !== undefined) return -1
  if (ny !== undefined) return 1
  return x < y ? -1 : x > y ? 1 : 0
}

export const filteredRoutes = (configs: ReadonlyArray<Json>, name: string): ReadonlyArray<Json> =>
  configs.filter((c) => name === "" || asString(c.name) === name).sort(byName)

export const routeTable = (configs: ReadonlyArray<Json>, name: string, verbose: boolean): string => {
  const chosen = filteredRoutes(configs, name)
  if (!verbose) {
    return formatTable([
      ["NAME", "VIRTUAL HOSTS"],
      ...chosen.map((c) => [asString(c.name), `${asObjects(c.virtual_hosts).length}`]),
    ])
  }
  return formatTable([
    ["NAME", "VHOST NAME", "DOMAINS", "MATCH", "VIRTUAL SERVICE"],
    ...chosen.flatMap((config) =>
      asObjects(config.virtual_hosts).flatMap((vh) => {
        const domains = describeRouteDomains(asArray(vh.domains).map(asString))
        const routes = asObjects(vh.routes)
        if (routes.length === 0) return [[asString(config.name), asString(vh.name), domains, "/*", "404"]]
        return routes
          .filter((r) => !isPassthrough(r))
          .map((r) => [
            asString(config.name),
            asString(vh.name),
            domains,
            describeMatch(r.match),
            describeManagement(r.metadata),
          ])
      }),
    ),
  ])
}
