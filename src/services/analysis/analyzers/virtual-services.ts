/**
 * VirtualService analyzers: what its destinations (host and port), gateways and subsets refer to
 * exists (MSH0101), its hosts are on its gateways (MSH0132), mesh-bound hosts are not defined
 * twice for the same namespaces (MSH0109), ambiguous destination ports (MSH0112), shadowed rules
 * and matches (MSH0130/0131). Host visibility follows exportTo (exported-hosts.ts).
 * Invalid regular expressions are schema errors here (MSH0106): the config model checks them.
 */
import { GATEWAY_API_GROUP } from "../../config-model/kinds.js"
import { meshGatewayName } from "../../gateway-api/model.js"
import type { Analyzer } from "../analyzer.js"
import { ALL_NAMESPACES, exportScopes, hostLookup } from "../exported-hosts.js"
import { type MessageType, MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  type FieldPath,
  fqdn,
  hostCovers,
  type Message,
  message,
  num,
  rec,
  type Snapshot,
  str,
  strs,
} from "../snapshot.js"

interface DestinationAt {
  readonly path: FieldPath
  readonly destination: Readonly<Record<string, unknown>>
  /** A mirror destination: messages call its host a "mirror host". */
  readonly mirror: boolean
}

const destinationsOf = (vs: Entry): ReadonlyArray<DestinationAt> => {
  const out: Array<DestinationAt> = []
  for (const section of ["http", "tcp", "tls"] as const) {
    arr(vs.body[section]).forEach((route, i) => {
      arr(rec(route).route).forEach((r, j) => {
        out.push({
          path: ["spec", section, i, "route", j, "destination", "host"],
          destination: rec(rec(r).destination),
          mirror: false,
        })
      })
      if (section === "http") {
        const mirror = rec(route).mirror
        if (mirror !== undefined)
          out.push({ path: ["spec", "http", i, "mirror", "host"], destination: rec(mirror), mirror: true })
        arr(rec(route).mirrors).forEach((m, j) => {
          out.push({
            path: ["spec", "http", i, "mirrors", j, "destination", "host"],
            destination: rec(rec(m).destination),
            mirror: true,
          })
        })
      }
    })
  }
  return out
}

/** The gateways of a VirtualService as `namespace/name` (`mesh` kept as is). */
const gatewaysOf = (vs: Entry): ReadonlyArray<string> => {
  const gateways = strs(vs.body.gateways)
  return gateways.map((g) => (g === "mesh" || g.includes("/") ? g : `${vs.namespace}/${g.split(".")[0]}`))
}

const isMeshBound = (vs: Entry): boolean => {
  const gateways = strs(vs.body.gateways)
  return gateways.length === 0 || gateways.includes("mesh")
}

/**
 * Each destination's host is visible from the VirtualService (exportTo honoured, see
 * exported-hosts.ts) and serves the port it names; without a port, a host serving several ports
 * is ambiguous (MSH0112), whatever gateways the VirtualService is bound to.
 */
const destinationHosts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const lookup = hostLookup(snapshot)
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService")) {
    const exportTo = strs(vs.body.exportTo)
    for (const { path, destination, mirror } of destinationsOf(vs)) {
      const host = str(destination.host)
      const target = lookup(vs.namespace, exportTo, host)
      if (target === undefined) {
        out.push(
          message(
            MessageTypes.ReferencedResourceNotFound,
            vs,
            `Referenced ${mirror ? "mirror host" : "host"} not found: "${host}"`,
            path,
          ),
        )
        continue
      }
      const port = num(rec(destination.port).number)
      if (port === undefined) {
        if (target.ports.length > 1)
          out.push(
            message(
              MessageTypes.VirtualServiceDestinationPortSelectorRequired,
              vs,
              `This VirtualService routes to a service "${host}" that exposes multiple ports [${target.ports.join(" ")}]. Specifying a port in the destination is required to disambiguate.`,
              path,
            ),
          )
      } else if (!target.ports.includes(port))
        out.push(
          message(
            MessageTypes.ReferencedResourceNotFound,
            vs,
            `Referenced host:port not found: "${host}:${port}"`,
            path,
          ),
        )
    }
  }
  return out
}

