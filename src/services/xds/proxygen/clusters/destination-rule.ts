/**
 * The DestinationRule a proxy applies to a host, the reference's way: rules of one namespace for
 * one host (no workload selector, same `exportTo`) are merged — the oldest rule's traffic policy,
 * every rule's subsets in age order, a repeated subset name dropped (`pilot_destrule_subsets`) —
 * and the proxy takes, in order, a rule of its own namespace (one whose workload selector
 * matches it first), else one of the service's namespace exported to it, else one of the root
 * namespace exported to it; at each step the most specific host (exact, then the longest
 * wildcard). The raw specs are read (not the gRPC views of `push.destinationRuleByHost`): the
 * proxy generators apply fields proxyless clients ignore.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { DestinationRuleSpec, Subset, TrafficPolicy } from "../../../config-model/schemas/destination-rule.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { byAge, digest, type PushContext, resolveHost } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { exportedTo, hostMatches, matchesLabels } from "../scope.js"

export interface MergedDestinationRule {
  /** The oldest merged rule's namespace and name (the cluster metadata names it). */
  readonly namespace: string
  readonly name: string
  /** The resolved host (may be a wildcard). */
  readonly host: string
  readonly resources: ReadonlyArray<ConfigResource<DestinationRuleSpec>>
  readonly trafficPolicy?: TrafficPolicy
  readonly subsets: ReadonlyArray<Subset>
  /** The rule has a workload selector (it was not merged with others). */
  readonly hasSelector: boolean
  /** Digest of every merged rule's identity and spec: what clusters built from it depend on. */
  readonly key: string
  /** Subsets dropped because an older merged rule defined the same name. */
  readonly duplicateSubsets: ReadonlyArray<string>
}

interface Group {
  readonly namespace: string
  readonly host: string
  readonly selector?: Readonly<Record<string, string>>
  readonly exportTo: ReadonlyArray<string>
  readonly rule: MergedDestinationRule
}

interface DrIndex {
  readonly byNamespace: ReadonlyMap<string, ReadonlyArray<Group>>
  readonly groups: ReadonlyArray<Group>
  readonly lookups: Map<string, MergedDestinationRule | null>
}

const merge = (resources: ReadonlyArray<ConfigResource<DestinationRuleSpec>>, host: string): MergedDestinationRule => {
  const first = resources[0]!
  const subsets: Array<Subset> = []
  const names = new Set<string>()
  const duplicates: Array<string> = []
  let trafficPolicy: TrafficPolicy | undefined
  for (const r of resources) {
    if (trafficPolicy === undefined && r.spec.trafficPolicy !== undefined) trafficPolicy = r.spec.trafficPolicy
    for (const subset of r.spec.subsets ?? []) {
      if (names.has(subset.name)) {
        duplicates.push(subset.name)
        continue
      }
      names.add(subset.name)
      subsets.push(subset)
    }
  }
  const selector = first.spec.workloadSelector?.matchLabels
  return {
    namespace: first.meta.namespace,
    name: first.meta.name,
    host,
    resources,
    ...(trafficPolicy !== undefined ? { trafficPolicy } : {}),
    subsets,
    hasSelector: selector !== undefined && Object.keys(selector).length > 0,
    key: digest(JSON.stringify(resources.map((r) => [r.meta.namespace, r.meta.name, r.spec]))),
    duplicateSubsets: duplicates,
  }
}

