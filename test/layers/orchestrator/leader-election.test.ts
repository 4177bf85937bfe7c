/**
 * Leader election on a Lease of the in-process orchestrator API server, through the real client:
 * one instance leads and runs its controller; of two, exactly one leads; a released or expired
 * Lease passes to the other, whose controller starts while the old one's is interrupted; an API
 * server that stops answering makes the leader step down after its renew deadline, and it leads
 * again once the server is back. Timing is shortened (1.2 s lease) and the tests run on the real
 * clock, waiting for conditions.
 */
import { type Duration, Effect, Exit, Fiber, Layer, Ref, Scope, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LeaderElectionOptions, makeLeaderElection } from "../../../src/layers/orchestrator/leader-election.js"
import type { OrchestratorClient } from "../../../src/services/orchestrator/client.js"
import type { LeaderElectionShape } from "../../../src/services/orchestrator/leader.js"
import type { OrchLease } from "../../../src/services/orchestrator/lease.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["mesh-system"] })
})
afterAll(() => server.close())

let leases = 0
const timing = (): LeaderElectionOptions => ({
  namespace: "mesh-system",
  leaseName: `leader-${++leases}`,
  leaseDuration: "1200 millis",
  renewDeadline: "700 millis",
  retryPeriod: "150 millis",
})

const leaseOf = (name: string) =>
  server.get("coordination.k8s.io/v1", "Lease", "mesh-system", name) as OrchLease | undefined

/** Waits until the instance's leadership is `wanted`. */
const until = (election: LeaderElectionShape, wanted: boolean, within: Duration.DurationInput = "5 seconds") =>
  election.changes.changes.pipe(
    Stream.filter((leading) => leading === wanted),
    Stream.runHead,
    Effect.timeout(within),
    Effect.orDieWith(() => new Error(`${election.identity} never became ${wanted}`)),
  )

interface Instance {
  readonly election: LeaderElectionShape
  readonly scope: Scope.CloseableScope
  /** Controller starts and interruptions. */
  readonly log: Ref.Ref<ReadonlyArray<string>>
}

/** One instance in its own scope, running a controller that records its life. */
const instance = (options: LeaderElectionOptions, identity: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const log = yield* Ref.make<ReadonlyArray<string>>([])
    const election = yield* makeLeaderElection({ ...options, identity }).pipe(Scope.extend(scope))
    const controller = Effect.zipRight(
      Ref.update(log, (l) => [...l, "start"]),
      Effect.never.pipe(Effect.onInterrupt(() => Ref.update(log, (l) => [...l, "stop"]))),
    )
    yield* election.whileLeader("test-controller", controller).pipe(Scope.extend(scope))
    return { election, scope, log } satisfies Instance
  })

const run = <A, E>(effect: Effect.Effect<A, E, OrchestratorClient | Scope.Scope>) =>
  Effect.runPromise(
    Effect.scoped(Effect.provide(effect, Layer.orDie(orchestratorLayer(server)))) as Effect.Effect<A, E>,
  )

/** Waits (polling) until `check` holds. */
const eventually = (check: Effect.Effect<boolean>, within = 5000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* Effect.sleep("20 millis")
    }
  })

