/**
 * Where a proxy gets its secrets: the workload certificate and the mesh root from the agent's SDS
 * server (the bootstrap's static `sds-grpc` cluster), gateway credentials by name over ADS. One
 * shape for every generator, so clusters, inbound chains and gateways ask alike.
 */
import type { Duration, SdsSecretConfig } from "../protocol/xds-types.js"
import { SDS_CLUSTER } from "./well-known.js"

/** Wait for the secret as long as it takes (the proxy warms the listener or cluster meanwhile). */
const NO_FETCH_TIMEOUT: Duration = { seconds: "0", nanos: 0 }

/** An SDS secret served by the agent over its socket. */
export const agentSdsSecret = (name: string): SdsSecretConfig => ({
  name,
  sds_config: {
    api_config_source: {
      api_type: "GRPC",
      set_node_on_first_message_only: true,
      transport_api_version: "V3",
      grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
    },
    initial_fetch_timeout: NO_FETCH_TIMEOUT,
    resource_api_version: "V3",
  },
})

/** An SDS secret served by the control plane over ADS (credentials by name). */
export const adsSdsSecret = (name: string): SdsSecretConfig => ({
  name,
  sds_config: { ads: {}, initial_fetch_timeout: NO_FETCH_TIMEOUT, resource_api_version: "V3" },
})