const destinationSubsets = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const subsets = new Set<string>()
  const wildcard: Array<{ host: string; subsets: ReadonlyArray<string> }> = []
  for (const dr of snapshot.ofKind("DestinationRule")) {
    const host = fqdn(str(dr.body.host), dr.namespace, snapshot.domainSuffix)
    const names = arr(dr.body.subsets).map((s) => str(rec(s).name))
    if (host.includes("*")) wildcard.push({ host, subsets: names })
    else for (const name of names) subsets.add(`${host}+${name}`)
  }
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService")) {
    for (const { path, destination, mirror } of destinationsOf(vs)) {
      const subset = str(destination.subset)
      if (subset === "") continue
      const host = fqdn(str(destination.host), vs.namespace, snapshot.domainSuffix)
      if (subsets.has(`${host}+${subset}`)) continue
      if (wildcard.some((w) => hostCovers(w.host, host) && w.subsets.includes(subset))) continue
      out.push(
        message(
          MessageTypes.ReferencedResourceNotFound,
          vs,
          `Referenced ${mirror ? "mirror" : "host"}+subset in destinationrule not found: "${str(destination.host)}+${subset}"`,
          [...path.slice(0, -1), "subset"],
        ),
      )
    }
  }
  return out
}

const gatewayIndex = (snapshot: Snapshot): ReadonlyMap<string, Entry> => {
  const out = new Map<string, Entry>()
  for (const g of snapshot.ofKind("Gateway", "networking.mesh.io")) out.set(`${g.namespace}/${g.name}`, g)
  return out
}

/** Gateway-API Gateways by `namespace/name`: a VirtualService may be bound to one by name. */
const gatewayApiIndex = (snapshot: Snapshot): ReadonlyMap<string, Entry> =>
  new Map(snapshot.ofKind("Gateway", GATEWAY_API_GROUP).map((g) => [`${g.namespace}/${g.name}`, g]))

/** The mesh Gateway a Gateway-API Gateway is converted to, as the reference's `~` form or ours. */
const INTERNAL_SUFFIX = meshGatewayName("")
const INTERNAL_MARK = `~${INTERNAL_SUFFIX.slice(1)}~`

/** Whether a gateway reference names an implementation-generated Gateway (not to be named by users). */
export const isInternalGatewayReference = (reference: string): boolean => {
  const name = reference.slice(reference.indexOf("/") + 1)
  return name.includes(INTERNAL_MARK) || name.endsWith(INTERNAL_SUFFIX)
}

const gatewayReferences = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const gateways = gatewayIndex(snapshot)
  const gatewayApi = gatewayApiIndex(snapshot)
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService")) {
    const written = strs(vs.body.gateways)
    gatewaysOf(vs).forEach((g, i) => {
      if (g === "mesh") return
      const path = ["spec", "gateways", i]
      if (isInternalGatewayReference(written[i] ?? g)) {
        out.push(
          message(
            MessageTypes.ReferencedInternalGateway,
            vs,
            `Gateway reference in VirtualService ${vs.namespace}/${vs.name} is to an implementation-generated internal Gateway: ${written[i]}.`,
            path,
          ),
        )
        return
      }
      if (gateways.has(g) || gatewayApi.has(g)) return
      out.push(
        message(MessageTypes.ReferencedResourceNotFound, vs, `Referenced gateway not found: "${written[i]}"`, path),
      )
    })
  }
  return out
}

/** Host name matching in both directions, wildcards as suffixes (`*` matches all). */
export const hostsMatch = (a: string, b: string): boolean => {
  const aWild = a.startsWith("*")
  const bWild = b.startsWith("*")
  if (aWild && bWild) return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1))
  if (aWild) return b.endsWith(a.slice(1))
  if (bWild) return a.endsWith(b.slice(1))
  return a === b
}

/**
 * A mesh Gateway's server hosts as seen from a namespace: `./host` is the Gateway's namespace,
 * `*\/host` any namespace (and `*\/*` makes that server's hosts `*`); a host bound to another
 * namespace is not visible.
 */
export const gatewayHostsFor = (gateway: Entry, namespace: string): ReadonlyArray<string> =>
  arr(gateway.body.servers).flatMap((server) => {
    const hosts = strs(rec(server).hosts)
    if (hosts.includes("*/*")) return ["*"]
    return hosts.flatMap((h) => {
      const slash = h.indexOf("/")
      if (slash < 0) return [h]
      const ns = h.slice(0, slash)
      const host = h.slice(slash + 1)
      const bound = ns === "." ? gateway.namespace : ns
      return bound === namespace || bound === "*" ? [host] : []
    })
  })