describe("leader election", () => {
  it("a single instance creates the Lease, leads and runs its controller", async () => {
    const options = timing()
    await run(
      Effect.gen(function* () {
        const a = yield* instance(options, "pod-a")
        yield* until(a.election, true)
        expect(yield* a.election.isLeader).toBe(true)
        yield* eventually(Effect.map(Ref.get(a.log), (l) => l.includes("start")))
        const lease = leaseOf(options.leaseName!)
        expect(lease?.spec).toMatchObject({ holderIdentity: "pod-a", leaseDurationSeconds: 1, leaseTransitions: 0 })
        // It keeps renewing: renewTime moves.
        const first = lease?.spec?.renewTime
        yield* eventually(Effect.sync(() => leaseOf(options.leaseName!)?.spec?.renewTime !== first))
        expect(yield* a.election.isLeader).toBe(true)
        yield* Scope.close(a.scope, Exit.void)
        // Released on shutdown.
        expect(leaseOf(options.leaseName!)?.spec?.holderIdentity).toBeUndefined()
        expect(yield* Ref.get(a.log)).toEqual(["start", "stop"])
      }),
    )
  })

  it("of two instances exactly one leads; when it releases, the other takes over at once", async () => {
    const options = timing()
    await run(
      Effect.gen(function* () {
        const a = yield* instance(options, "pod-a")
        const b = yield* instance(options, "pod-b")
        yield* eventually(Effect.map(Effect.all([a.election.isLeader, b.election.isLeader]), ([x, y]) => x || y))
        // Several retry periods later there is still exactly one leader.
        yield* Effect.sleep("600 millis")
        const [leaderA, leaderB] = yield* Effect.all([a.election.isLeader, b.election.isLeader])
        expect(leaderA !== leaderB).toBe(true)
        const [leader, follower] = leaderA ? [a, b] : [b, a]
        expect(leaseOf(options.leaseName!)?.spec?.holderIdentity).toBe(leader.election.identity)
        expect(yield* Ref.get(leader.log)).toEqual(["start"])
        expect(yield* Ref.get(follower.log)).toEqual([])

        const released = Date.now()
        yield* Scope.close(leader.scope, Exit.void)
        expect(yield* Ref.get(leader.log)).toEqual(["start", "stop"])
        yield* until(follower.election, true)
        // Faster than waiting out the 1.2 s lease: the release handed it over.
        expect(Date.now() - released).toBeLessThan(1100)
        yield* eventually(Effect.map(Ref.get(follower.log), (l) => l.includes("start")))
        expect(leaseOf(options.leaseName!)?.spec).toMatchObject({
          holderIdentity: follower.election.identity,
          leaseTransitions: 1,
        })
        yield* Scope.close(follower.scope, Exit.void)
      }),
    )
  })

  it("a holder that stopped renewing loses the Lease once it has not changed for its duration", async () => {
    const options = timing()
    server.put({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: options.leaseName!, namespace: "mesh-system" },
      spec: { holderIdentity: "dead-pod", leaseDurationSeconds: 1, renewTime: "2020-01-01T00:00:00.000000Z" },
    })
    await run(
      Effect.gen(function* () {
        const started = Date.now()
        const a = yield* instance(options, "pod-a")
        // Not before a full duration since it first saw the Lease (whatever renewTime says).
        yield* Effect.sleep("500 millis")
        expect(yield* a.election.isLeader).toBe(false)
        yield* until(a.election, true)
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
        expect(leaseOf(options.leaseName!)?.spec).toMatchObject({ holderIdentity: "pod-a", leaseTransitions: 1 })
        yield* eventually(Effect.map(Ref.get(a.log), (l) => l.includes("start")))
        yield* Scope.close(a.scope, Exit.void)
      }),
    )
  })

  it("steps down after the renew deadline when the API server fails, and never crashes", async () => {
    const options = timing()
    await run(
      Effect.gen(function* () {
        const a = yield* instance(options, "pod-a")
        yield* until(a.election, true)
        // Every request for this Lease fails with 500 from now on.
        server.failNext({ path: new RegExp(`/leases/${options.leaseName}$`), status: 500, count: 1_000_000 })
        const failing = Date.now()
        yield* until(a.election, false)
        const elapsed = Date.now() - failing
        // Within the renew deadline (0.7 s) after the last renewal, itself at most one retry period earlier.
        expect(elapsed).toBeGreaterThanOrEqual(500)
        expect(elapsed).toBeLessThan(1500)
        yield* eventually(Effect.map(Ref.get(a.log), (l) => l.join(",") === "start,stop"))
        yield* Scope.close(a.scope, Exit.void)
      }),
    )
  })

  it("leads again with its own identity once the API server is back", async () => {
    const options = timing()
    await run(
      Effect.gen(function* () {
        const a = yield* instance(options, "pod-a")
        yield* until(a.election, true)
        yield* Effect.promise(() => server.down())
        yield* until(a.election, false)
        const fiber = yield* Effect.fork(until(a.election, true, "10 seconds"))
        yield* Effect.promise(() => server.up())
        yield* Fiber.join(fiber)
        yield* eventually(Effect.map(Ref.get(a.log), (l) => l.join(",") === "start,stop,start"))
        yield* Scope.close(a.scope, Exit.void)
      }),
    )
  })

  it("the default identity is the host name with a random suffix", async () => {
    await run(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const election = yield* makeLeaderElection(timing()).pipe(Scope.extend(scope))
        expect(election.identity).toMatch(/^.+-[a-z0-9]{5}$/)
        yield* Scope.close(scope, Exit.void)
      }),
    )
  })
})