const buildIndex = (push: PushContext): DrIndex => {
  const defaults = push.options.proxy.defaultDestinationRuleExportTo
  // Groups in age order; rules of one group share namespace, host and exportTo.
  const pending = new Map<
    string,
    {
      namespace: string
      host: string
      selector?: Record<string, string>
      exportTo: ReadonlyArray<string>
      list: Array<ConfigResource<DestinationRuleSpec>>
    }
  >()
  let unique = 0
  for (const resource of [...push.input.destinationRules].sort(byAge)) {
    const spec = resource.spec
    if (typeof spec?.host !== "string" || spec.host === "") continue
    const namespace = resource.meta.namespace
    const host = resolveHost(spec.host, namespace, push.options.domainSuffix)
    const labels = spec.workloadSelector?.matchLabels
    const selector = labels !== undefined && Object.keys(labels).length > 0 ? { ...labels } : undefined
    const exportTo = spec.exportTo !== undefined && spec.exportTo.length > 0 ? spec.exportTo : defaults
    const key =
      selector !== undefined ? `#${unique++}` : `${namespace}\u0000${host}\u0000${[...exportTo].sort().join(",")}`
    const group = pending.get(key)
    if (group === undefined)
      pending.set(key, { namespace, host, ...(selector !== undefined ? { selector } : {}), exportTo, list: [resource] })
    else group.list.push(resource)
  }
  const groups: Array<Group> = []
  const byNamespace = new Map<string, Array<Group>>()
  for (const g of pending.values()) {
    const group: Group = {
      namespace: g.namespace,
      host: g.host,
      ...(g.selector !== undefined ? { selector: g.selector } : {}),
      exportTo: g.exportTo,
      rule: merge(g.list, g.host),
    }
    groups.push(group)
    const list = byNamespace.get(g.namespace)
    if (list === undefined) byNamespace.set(g.namespace, [group])
    else list.push(group)
  }
  return { byNamespace, groups, lookups: new Map() }
}

/** Built once per push. */
const indexSlot: LocalSlot<DrIndex, PushContext> = { make: buildIndex }

const indexOf = (push: PushContext): DrIndex => push.local(indexSlot)

/** Exact host first, then the longest wildcard; the oldest group among equals (groups are in age order). */
const mostSpecific = (groups: ReadonlyArray<Group>, hostname: string): Group | undefined => {
  let best: Group | undefined
  for (const g of groups) {
    if (!hostMatches(g.host, hostname)) continue
    if (g.host === hostname) return g
    if (best === undefined || g.host.length > best.host.length) best = g
  }
  return best
}

/** Every merged rule of the push (one entry per namespace, host and exportTo; selector rules alone). */
export const mergedDestinationRules = (push: PushContext): ReadonlyArray<MergedDestinationRule> =>
  indexOf(push).groups.map((g) => g.rule)

/**
 * The rule a workload in `namespace` with `labels` applies to `hostname` (a service of
 * `serviceNamespace`); undefined when none applies. Memoised per push.
 */
export const destinationRuleForWorkload = (
  push: PushContext,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  hostname: string,
  serviceNamespace: string,
): MergedDestinationRule | undefined => {
  const index = indexOf(push)
  const own = index.byNamespace.get(namespace) ?? []
  const selectors = own.some((g) => g.selector !== undefined)
  const memoKey = `${namespace}\u0000${selectors ? JSON.stringify(Object.entries(labels).sort()) : ""}\u0000${hostname}\u0000${serviceNamespace}`
  const memo = index.lookups.get(memoKey)
  if (memo !== undefined) return memo ?? undefined
  const defaults = push.options.proxy.defaultDestinationRuleExportTo
  const exported = (ns: string) =>
    ns === namespace
      ? []
      : (index.byNamespace.get(ns) ?? []).filter(
          (g) => g.selector === undefined && exportedTo(g.exportTo, g.namespace, namespace, defaults),
        )
  const found =
    mostSpecific(
      own.filter((g) => g.selector !== undefined && matchesLabels(g.selector, labels)),
      hostname,
    ) ??
    mostSpecific(
      own.filter((g) => g.selector === undefined),
      hostname,
    ) ??
    mostSpecific(exported(serviceNamespace), hostname) ??
    (serviceNamespace === push.options.rootNamespace
      ? undefined
      : mostSpecific(exported(push.options.rootNamespace), hostname))
  index.lookups.set(memoKey, found?.rule ?? null)
  return found?.rule
}

