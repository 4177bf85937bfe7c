/**
 * Locality load balancing, the reference's rules, shared by EDS and by the load assignments of
 * DNS clusters: `distribute` re-weights the localities the proxy's locality sends to;
 * `failoverPriority` (endpoint labels compared with the proxy's) and `failover` / the default
 * proximity order (same subzone, zone, region, other) give each locality group a priority. Failover
 * needs outlier detection (without it the proxy never leaves priority 0), so priorities apply only
 * when the cluster's policy has it. The mesh-wide setting is the reference's default: enabled,
 * with no rules.
 */
import type { LbEndpoint, LocalityLbEndpoints } from "../../protocol/xds-types.js"
import type { ClusterPolicy } from "./destination-rule.js"

type LoadBalancer = NonNullable<ClusterPolicy["loadBalancer"]>
export type LocalityLbSetting = NonNullable<LoadBalancer["localityLbSetting"]>

/** One endpoint in a locality group: its proto, weight and labels (for failoverPriority). */
export interface GroupEndpoint {
  readonly lb: LbEndpoint
  readonly weight: number
  readonly labels: Readonly<Record<string, string>>
}

export interface LocalityGroup {
  /** `region/zone/subzone`. */
  readonly locality: string
  readonly endpoints: ReadonlyArray<GroupEndpoint>
  /** The group's load-balancing weight (sum of its endpoints' weights unless re-weighted). */
  readonly weight: number
  readonly priority: number
}

/** What locality LB does for a cluster: the setting, and whether failover priorities apply. */
export interface LocalityLb {
  readonly setting: LocalityLbSetting
  readonly failover: boolean
}

const hasItems = (list: ReadonlyArray<unknown> | undefined): boolean => list !== undefined && list.length > 0

/**
 * The locality LB of a cluster's policy: the rule's `localityLbSetting` (undefined when it says
 * `enabled: false`), else the mesh default; failover when the policy has outlier detection.
 */
export const localityLbOf = (policy: ClusterPolicy | undefined): LocalityLb | undefined => {
  const own = policy?.loadBalancer?.localityLbSetting
  if (own?.enabled === false) return undefined
  return { setting: own ?? {}, failover: policy?.outlierDetection !== undefined }
}

/** Whether the setting changes a load assignment (then it depends on the proxy's locality). */
export const localityLbActive = (lb: LocalityLb | undefined): boolean =>
  lb !== undefined && (hasItems(lb.setting.distribute) || lb.failover)

/** Whether the cluster needs `common_lb_config.locality_weighted_lb_config` (the reference's rule). */
export const needsLocalityWeightedConfig = (lb: LocalityLb | undefined): boolean =>
  lb !== undefined &&
  (hasItems(lb.setting.distribute) ||
    (lb.failover && (hasItems(lb.setting.failover) || hasItems(lb.setting.failoverPriority))))

/** The proxy labels failoverPriority reads (part of what a load assignment depends on). */
export const failoverPriorityKey = (
  lb: LocalityLb | undefined,
  proxyLabels: Readonly<Record<string, string>>,
): string =>
  lb === undefined || !lb.failover || !hasItems(lb.setting.failoverPriority)
    ? ""
    : lb.setting
        .failoverPriority!.map((entry) => {
          const [label = ""] = entry.split("=")
          return `${entry}:${proxyLabels[label] ?? ""}`
        })
        .join(",")

const split = (locality: string): readonly [string, string, string] => {
  const [region = "", zone = "", subzone = ""] = locality.split("/")
  return [region, zone, subzone]
}

/** `region/zone/subzone` patterns with `*` (and missing trailing parts) matching anything. */
export const localityMatches = (locality: string, pattern: string): boolean => {
  const [region, zone, subzone] = split(locality)
  const [pr, pz, ps] = split(pattern)
  return (
    (pr === "*" || pr === region) &&
    (pz === "*" || pz === "" || pz === zone) &&
    (ps === "*" || ps === "" || ps === subzone)
  )
}

/** 0 same subzone, 1 same zone, 2 same region, 3 elsewhere. */
const proximity = (proxy: string, endpoints: string): number => {
  const [r1, z1, s1] = split(proxy)
  const [r2, z2, s2] = split(endpoints)
  if (r1 !== r2) return 3
  if (z1 !== z2) return 2
  return s1 === s2 ? 0 : 1
}

/** Renumbers priorities 0..N in order, without gaps (the proxy requires it). */
const compact = (groups: ReadonlyArray<LocalityGroup>): ReadonlyArray<LocalityGroup> => {
  const order = [...new Set(groups.map((g) => g.priority))].sort((a, b) => a - b)
  const rank = new Map(order.map((p, i) => [p, i]))
  return groups.map((g) => (rank.get(g.priority) === g.priority ? g : { ...g, priority: rank.get(g.priority)! }))
}

