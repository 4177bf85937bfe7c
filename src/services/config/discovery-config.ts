/**
 * Config services of `mesh-discovery` beside the xDS and CA subsystems' own (the debug/monitoring
 * HTTP servers, the introspection facility, the webhooks, the inputs and the controllers), each
 * its slice of `discoveryEnv` plus the flags that place it. At start all of them are taken from the
 * one parse of the whole table (programs/mesh-discovery/discovery-config.ts).
 */
import { Ports, SYSTEM_NAMESPACE } from "../constants.js"
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

/** Fields of `ControllersConfig` that come from flags. */
export interface ControllersFields {
  /** `--namespace` / `POD_NAMESPACE`: the Lease and the install-cni pods (node untainting) live here. */
  readonly namespace: string
  /** `--domain`: the DNS suffix analysis and the Gateway-API status writer resolve hosts with. */
  readonly domain: string
}

/**
 * What mesh-discovery's controllers read (programs/mesh-discovery/controllers.ts and the
 * WorkloadEntry auto-registration): leader election, the webhook configurations whose caBundle is
 * patched, node untainting, analysis, Gateway-API status and deployments, InferencePool Services.
 * Each controller that writes runs only while this instance leads.
 */
export class ControllersConfig extends EnvConfig<ControllersConfig, ControllersFields>()("mesh/ControllersConfig", {
  table: discoveryEnv,
  names: [
    "ENABLE_LEADER_ELECTION",
    "POD_NAME",
    "MESH_WATCH_NAMESPACE",
    "REVISION",
    "VALIDATION_WEBHOOK_CONFIG_NAME",
    "INJECT_ENABLED",
    "INJECTION_WEBHOOK_CONFIG_NAME",
    "PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS",
    "PILOT_ENABLE_ANALYSIS",
    "PILOT_ANALYSIS_INTERVAL",
    "PILOT_ENABLE_GATEWAY_API",
    "PILOT_ENABLE_GATEWAY_API_STATUS",
    "PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER",
    "PILOT_GATEWAY_API_CONTROLLER_NAME",
    "PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME",
    "AMBIENT_ENABLE_MULTI_NETWORK",
    "ENABLE_GATEWAY_API_INFERENCE_EXTENSION",
    "PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION",
    "PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS",
    "PILOT_WORKLOAD_ENTRY_GRACE_PERIOD",
  ],
  // The flags' defaults.
  fields: { namespace: SYSTEM_NAMESPACE, domain: "cluster.local" },
}) {}
