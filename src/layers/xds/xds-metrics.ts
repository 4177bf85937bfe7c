/** The pilot xDS metrics, registered through the Metrics service. */
import type { MetricsShape } from "../../services/metrics/metrics.js"

export const makeXdsMetrics = (metrics: MetricsShape) => ({
  connected: metrics.gauge("pilot_xds", "Number of endpoints connected to this pilot using XDS"),
  pushes: metrics.counter<"type">("pilot_xds_pushes", "Pilot build and send errors for lds, rds, cds and eds", [
    "type",
  ]),
  debounceTime: metrics.histogram(
    "pilot_debounce_time",
    "Delay in seconds between the first config enters debouncing and the merged push request is pushed into the push queue",
    [],
    [0.01, 0.1, 1, 3, 5, 10, 20, 30],
  ),
  inboundUpdates: metrics.counter<"type">("pilot_inbound_updates", "Total number of updates received by pilot", [
    "type",
  ]),
  convergence: metrics.histogram(
    "pilot_proxy_convergence_time",
    "Delay in seconds between config change and a proxy receiving all required configuration",
    [],
    [0.1, 0.5, 1, 3, 5, 10, 20, 30],
  ),
  sendTime: metrics.histogram(
    "pilot_xds_send_time",
    "Total time in seconds Pilot takes to send generated configuration",
    [],
    [0.01, 0.1, 1, 3, 5, 10, 20, 30],
  ),
  totalRejects: metrics.counter<"type">(
    "pilot_total_xds_rejects",
    "Total number of XDS responses from pilot rejected by proxy",
    ["type"],
  ),
  rejects: {
    cds: metrics.gauge<"node" | "err">("pilot_xds_cds_reject", "Pilot rejected CDS configs", ["node", "err"]),
    eds: metrics.gauge<"node" | "err">("pilot_xds_eds_reject", "Pilot rejected EDS", ["node", "err"]),
    lds: metrics.gauge<"node" | "err">("pilot_xds_lds_reject", "Pilot rejected LDS", ["node", "err"]),
    rds: metrics.gauge<"node" | "err">("pilot_xds_rds_reject", "Pilot rejected RDS", ["node", "err"]),
  } as Record<string, ReturnType<MetricsShape["gauge"]> | undefined>,
  expiredNonce: metrics.counter<"type">(
    "pilot_xds_expired_nonce",
    "Total number of XDS requests with an expired nonce",
    ["type"],
  ),
  edsNoInstances: metrics.gauge("pilot_eds_no_instances", "Number of clusters without instances"),
  endpointNotReady: metrics.gauge("pilot_endpoint_not_ready", "Endpoint found in unready state"),
  writeTimeout: metrics.counter("pilot_xds_write_timeout", "Pilot XDS response write timeouts"),
  // What the proxy generators had to drop or could not serve (proxy-conflict-gauges.ts).
  conflictInboundListener: metrics.gauge("pilot_conflict_inbound_listener", "Conflicting inbound listeners"),
  conflictOutboundTcpOverTcp: metrics.gauge(
    "pilot_conflict_outbound_listener_tcp_over_current_tcp",
    "TCP listeners conflicting with the current TCP listener",
  ),
  destruleSubsets: metrics.gauge("pilot_destrule_subsets", "Duplicate subsets across DestinationRules for one host"),
  dnsClustersWithoutEndpoints: metrics.gauge("pilot_dns_cluster_without_endpoints", "DNS clusters without endpoints"),
  duplicateEnvoyClusters: metrics.gauge(
    "pilot_duplicate_envoy_clusters",
    "Duplicate proxy clusters from ServiceEntries sharing a hostname",
  ),
  // Cache efficiency (reads only with PILOT_XDS_CACHE_STATS; evictions and size always).
  cacheReads: metrics.counter<"type">("xds_cache_reads", "Total number of xds cache reads", ["type"]),
  cacheEvictions: metrics.counter<"type">("xds_cache_evictions", "Total number of xds cache evictions", ["type"]),
  cacheSize: metrics.gauge<"type">("xds_cache_size", "Current size of xds cache", ["type"]),
  pushTime: metrics.histogram<"type">(
    "pilot_xds_push_time",
    "Total time in seconds Pilot takes to push lds, rds, cds and eds",
    ["type"],
    [0.01, 0.1, 1, 3, 5, 10, 20, 30],
  ),
})

export type XdsMetrics = ReturnType<typeof makeXdsMetrics>
