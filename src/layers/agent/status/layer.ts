/**
 * The status listeners of `mesh-agent proxy` (`PROXY_STATUS_PORT` readiness, `STATUS_PORT` agent
 * status with merged metrics, app probes, `/quitquitquit`, `/drain`; `--stsPort`), readiness per
 * spec 001: a valid certificate, an xDS response, and the bootstrap (proxyless) or the proxy's
 * own readiness (sidecar).
 */
import { Effect, Layer } from "effect"
import { WorkloadIdentity } from "../../../services/agent/identity/identity.js"
import { AgentReadiness, agentReadiness } from "../../../services/agent/status/status.js"
import { XdsProxy } from "../../../services/agent/xds-proxy/xds-proxy.js"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { GrpcBootstrapWritten } from "../bootstrap/layer.js"
import { AgentProxy } from "../proxy/layer.js"
import { AgentSetup } from "../setup.js"
import { layer as statusServersLayer } from "./status-server.js"

export const layerReadiness = Layer.effect(
  AgentReadiness,
  Effect.gen(function* () {
    const setup = yield* AgentSetup
    const workload = yield* WorkloadIdentity
    const proxy = yield* XdsProxy
    const { process } = yield* AgentProxy
    const { written } = yield* GrpcBootstrapWritten
    return AgentReadiness.of({
      check: Effect.gen(function* () {
        const cert = yield* workload.current
        return agentReadiness({
          proxyless: setup.proxyless,
          certificateValid: cert.notAfter.getTime() > Date.now(),
          bootstrapWritten: written,
          xdsResponseReceived: yield* proxy.receivedResponse,
          proxyReady: process !== undefined ? yield* process.ready : true,
        })
      }),
    })
  }),
)

export const layer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    return statusServersLayer({
      readiness: { host: undefined, port: config.PROXY_STATUS_PORT },
      agentStatus: config.statusPort > 0 ? { host: undefined, port: config.statusPort } : undefined,
      proxyAdminPort: setup.proxyless ? undefined : setup.proxyConfig.proxyAdminPort,
      appProbers: setup.appProbers,
      appMetrics: setup.appMetrics,
      stsPort: config.stsPort,
      profiling: config.profiling,
    })
  }),
).pipe(Layer.provide(layerReadiness))
