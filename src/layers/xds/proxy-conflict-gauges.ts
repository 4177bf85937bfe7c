/**
 * The conflict gauges of the proxy generators, recounted after each full push (off its path):
 * - `pilot_destrule_subsets`, `pilot_duplicate_envoy_clusters`,
 *   `pilot_dns_cluster_without_endpoints`: properties of the PushContext alone;
 * - `pilot_conflict_inbound_listener`, `pilot_conflict_outbound_listener_tcp_over_current_tcp`:
 *   what the listeners of the connected sidecars had to drop, counted once per workload (proxies
 *   with the same share key get the same listeners, so replicas do not multiply a conflict).
 */
import type { PushContext } from "../../services/xds/model/push-context.js"
import { TypeUrl } from "../../services/xds/protocol/type-urls.js"
import { clusterConflicts } from "../../services/xds/proxygen/clusters/index.js"
import { proxyShareKey } from "../../services/xds/proxygen/generate.js"
import { inboundListenerConflicts } from "../../services/xds/proxygen/inbound/index.js"
import { outboundListenerConflicts } from "../../services/xds/proxygen/outbound/index.js"
import type { ProxyView } from "../../services/xds/proxygen/proxy-view.js"
import type { XdsMetrics } from "./xds-metrics.js"

export const recordProxyConflicts = (
  metrics: Pick<
    XdsMetrics,
    | "destruleSubsets"
    | "duplicateEnvoyClusters"
    | "dnsClustersWithoutEndpoints"
    | "conflictInboundListener"
    | "conflictOutboundTcpOverTcp"
  >,
  push: PushContext,
  proxies: Iterable<ProxyView>,
): void => {
  const clusters = clusterConflicts(push)
  metrics.destruleSubsets.set(clusters.destruleSubsets)
  metrics.duplicateEnvoyClusters.set(clusters.duplicateEnvoyClusters)
  metrics.dnsClustersWithoutEndpoints.set(clusters.dnsClustersWithoutEndpoints)
  let inbound = 0
  let outbound = 0
  const seen = new Set<string>()
  for (const proxy of proxies) {
    if (proxy.kind !== "sidecar") continue
    const key = proxyShareKey(push, proxy, TypeUrl.Listener)
    if (seen.has(key)) continue
    seen.add(key)
    inbound += inboundListenerConflicts(push, proxy)
    outbound += outboundListenerConflicts(push, proxy).tcpOverCurrentTcp
  }
  metrics.conflictInboundListener.set(inbound)
  metrics.conflictOutboundTcpOverTcp.set(outbound)
}