const applyDistribute = (
  groups: ReadonlyArray<LocalityGroup>,
  proxyLocality: string,
  distribute: NonNullable<LocalityLbSetting["distribute"]>,
): ReadonlyArray<LocalityGroup> => {
  const rule = distribute.find((d) => localityMatches(proxyLocality, d.from ?? ""))
  if (rule === undefined) return groups
  const weights = new Map<number, number>()
  const unmatched = new Set(groups.map((_, i) => i))
  for (const [pattern, share] of Object.entries(rule.to ?? {})) {
    const matched = [...unmatched].filter((i) => localityMatches(groups[i]!.locality, pattern))
    const total = matched.reduce((sum, i) => sum + groups[i]!.weight, 0)
    for (const i of matched) {
      unmatched.delete(i)
      const weight = total > 0 ? Math.ceil((groups[i]!.weight * share) / total) : 0
      if (weight > 0) weights.set(i, weight)
    }
  }
  // Localities the rule sends nothing to get no traffic: they are left out.
  return groups.flatMap((g, i) => {
    if (unmatched.has(i)) return []
    const weight = weights.get(i)
    return weight === undefined ? [] : [{ ...g, weight }]
  })
}

const applyFailover = (
  groups: ReadonlyArray<LocalityGroup>,
  proxyLocality: string,
  failover: LocalityLbSetting["failover"],
): ReadonlyArray<LocalityGroup> => {
  const [proxyRegion] = split(proxyLocality)
  return compact(
    groups.map((g) => {
      let priority = proximity(proxyLocality, g.locality)
      if (priority === 3) {
        const rule = (failover ?? []).find((f) => (f.from ?? "") === proxyRegion)
        if (rule !== undefined && split(g.locality)[0] !== (rule.to ?? "")) priority = 4
      }
      return { ...g, priority: g.priority * 5 + priority }
    }),
  )
}

const applyFailoverPriority = (
  groups: ReadonlyArray<LocalityGroup>,
  proxyLabels: Readonly<Record<string, string>>,
  priorities: ReadonlyArray<string>,
): ReadonlyArray<LocalityGroup> => {
  if (Object.keys(proxyLabels).length === 0) return groups
  const labels = priorities.map((entry) => {
    const at = entry.indexOf("=")
    return at < 0
      ? { name: entry, value: proxyLabels[entry] }
      : { name: entry.slice(0, at), value: entry.slice(at + 1) }
  })
  const lowest = labels.length
  const out: Array<LocalityGroup> = []
  for (const group of groups) {
    const byPriority = new Map<number, Array<GroupEndpoint>>()
    for (const endpoint of group.endpoints) {
      let priority = 0
      for (let j = 0; j < labels.length; j++) {
        if (labels[j]!.value !== endpoint.labels[labels[j]!.name]) {
          priority = lowest - j
          break
        }
      }
      const list = byPriority.get(priority)
      if (list === undefined) byPriority.set(priority, [endpoint])
      else list.push(endpoint)
    }
    for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
      const endpoints = byPriority.get(priority)!
      out.push({ ...group, endpoints, weight: endpoints.reduce((s, e) => s + e.weight, 0), priority })
    }
  }
  return compact(out)
}

/**
 * The groups with the locality setting applied for a proxy in `proxyLocality` (`region/zone/subzone`,
 * empty when unknown) with `proxyLabels`. The groups come in with priority 0.
 */
export const applyLocalityLb = (
  groups: ReadonlyArray<LocalityGroup>,
  lb: LocalityLb | undefined,
  proxyLocality: string,
  proxyLabels: Readonly<Record<string, string>>,
): ReadonlyArray<LocalityGroup> => {
  if (lb === undefined) return groups
  const { setting } = lb
  if (hasItems(setting.distribute)) return applyDistribute(groups, proxyLocality, setting.distribute!)
  if (!lb.failover) return groups
  if (hasItems(setting.failoverPriority)) {
    const prioritised = applyFailoverPriority(groups, proxyLabels, setting.failoverPriority!)
    return hasItems(setting.failover) ? applyFailover(prioritised, proxyLocality, setting.failover) : prioritised
  }
  return applyFailover(groups, proxyLocality, setting.failover)
}

/** The groups as `LocalityLbEndpoints` (groups without endpoints left out). */
export const localityLbEndpoints = (groups: ReadonlyArray<LocalityGroup>): ReadonlyArray<LocalityLbEndpoints> =>
  groups
    .filter((g) => g.endpoints.length > 0)
    .map((g) => {
      const [region, zone, subzone] = split(g.locality)
      return {
        locality: { region, zone, sub_zone: subzone },
        lb_endpoints: g.endpoints.map((e) => e.lb),
        load_balancing_weight: { value: Math.max(1, g.weight) },
        ...(g.priority > 0 ? { priority: g.priority } : {}),
      }
    })
