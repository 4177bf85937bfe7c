/** Readiness of the agent (spec 001 §3 "ready or not", §4.1 readiness URL). */
import { Context, type Effect } from "effect"

export interface Readiness {
  readonly ready: boolean
  /** Why not ready (shown in the 503 body). */
  readonly reason?: string
}

export interface AgentReadinessShape {
  readonly check: Effect.Effect<Readiness>
}

export class AgentReadiness extends Context.Tag("mesh/agent/AgentReadiness")<AgentReadiness, AgentReadinessShape>() {}

/** The first failing condition, or ready. */
export const combine = (conditions: ReadonlyArray<readonly [boolean, string]>): Readiness => {
  const failing = conditions.find(([ok]) => !ok)
  return failing === undefined ? { ready: true } : { ready: false, reason: failing[1] }
}

/** What the agent's readiness is decided from. */
export interface AgentReadinessInputs {
  /** DISABLE_PROXY=true: a proxyless gRPC application, no proxy process. */
  readonly proxyless: boolean
  /** The workload certificate is held and not expired (mTLS identity). */
  readonly certificateValid: boolean
  /** Proxyless: the gRPC bootstrap file has been written. */
  readonly bootstrapWritten: boolean
  /** An xDS response has come from the discovery server on some stream. */
  readonly xdsResponseReceived: boolean
  /** Sidecar: the proxy answers its own readiness check. */
  readonly proxyReady: boolean
}

/**
 * Sidecar: certificate, a first xDS response and the proxy's own readiness. Proxyless (as in the
 * reference): certificate and the gRPC bootstrap only. Requiring an xDS response there would
 * deadlock the hold-application pattern: `mesh-agent wait` runs before the application starts,
 * and only the application opens the xDS stream that brings the first response.
 */
export const agentReadiness = (inputs: AgentReadinessInputs): Readiness =>
  inputs.proxyless
    ? combine([
        [inputs.certificateValid, "workload certificate expired"],
        [inputs.bootstrapWritten, "gRPC bootstrap not written yet"],
      ])
    : combine([
        [inputs.certificateValid, "workload certificate expired"],
        [inputs.xdsResponseReceived, "no xDS response received yet"],
        [inputs.proxyReady, "proxy not ready"],
      ])
