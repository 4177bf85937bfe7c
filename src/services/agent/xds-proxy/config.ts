/**
 * The environment the agent's xDS proxy reads (spec 001 §4.4 and §8): the Wasm remote-load
 * conversion switch (in the agent's table through the control-plane tuning group) and the gRPC
 * keepalive of the upstream connection. The keepalive variables are defined once, in the
 * discovery server's table, and are not part of the tuning group the agent's table picks up, so
 * they are taken from there.
 */
import { agentEnv } from "../../config/agent-env.js"
import { discoveryEnv } from "../../config/discovery-env.js"
import { EnvConfig } from "../../config/env-config.js"

export const xdsProxyEnv = {
  MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION: agentEnv.MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION,
  GRPC_KEEPALIVE_INTERVAL: discoveryEnv.GRPC_KEEPALIVE_INTERVAL,
  GRPC_KEEPALIVE_TIMEOUT: discoveryEnv.GRPC_KEEPALIVE_TIMEOUT,
} as const

export class XdsProxyConfig extends EnvConfig<XdsProxyConfig>()("mesh/agent/XdsProxyConfig", {
  table: xdsProxyEnv,
  names: ["MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION", "GRPC_KEEPALIVE_INTERVAL", "GRPC_KEEPALIVE_TIMEOUT"],
  fields: {},
}) {}
