/**
 * The names a waypoint's resources share (the reference's, so dumps and tools read alike): the
 * HBONE listener that terminates CONNECT, the internal listener that dispatches by destination,
 * the internal listener that originates HBONE towards the workloads, the clusters between them,
 * and the per-service-port clusters `inbound-vip|<port>|<http|tcp>[/<subset>]|<host>`.
 */

/** The listener on 15008 terminating HBONE (HTTP/2 CONNECT over mTLS). */
export const CONNECT_TERMINATE = "connect_terminate"
/** The internal listener (and the cluster reaching it) that dispatches on the inner destination. */
export const MAIN_INTERNAL = "main_internal"
/** The internal listener (and its ORIGINAL_DST cluster) that opens HBONE to the destination workload. */
export const CONNECT_ORIGINATE = "connect_originate"
/** The cluster from the dispatching chains to `connect_originate`. */
export const ENCAP = "encap"
/** The port HBONE is served on, by waypoints and node proxies alike. */
export const HBONE_PORT = 15008
/** The most CONNECT streams one HBONE connection may carry (the reference's fairness bound). */
export const MAX_CONCURRENT_STREAMS = 100

/** `http` or `tcp`, optionally `/<subset>`: the kind part of an inbound-vip cluster name. */
export const inboundVipCluster = (kind: "http" | "tcp", host: string, port: number, subset = ""): string =>
  `inbound-vip|${port}|${kind}${subset === "" ? "" : `/${subset}`}|${host}`

/** The metadata key the original_dst listener filter of an internal listener reads the destination from. */
export const ORIGINAL_DST_METADATA = "envoy.filters.listener.original_dst"
