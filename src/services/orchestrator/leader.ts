/**
 * The LeaderElection service: whether this instance currently leads, and a way to run the
 * writing controllers (root-cert ConfigMaps, webhook patching, status writers) only while it
 * does. Backed by a coordination Lease (src/layers/orchestrator/leader-election.ts); with
 * `ENABLE_LEADER_ELECTION=false` the instance assumes it is alone and always leads (spec 000
 * part 1 rule 6).
 */
import { Context, Effect, Layer, type Scope, SubscriptionRef } from "effect"

export interface LeaderElectionShape {
  /** The Lease's identity for this instance. */
  readonly identity: string
  readonly isLeader: Effect.Effect<boolean>
  /** The current leadership, then every change. */
  readonly changes: SubscriptionRef.SubscriptionRef<boolean>
  /**
   * Runs `controller` each time this instance becomes leader and interrupts it when leadership is
   * lost; the watching fiber lives in the scope.
   */
  readonly whileLeader: <E, R>(
    name: string,
    controller: Effect.Effect<void, E, R>,
  ) => Effect.Effect<void, never, R | Scope.Scope>
}

export class LeaderElection extends Context.Tag("mesh/LeaderElection")<LeaderElection, LeaderElectionShape>() {}

/** Always the leader: a single instance, `ENABLE_LEADER_ELECTION=false`, and tests. */
export const layerAlwaysLeader: Layer.Layer<LeaderElection> = Layer.effect(
  LeaderElection,
  Effect.map(SubscriptionRef.make(true), (changes) => ({
    identity: "single-instance",
    isLeader: Effect.succeed(true),
    changes,
    whileLeader: (name, controller) =>
      controller.pipe(
        Effect.catchAllCause((cause) => Effect.logError(`controller ${name} failed`, cause)),
        Effect.forkScoped,
        Effect.asVoid,
      ),
  })),
)
