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