/**
 * A VirtualService bound to a gateway must share at least one host with it (MSH0132, all its
 * hosts listed): a mesh Gateway's server hosts visible from its namespace, or a Gateway-API
 * Gateway's listener hostnames (a listener without one admits every host). A gateway that does
 * not exist has no hosts.
 */
const hostsInGateway = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const gateways = gatewayIndex(snapshot)
  const gatewayApi = gatewayApiIndex(snapshot)
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService")) {
    const written = strs(vs.body.gateways)
    const vsHosts = strs(vs.body.hosts)
    gatewaysOf(vs).forEach((g, i) => {
      if (g === "mesh" || isInternalGatewayReference(written[i] ?? g)) return
      const mesh = gateways.get(g)
      const api = mesh === undefined ? gatewayApi.get(g) : undefined
      const listeners = arr(api?.body.listeners).map((l) => str(rec(l).hostname))
      const matched =
        mesh !== undefined
          ? gatewayHostsFor(mesh, vs.namespace).some((gh) => vsHosts.some((h) => hostsMatch(gh, h)))
          : listeners.some((l) => l === "") || listeners.some((l) => vsHosts.some((h) => hostsMatch(l, h)))
      if (matched) return
      out.push(
        message(
          MessageTypes.VirtualServiceHostNotFoundInGateway,
          vs,
          `one or more host [${vsHosts.join(" ")}] defined in VirtualService ${vs.namespace}/${vs.name} not found in Gateway ${g}.`,
          ["spec", "gateways", i],
        ),
      )
    })
  }
  return out
}

/**
 * Mesh-bound VirtualServices defining one host for the same namespaces (exportTo honoured): a
 * host exported to some namespaces also meets the hosts, wildcards overlapping, that are
 * exported to all. The host is named with its scope (`<scope>/<fqdn>`), each VirtualService
 * reported once.
 */
const conflictingMeshHosts = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const byScopedHost = new Map<string, Array<Entry>>()
  for (const vs of snapshot.ofKind("VirtualService")) {
    if (!isMeshBound(vs)) continue
    for (const scope of exportScopes(strs(vs.body.exportTo), vs.namespace))
      for (const h of strs(vs.body.hosts)) {
        const key = `${scope}/${fqdn(h, vs.namespace, snapshot.domainSuffix)}`
        const list = byScopedHost.get(key)
        if (list === undefined) byScopedHost.set(key, [vs])
        else list.push(vs)
      }
  }
  const exportedToAll = [...byScopedHost].flatMap(([key, list]) =>
    key.startsWith(`${ALL_NAMESPACES}/`) ? [{ host: key.slice(ALL_NAMESPACES.length + 1), list }] : [],
  )
  const reported = new Set<Entry>()
  const out: Array<Message> = []
  for (const [key, list] of byScopedHost) {
    const slash = key.indexOf("/")
    const host = key.slice(slash + 1)
    const all =
      key.slice(0, slash) === ALL_NAMESPACES
        ? list
        : [
            ...list,
            ...exportedToAll.filter((x) => hostCovers(x.host, host) || hostCovers(host, x.host)).flatMap((x) => x.list),
          ]
    if (all.length < 2) continue
    const names = all
      .map((vs) => `${vs.namespace}/${vs.name}`)
      .sort()
      .join(",")
    for (const vs of all) {
      if (reported.has(vs)) continue
      reported.add(vs)
      out.push(
        message(
          MessageTypes.ConflictingMeshGatewayVirtualServiceHosts,
          vs,
          `The VirtualServices ${names} associated with mesh gateway define the same host ${key} which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.`,
          ["metadata", "name"],
        ),
      )
    }
  }
  return out
}

/** JSON with keys sorted: two matches written in another key order are the same match. */
const canonical = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : typeof value === "object" && value !== null
      ? `{${Object.keys(value)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
          .join(",")}}`
      : JSON.stringify(value)

/** A match's routing content: HTTP match names do not route. */
const matchKey = (section: string, match: unknown): string => {
  if (section !== "http") return canonical(match)
  const { name: _name, ...rest } = rec(match)
  return canonical(rest)
}

/** How rules and matches are named in messages: a named HTTP rule or match quoted, else `#<index>`. */
const itemName = (section: string, item: unknown, index: number): string =>
  section === "http" && str(rec(item).name) !== "" ? JSON.stringify(str(rec(item).name)) : `#${index}`

