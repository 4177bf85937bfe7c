/**
 * Config services of the `mesh-discovery` listeners around the xDS and CA subsystems (the
 * debug/monitoring HTTP servers, the introspection facility and the webhooks), each its slice of
 * `discoveryEnv` plus the flags that place it.
 */
import { Ports } from "../constants.js"
import type { ListenAddress } from "../net/address.js"
import { discoveryEnv } from "./discovery-env.js"
import { EnvConfig } from "./env-config.js"

export interface MonitoringFields {
  /** `--httpAddr`: `/ready` and (per ENABLE_DEBUG_ON_HTTP) the debug interface. */
  readonly httpAddr: ListenAddress
  /** `--monitoringAddr`: `/metrics`, `/version`, `/ready` and the debug interface. */
  readonly monitoringAddr: ListenAddress
  /** `--ctrlz_address` / `--ctrlz_port`: the introspection facility (host undefined = every address). */
  readonly introspectionAddr: ListenAddress
  /** `--profile`: `/debug/pprof/` wherever the debug interface is served. */
  readonly profile: boolean
}

/** The debug/monitoring HTTP servers and the introspection facility. */
export class MonitoringConfig extends EnvConfig<MonitoringConfig, MonitoringFields>()("mesh/MonitoringConfig", {
  table: discoveryEnv,
  names: ["ENABLE_DEBUG_ON_HTTP", "UNSAFE_ENABLE_ADMIN_ENDPOINTS", "METRICS_LOCALHOST_ACCESS_ONLY"],
  fields: {
    httpAddr: { host: undefined, port: Ports.http },
    monitoringAddr: { host: undefined, port: Ports.monitoring },
    introspectionAddr: { host: "localhost", port: Ports.introspection },
    profile: false,
  },
}) {}

/** The webhooks on `--httpsAddr`. */
export class WebhookConfig extends EnvConfig<WebhookConfig, { readonly httpsAddr: ListenAddress }>()(
  "mesh/WebhookConfig",
  {
    table: discoveryEnv,
    names: ["INJECT_ENABLED"],
    fields: { httpsAddr: { host: undefined, port: Ports.webhooks } },
  },
) {}

/**
 * What mesh-discovery's inputs read (the local cluster, config store, mesh config, registries and
 * credentials; programs/mesh-discovery/discovery-inputs.ts). `CLUSTER_ID` is the `--clusterID` flag's
 * value, which defaults to the variable.
 */
export class RegistryInputsConfig extends EnvConfig<RegistryInputsConfig>()("mesh/RegistryInputsConfig", {
  table: discoveryEnv,
  names: [
    "CLUSTER_ID",
    "PILOT_ENABLE_IP_AUTOALLOCATE",
    "ORCHESTRATOR_SERVICE_HOST",
    "ORCHESTRATOR_SERVICE_PORT",
    "SHARED_MESH_CONFIG",
    "MESH_WATCH_NAMESPACE",
    "REVISION",
    "PILOT_DRAINING_LABEL",
    "PILOT_SEND_UNHEALTHY_ENDPOINTS",
    "PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES",
    "PILOT_ENABLE_SERVICEENTRY_SELECT_PODS",
    "PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS",
    "PILOT_REMOTE_CLUSTER_TIMEOUT",
    "PILOT_ENABLE_GATEWAY_API",
    "PILOT_ENABLE_ALPHA_GATEWAY_API",
    "ENABLE_GATEWAY_API_INFERENCE_EXTENSION",
    "PILOT_ENABLE_AMBIENT",
    "PILOT_AUTO_ALLOW_WAYPOINT_POLICY",
  ],
  fields: {},
}) {}