/**
 * What of a workload the rules it applies depend on: its namespace, and its labels only when a
 * rule of that namespace has a workload selector. Workloads with the same key apply the same
 * rules to every host, so what is built from those rules can be shared between them.
 */
export const destinationRuleWorkloadKey = (
  push: PushContext,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): string => {
  const own = indexOf(push).byNamespace.get(namespace) ?? []
  return own.some((g) => g.selector !== undefined)
    ? `${namespace}\u0000${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`
    : namespace
}

/** The rule `proxy` applies to the service `hostname` of `serviceNamespace`. */
export const destinationRuleFor = (
  push: PushContext,
  proxy: Pick<ProxyView, "namespace" | "labels">,
  hostname: string,
  serviceNamespace: string,
): MergedDestinationRule | undefined =>
  destinationRuleForWorkload(push, proxy.namespace, proxy.labels, hostname, serviceNamespace)

type PortTrafficPolicy = NonNullable<TrafficPolicy["portLevelSettings"]>[number]

/** The parts of a traffic policy a cluster applies (port-level settings folded in). */
export interface ClusterPolicy {
  readonly loadBalancer?: TrafficPolicy["loadBalancer"]
  readonly connectionPool?: TrafficPolicy["connectionPool"]
  readonly outlierDetection?: TrafficPolicy["outlierDetection"]
  readonly tls?: TrafficPolicy["tls"]
}

const withPort = (policy: TrafficPolicy | undefined, port: number): { policy?: ClusterPolicy; portLevel: boolean } => {
  if (policy === undefined) return { portLevel: false }
  const base: ClusterPolicy = {
    ...(policy.loadBalancer !== undefined ? { loadBalancer: policy.loadBalancer } : {}),
    ...(policy.connectionPool !== undefined ? { connectionPool: policy.connectionPool } : {}),
    ...(policy.outlierDetection !== undefined ? { outlierDetection: policy.outlierDetection } : {}),
    ...(policy.tls !== undefined ? { tls: policy.tls } : {}),
  }
  const own: PortTrafficPolicy | undefined = policy.portLevelSettings?.find((p) => p.port?.number === port)
  if (own === undefined) return { policy: base, portLevel: false }
  return { policy: override(base, own), portLevel: true }
}

const override = (base: ClusterPolicy, over: ClusterPolicy): ClusterPolicy => ({
  ...base,
  ...(over.loadBalancer !== undefined ? { loadBalancer: over.loadBalancer } : {}),
  ...(over.connectionPool !== undefined ? { connectionPool: over.connectionPool } : {}),
  ...(over.outlierDetection !== undefined ? { outlierDetection: over.outlierDetection } : {}),
  ...(over.tls !== undefined ? { tls: over.tls } : {}),
})

/**
 * The policy of the cluster for `port` and `subset` (empty: the service's default cluster): the
 * rule's policy with its port-level settings, overridden field by field by the subset's policy
 * (with the subset's own port-level settings).
 */
export const clusterPolicy = (
  rule: MergedDestinationRule | undefined,
  port: number,
  subset = "",
): ClusterPolicy | undefined => {
  const top = withPort(rule?.trafficPolicy, port).policy
  if (subset === "") return top
  const own = rule?.subsets.find((s) => s.name === subset)?.trafficPolicy
  if (own === undefined) return top
  const sub = withPort(own, port).policy
  if (top === undefined) return sub
  return sub === undefined ? top : override(top, sub)
}

/** The subset's labels, undefined when the rule defines no such subset. */
export const subsetLabels = (
  rule: MergedDestinationRule | undefined,
  subset: string,
): Readonly<Record<string, string>> | undefined => {
  if (subset === "") return {}
  const found = rule?.subsets.find((s) => s.name === subset)
  return found === undefined ? undefined : (found.labels ?? {})
}