const EXACT = "exact:"
const PREFIX = "prefix:"
/** A string match as one comparable string (`exact:v`, `prefix:v`, "" for others). */
const exactOrPrefix = (value: unknown): string => {
  const m = rec(value)
  return str(m.exact) !== "" ? `${EXACT}${str(m.exact)}` : str(m.prefix) !== "" ? `${PREFIX}${str(m.prefix)}` : ""
}

/** An HTTP match with a URI prefix, in the terms its overlap with later matches is judged. */
interface PrefixMatch {
  readonly rule: string
  readonly match: string
  readonly at: FieldPath
  readonly prefix: string
  readonly port: number
  readonly method: string
  readonly authority: string
  readonly maps: ReadonlyArray<Readonly<Record<string, string>>>
}

const prefixMatch = (route: unknown, match: unknown, i: number, j: number): PrefixMatch | undefined => {
  const m = rec(match)
  const prefix = str(rec(m.uri).prefix)
  if (prefix === "") return undefined
  const table = (field: string) =>
    Object.fromEntries(Object.entries(rec(m[field])).map(([k, v]) => [k, exactOrPrefix(v)]))
  return {
    rule: itemName("http", route, i),
    match: itemName("http", match, j),
    at: ["spec", "http", i, "match", j],
    prefix,
    port: num(m.port) ?? 0,
    // Without a method the match is taken as a GET one.
    method: exactOrPrefix(m.method) || `${EXACT}GET`,
    authority: exactOrPrefix(m.authority),
    maps: [table("headers"), table("queryParams"), table("withoutHeaders")],
  }
}

/** Whether every condition of the earlier match `a` also holds for the later `b` (so `b` is never reached). */
const covers = (a: PrefixMatch, b: PrefixMatch): boolean => {
  const same = (x: string, y: string) => x === y || x.startsWith(y)
  if (!b.prefix.startsWith(a.prefix) || a.port !== b.port) return false
  if (!same(a.method, b.method) || !same(a.authority, b.authority)) return false
  return a.maps.every((map, k) => {
    const other = b.maps[k] ?? {}
    const keys = Object.keys(map)
    return (
      keys.length === Object.keys(other).length &&
      keys.every((key) => other[key] !== undefined && same(map[key] ?? "", other[key] ?? ""))
    )
  })
}

/**
 * The rules and matches of a VirtualService that can never apply, as the reference's validation
 * finds them: a rule after a rule without matches, or whose every match repeats an earlier one
 * (MSH0130); a match repeating an earlier one, names aside, or an HTTP URI-prefix match covered
 * by an earlier prefix match with the same or wider other conditions (MSH0131).
 */
const routeFindings = (vs: Entry): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const unreachable = (rule: string, reason: string, at: FieldPath) =>
    out.push(
      message(MessageTypes.VirtualServiceUnreachableRule, vs, `VirtualService rule ${rule} not used (${reason}).`, at),
    )
  const ineffective = (rule: string, match: string, earlier: string, at: FieldPath) =>
    out.push(
      message(
        MessageTypes.VirtualServiceIneffectiveMatch,
        vs,
        `VirtualService rule ${rule} match ${match} is not used (duplicate/overlapping match in rule ${earlier}).`,
        at,
      ),
    )
  for (const section of ["http", "tcp", "tls"] as const) {
    const routes = arr(vs.body[section])
    const seen = new Map<string, number>()
    const prefixes: Array<PrefixMatch> = []
    let catchAll = false
    routes.forEach((route, i) => {
      const rule = itemName(section, route, i)
      const at: FieldPath = ["spec", section, i]
      const matches = arr(rec(route).match)
      if (matches.length === 0) {
        if (catchAll) unreachable(rule, "only the last rule can have no matches", at)
        catchAll = true
        return
      }
      let repeated = 0
      matches.forEach((match, j) => {
        if (catchAll) {
          unreachable(rule, "route without matches defined before", at)
          return
        }
        const key = matchKey(section, match)
        const earlier = seen.get(key)
        if (earlier !== undefined) {
          ineffective(rule, itemName(section, match, j), itemName(section, routes[earlier], earlier), [
            ...at,
            "match",
            j,
          ])
          repeated++
          return
        }
        seen.set(key, i)
        const p = section === "http" ? prefixMatch(route, match, i, j) : undefined
        if (p !== undefined) prefixes.push(p)
      })
      if (repeated === matches.length) unreachable(rule, "all matches used by prior rules", at)
    })
    prefixes.forEach((a, k) => {
      for (const b of prefixes.slice(k + 1))
        if (b.prefix !== a.prefix && covers(a, b))
          ineffective(b.rule, `${b.match} of prefix ${b.prefix}`, `${a.match} of prefix ${a.prefix} on ${a.rule}`, b.at)
    })
  }
  return out
}

