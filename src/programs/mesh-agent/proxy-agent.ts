/**
 * `mesh-agent proxy` (loaded lazily by proxy-command.ts): the workload identity, the xDS proxy,
 * the SDS server, the gRPC bootstrap, the proxy process (sidecar), the status listeners and the
 * drain on shutdown, from `AgentConfig`; it runs until interrupted (SIGTERM/SIGINT through
 * NodeRuntime.runMain) or, in sidecar mode, as long as the proxy.
 */
import { Context, Effect, Layer } from "effect"
import * as GrpcBootstrap from "../../layers/agent/bootstrap/layer.js"
import type { DnsProxyError } from "../../layers/agent/dns/dns-proxy.js"
import * as Dns from "../../layers/agent/dns/layer.js"
import * as Drain from "../../layers/agent/drain/layer.js"
import * as Identity from "../../layers/agent/identity/layer.js"
import * as ProxyProcess from "../../layers/agent/proxy/layer.js"
import * as Sds from "../../layers/agent/sds/layer.js"
import * as Setup from "../../layers/agent/setup.js"
import * as Status from "../../layers/agent/status/layer.js"
import * as Wasm from "../../layers/agent/wasm/layer.js"
import * as XdsProxy from "../../layers/agent/xds-proxy/layer.js"
import { layer as loggingLayer } from "../../layers/logging.js"
import * as HeapGrowth from "../../layers/memory/heap-growth.js"
import { layer as metricsLayer } from "../../layers/metrics.js"
import { AgentConfig, type ProxyAgentFlags, podFieldsConfig } from "../../services/config/agent-config.js"
import type { LogSettings } from "../../services/logging/options.js"
import { agentScopes } from "../../services/logging/scopes.js"
import type { Metrics } from "../../services/metrics/metrics.js"

/**
 * The DNS proxy when DNS is captured (`MESH_META_DNS_CAPTURE`) or asked for
 * (`MESH_META_ENABLE_DNS_SERVER`). The xDS proxy looks for its name table sink and feeds it NDS
 * only when it is there, so the layer adds nothing to the type when off.
 */
const dnsProxy: Layer.Layer<never, DnsProxyError, AgentConfig | Metrics> = Layer.unwrapEffect(
  Effect.map(AgentConfig, (config) =>
    config.MESH_META_DNS_CAPTURE || config.MESH_META_ENABLE_DNS_SERVER ? Dns.layerFromConfig : Layer.empty,
  ),
)

export const runProxyAgent = (flags: ProxyAgentFlags, logging: LogSettings) => {
  // Each layer below provides what the ones above it need.
  const agent = Status.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(ProxyProcess.layer, GrpcBootstrap.layer, Sds.layer, Drain.layer)),
    Layer.provideMerge(XdsProxy.layer),
    // Remote Wasm modules are fetched to local files for the proxy (the xDS proxy's ECDS rewrite).
    Layer.provideMerge(Layer.mergeAll(dnsProxy, Wasm.layer(), HeapGrowth.layerFromEnv)),
    Layer.provideMerge(Identity.layer),
    Layer.provideMerge(Setup.layer),
    Layer.provide(AgentConfig.layerFromEnv(Effect.map(podFieldsConfig, (pod) => ({ ...flags, ...pod })))),
    Layer.provide(metricsLayer("mesh-agent")),
  )
  return Effect.scoped(
    Effect.flatMap(Layer.build(agent), (context) => Context.get(context, ProxyProcess.AgentProxy).lifetime),
  ).pipe(Effect.provide(loggingLayer(logging, agentScopes)))
}
