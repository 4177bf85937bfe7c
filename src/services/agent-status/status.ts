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