const findingsOfType =
  (type: MessageType) =>
  (snapshot: Snapshot): ReadonlyArray<Message> =>
    snapshot.ofKind("VirtualService").flatMap((vs) => routeFindings(vs).filter((m) => m.type === type))

/**
 * Subsets chosen by a mesh route do not apply to gateway traffic routed to the same host
 * without a subset (MSH0140): for a VirtualService bound to gateways, each HTTP destination
 * without a subset is reported against every VirtualService that routes its own host (as
 * written) to a subset.
 */
const ingressSubsets = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const withSubsets = new Map<string, Array<Entry>>()
  for (const vs of snapshot.ofKind("VirtualService")) {
    const hosts = new Set(strs(vs.body.hosts))
    for (const route of arr(vs.body.http))
      for (const r of arr(rec(route).route)) {
        const destination = rec(rec(r).destination)
        const host = str(destination.host)
        if (str(destination.subset) === "" || !hosts.has(host)) continue
        const list = withSubsets.get(host)
        if (list === undefined) withSubsets.set(host, [vs])
        else list.push(vs)
      }
  }
  const out: Array<Message> = []
  for (const vs of snapshot.ofKind("VirtualService")) {
    if (strs(vs.body.gateways).length === 0) continue
    arr(vs.body.http).forEach((route, i) => {
      arr(rec(route).route).forEach((r, j) => {
        const destination = rec(rec(r).destination)
        if (str(destination.subset) !== "") return
        for (const other of withSubsets.get(str(destination.host)) ?? [])
          out.push(
            message(
              MessageTypes.IngressRouteRulesNotAffected,
              vs,
              `Subset in virtual service ${other.namespace}/${other.name} has no effect on ingress gateway ${vs.namespace}/${vs.name} requests`,
              ["spec", "http", i, "route", j, "destination", "host"],
            ),
          )
      })
    })
  }
  return out
}

export const virtualServiceAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "virtualservice.DestinationHostAnalyzer",
    description: "Checks the destination hosts associated with each virtual service",
    types: [
      MessageTypes.ReferencedResourceNotFound,
      MessageTypes.VirtualServiceDestinationPortSelectorRequired,
      MessageTypes.IngressRouteRulesNotAffected,
    ],
    run: (snapshot) => [...destinationHosts(snapshot), ...ingressSubsets(snapshot)],
  },
  {
    name: "virtualservice.DestinationRuleAnalyzer",
    description: "Checks the destination rules associated with each virtual service",
    types: [MessageTypes.ReferencedResourceNotFound],
    run: destinationSubsets,
  },
  {
    name: "virtualservice.GatewayReferenceAnalyzer",
    description: "Checks the gateways associated with each virtual service",
    types: [MessageTypes.ReferencedResourceNotFound, MessageTypes.ReferencedInternalGateway],
    run: gatewayReferences,
  },
  {
    name: "virtualservice.GatewayHostAnalyzer",
    description: "Checks the hosts of each virtual service are defined on its gateways",
    types: [MessageTypes.VirtualServiceHostNotFoundInGateway],
    run: hostsInGateway,
  },
  {
    name: "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
    description: "Checks if multiple virtual services associated with the mesh gateway have conflicting hosts",
    types: [MessageTypes.ConflictingMeshGatewayVirtualServiceHosts],
    run: conflictingMeshHosts,
  },
  {
    name: "virtualservice.UnreachableRuleAnalyzer",
    description: "Checks for rules that can never be reached",
    types: [MessageTypes.VirtualServiceUnreachableRule],
    run: findingsOfType(MessageTypes.VirtualServiceUnreachableRule),
  },
  {
    name: "virtualservice.IneffectiveMatchAnalyzer",
    description: "Checks for matches repeated from earlier rules",
    types: [MessageTypes.VirtualServiceIneffectiveMatch],
    run: findingsOfType(MessageTypes.VirtualServiceIneffectiveMatch),
  },
]
