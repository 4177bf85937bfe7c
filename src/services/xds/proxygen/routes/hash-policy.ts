/**
 * Consistent-hash routing. A DestinationRule's `loadBalancer.consistentHash` makes a cluster a
 * ring hash or Maglev one (clusters/traffic-policy.ts), but what the proxy hashes — a header, a
 * cookie, the source IP, a query parameter — is the `hash_policy` of the route that picks the
 * cluster: without it every request hashes at random. So a route to a destination looks up the
 * rule the proxy applies to the destination's service, merged exactly as the cluster merges it
 * (port-level settings of the cluster's port, then the subset's policy), and carries the hash
 * key of the resulting load balancer. `ringHash` / `maglev` / `minimumRingSize` shape only the
 * cluster.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { DestinationRuleSpec, TrafficPolicy } from "../../../config-model/schemas/destination-rule.js"
import type { Service } from "../../../registry/model.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import type { RouteAction_HashPolicy } from "../../protocol/xds-types.js"
import { clusterPolicy, destinationRuleForWorkload } from "../clusters/destination-rule.js"
import { durationOf, nanosOf } from "./proto-values.js"

export type ConsistentHash = NonNullable<NonNullable<TrafficPolicy["loadBalancer"]>["consistentHash"]>

/** Who applies the rule: the proxy's namespace and labels (rules select workloads by both). */
export interface RuleWorkload {
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
}

export interface DestinationHash {
  /** The route's `RouteAction.HashPolicy`; undefined when the cluster hashes on no key a route sets. */
  readonly policy?: RouteAction_HashPolicy
  /**
   * Whether the cluster hashes at all. A hashing cluster would pick the same host again on a
   * retry, so a single-destination route then drops the "previous hosts" retry predicate.
   */
  readonly consistent: boolean
}

export const NO_HASH: DestinationHash = { consistent: false }

/**
 * The `RouteAction.HashPolicy` of a consistent hash: its hash key, undefined when it names none
 * (or names one the proxy would reject: an empty header or parameter name; `useSourceIp: false`
 * hashes on nothing).
 */
export const hashPolicyOf = (hash: ConsistentHash): RouteAction_HashPolicy | undefined => {
  if ((hash.httpHeaderName ?? "") !== "") return { header: { header_name: hash.httpHeaderName! } }
  const cookie = hash.httpCookie
  if (cookie !== undefined && (cookie.name ?? "") !== "") {
    const ttl = nanosOf(cookie.ttl)
    const attributes = (cookie.attributes ?? []).filter((a) => a.name !== "")
    return {
      cookie: {
        name: cookie.name!,
        ...(ttl !== undefined ? { ttl: durationOf(ttl) } : {}),
        ...((cookie.path ?? "") !== "" ? { path: cookie.path } : {}),
        ...(attributes.length > 0
          ? {
              attributes: attributes.map((a) => ({
                name: a.name,
                ...((a.value ?? "") !== "" ? { value: a.value } : {}),
              })),
            }
          : {}),
      },
    }
  }
  if (hash.useSourceIp === true) return { connection_properties: { source_ip: true } }
  if ((hash.httpQueryParameterName ?? "") !== "") return { query_parameter: { name: hash.httpQueryParameterName! } }
  return undefined
}

const usesHash = (policy: TrafficPolicy | undefined): boolean =>
  policy !== undefined &&
  (policy.loadBalancer?.consistentHash !== undefined ||
    (policy.portLevelSettings ?? []).some((p) => p.loadBalancer?.consistentHash !== undefined))

const hashing: LocalSlot<WeakMap<ReadonlyArray<ConfigResource<DestinationRuleSpec>>, boolean>> = {
  make: () => new WeakMap(),
}

/**
 * Whether any DestinationRule of the push hashes (memoised per rule list): most meshes have
 * none, and their routes then skip every lookup and keep the keys they had.
 */
export const anyConsistentHash = (push: PushContext): boolean => {
  const rules = push.input.destinationRules
  return memoOf(push.memo.local(hashing), rules, () =>
    rules.some(
      (r) => usesHash(r.spec?.trafficPolicy) || (r.spec?.subsets ?? []).some((s) => usesHash(s.trafficPolicy)),
    ),
  )
}

/**
 * The hash of the cluster `outbound|port|subset|<service>` as `workload` applies its rule: the
 * rule's load balancer with the port's settings, overridden by the subset's (the cluster's merge).
 */
export const clusterHash = (
  push: PushContext,
  workload: RuleWorkload,
  service: Service,
  port: number,
  subset: string,
): DestinationHash => {
  if (!anyConsistentHash(push)) return NO_HASH
  const rule = destinationRuleForWorkload(
    push,
    workload.namespace,
    workload.labels,
    service.hostname,
    service.namespace,
  )
  const hash = clusterPolicy(rule, port, subset)?.loadBalancer?.consistentHash
  if (hash === undefined) return NO_HASH
  const policy = hashPolicyOf(hash)
  return policy !== undefined ? { policy, consistent: true } : { consistent: true }
}

/** What a route's output reads of a destination's hash, as text for cache keys. */
export const hashKeyOf = (hash: DestinationHash): string => (hash.consistent ? JSON.stringify(hash.policy ?? null) : "")
