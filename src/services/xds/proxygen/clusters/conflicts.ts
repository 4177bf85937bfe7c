/**
 * The cluster conflicts of a push, for the gauges `pilot_destrule_subsets` (subsets dropped when
 * DestinationRules of one host were merged because an older rule named the same subset),
 * `pilot_duplicate_envoy_clusters` (ServiceEntry definitions of a hostname another one already
 * defines: their clusters would share names, the first wins) and
 * `pilot_dns_cluster_without_endpoints` (DNS clusters left out for want of an endpoint, counted
 * as a workload of the service's own namespace sees them). Computed once per push.
 */
import { SERVICE_ENTRY_REGISTRY } from "../../../registry/service-entry.js"
import type { LocalSlot } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import { destinationRuleForWorkload, mergedDestinationRules, subsetLabels } from "./destination-rule.js"
import { selectEndpoints } from "./endpoints.js"

export interface ClusterConflicts {
  readonly destruleSubsets: number
  readonly duplicateEnvoyClusters: number
  readonly dnsClustersWithoutEndpoints: number
}

const countConflicts = (push: PushContext): ClusterConflicts => {
  const destruleSubsets = mergedDestinationRules(push).reduce((sum, rule) => sum + rule.duplicateSubsets.length, 0)

  const hosts = new Set<string>()
  let duplicateEnvoyClusters = 0
  for (const service of push.input.services) {
    if (service.registry !== SERVICE_ENTRY_REGISTRY) continue
    if (hosts.has(service.hostname)) duplicateEnvoyClusters++
    else hosts.add(service.hostname)
  }

  let dnsClustersWithoutEndpoints = 0
  for (const service of push.services) {
    if (service.resolution !== "DNS" && service.resolution !== "DNS_ROUND_ROBIN") continue
    const rule = destinationRuleForWorkload(push, service.namespace, {}, service.hostname, service.namespace)
    for (const port of service.ports) {
      if (port.protocol === "UDP") continue
      for (const subset of ["", ...(rule?.subsets.map((s) => s.name) ?? [])]) {
        if (rule?.subsets.find((s) => s.name === subset)?.trafficPolicy?.loadBalancer?.simple === "PASSTHROUGH")
          continue
        const labels = subsetLabels(rule, subset) ?? {}
        if (selectEndpoints(push, service, port, labels).length === 0) dnsClustersWithoutEndpoints++
      }
    }
  }
  return { destruleSubsets, duplicateEnvoyClusters, dnsClustersWithoutEndpoints }
}

/** Counted once per push. */
const conflictsSlot: LocalSlot<ClusterConflicts, PushContext> = { make: countConflicts }

export const clusterConflicts = (push: PushContext): ClusterConflicts => push.local(conflictsSlot)
