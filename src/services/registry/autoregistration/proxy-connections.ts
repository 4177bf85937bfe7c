/**
 * The ProxyConnections service: what the xDS server tells the controllers that follow proxy
 * connections (WorkloadEntry auto-registration and health checks). The ADS stream calls
 * `onConnect` once its proxy is authorized, `onDisconnect` when the stream ends, and
 * `onHealth` for each health report the agent sends. Each returns at once: the work (API
 * writes) is queued in the implementing layer, so a slow API server never holds a stream up.
 */
import { Context, Effect, Layer } from "effect"
import type { ConnectedProxy, HealthReport } from "./planner.js"

export interface ProxyConnectionsShape {
  readonly onConnect: (connectionId: string, proxy: ConnectedProxy) => Effect.Effect<void>
  /** Connections never announced (refused, or no proxy known yet) are ignored. */
  readonly onDisconnect: (connectionId: string) => Effect.Effect<void>
  readonly onHealth: (connectionId: string, report: HealthReport) => Effect.Effect<void>
}

export class ProxyConnections extends Context.Tag("mesh/ProxyConnections")<ProxyConnections, ProxyConnectionsShape>() {}

/**
 * The type URLs of the agent's health reports (the reference's `istio.io/health`, and ours): a
 * DiscoveryRequest of this type is a report, healthy unless it carries `error_detail`. No
 * response is ever sent for it.
 */
export const HEALTH_TYPE_URLS: ReadonlyArray<string> = ["mesh.io/health", "istio.io/health"]

export const isHealthReport = (typeUrl: string | undefined): boolean => HEALTH_TYPE_URLS.includes(typeUrl ?? "")

/** The report a health request makes. */
export const healthReportOf = (request: {
  readonly error_detail?: { readonly message?: string } | null
}): HealthReport =>
  request.error_detail === undefined || request.error_detail === null
    ? { healthy: true }
    : { healthy: false, ...(request.error_detail.message ? { message: request.error_detail.message } : {}) }

/** Nobody follows connections: auto-registration off, or no orchestrator (`--registries Mock`). */
export const noProxyConnections: ProxyConnectionsShape = {
  onConnect: () => Effect.void,
  onDisconnect: () => Effect.void,
  onHealth: () => Effect.void,
}

export const layerNone: Layer.Layer<ProxyConnections> = Layer.succeed(ProxyConnections, noProxyConnections)
