/**
 * `LeaderElection` on a coordination.k8s.io/v1 Lease in the mesh namespace (issue 18 item 6),
 * with the semantics of the orchestrator client library's leader election as the reference runs
 * it: a 30 s lease, renewed every 7.5 s by its holder, who steps down when it cannot renew within
 * 15 s; candidates poll at the retry period (jittered) and take the Lease when it is absent,
 * released, or has not changed for its duration (src/services/orchestrator/lease.ts decides);
 * every write is a PUT with the read resourceVersion, so of two candidates only one wins and the
 * other's 409 sends it back to reading. On shutdown the holder releases the Lease (no holder, 1 s
 * duration), so another instance takes over at its next attempt rather than 30 s later.
 *
 * Time is Effect's Clock (TestClock drives it). The reference exposes no leadership metric, so
 * none is registered. Transitions are logged in scope `leader`.
 */
import { hostname } from "node:os"
import {
  Clock,
  Duration,
  Effect,
  Either,
  Fiber,
  Layer,
  Option,
  Random,
  type Scope,
  Stream,
  SubscriptionRef,
} from "effect"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient, OrchestratorError } from "../../services/orchestrator/client.js"
import { LeaderElection, type LeaderElectionShape } from "../../services/orchestrator/leader.js"
import {
  DEFAULT_LEASE_NAME,
  DEFAULT_TIMING,
  decide,
  type Observation,
  type OrchLease,
  observe,
  released,
} from "../../services/orchestrator/lease.js"
import { Resources } from "../../services/orchestrator/resources.js"

export interface LeaderElectionOptions {
  /** The mesh namespace (`--namespace` / `POD_NAMESPACE`), where the Lease lives. */
  readonly namespace: string
  /** Default `mesh-leader`. */
  readonly leaseName?: string
  /** `POD_NAME`; when empty, the host name with a random suffix. */
  readonly identity?: string
  /** Default 30 s. Keep renewDeadline < leaseDuration and retryPeriod < renewDeadline. */
  readonly leaseDuration?: Duration.DurationInput
  /** Default 15 s. */
  readonly renewDeadline?: Duration.DurationInput
  /** Default 7.5 s. */
  readonly retryPeriod?: Duration.DurationInput
}

/** Candidates wait between retryPeriod and (1 + JITTER) × retryPeriod, as the reference does. */
const JITTER = 1.2

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("controllers")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("controllers")),
  error: (message: string) => Effect.logError(message).pipe(withScope("controllers")),
}

const randomSuffix = Effect.map(Effect.all(Array.from({ length: 5 }, () => Random.nextIntBetween(0, 36))), (digits) =>
  digits.map((d) => d.toString(36)).join(""),
)

type Attempt = { readonly _tag: "Leading" } | { readonly _tag: "Held"; readonly holder: string }

const millisOf = (d: Duration.DurationInput | undefined, fallback: number): number =>
  d === undefined ? fallback : Duration.toMillis(Duration.decode(d))

export const makeLeaderElection = (
  options: LeaderElectionOptions,
): Effect.Effect<LeaderElectionShape, never, OrchestratorClient | Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* OrchestratorClient
    const namespace = options.namespace
    const name = options.leaseName ?? DEFAULT_LEASE_NAME
    const where = `Lease ${namespace}/${name}`
    const leaseDurationMillis = millisOf(options.leaseDuration, DEFAULT_TIMING.leaseDurationMillis)
    const renewDeadlineMillis = millisOf(options.renewDeadline, DEFAULT_TIMING.renewDeadlineMillis)
    const retryPeriodMillis = millisOf(options.retryPeriod, DEFAULT_TIMING.retryPeriodMillis)
    const identity =
      options.identity !== undefined && options.identity !== ""
        ? options.identity
        : `${hostname()}-${yield* randomSuffix}`
    const changes = yield* SubscriptionRef.make(false)

    // The loop's own state; only its fiber touches it.
    let observed: Observation | undefined
    let lastRenewalMillis = 0
    let lastHolder: string | undefined
    let lastError: string | undefined

    const read = client.get<OrchLease>(Resources.leases, namespace, name).pipe(
      Effect.asSome,
      Effect.catchIf(
        (e) => e.notFound,
        () => Effect.succeedNone,
      ),
      Effect.map(Option.getOrUndefined),
    )

    const tryAcquireOrRenew: Effect.Effect<Attempt, OrchestratorError> = Effect.gen(function* () {
      const lease = yield* read
      const now = yield* Clock.currentTimeMillis
      const step = decide({ namespace, name, identity, lease, observed, nowMillis: now, leaseDurationMillis })
      observed = step.observed
      const decision = step.decision
      if (decision._tag === "Wait") return { _tag: "Held", holder: decision.holder } as const
      const written =
        decision._tag === "Create"
          ? yield* client.create(Resources.leases, decision.lease)
          : yield* client.replace(Resources.leases, decision.lease)
      // Our own write is the latest record: it must not count as someone else's sign of life.
      observed = observe(written, observed, yield* Clock.currentTimeMillis, leaseDurationMillis)
      return { _tag: "Leading" } as const
    })

    // A 409 means another candidate wrote first: read again and decide on what it wrote.
    const attempt = tryAcquireOrRenew.pipe(
      Effect.catchIf(
        (e) => e.conflict,
        () => tryAcquireOrRenew,
      ),
    )

    const setLeading = (leading: boolean) => SubscriptionRef.set(changes, leading)

    const step = Effect.gen(function* () {
      const leading = yield* SubscriptionRef.get(changes)
      const started = yield* Clock.currentTimeMillis
      // The leader may spend only what is left of its renew deadline, so that it steps down
      // before any other candidate can consider the Lease expired.
      const budget = leading ? lastRenewalMillis + renewDeadlineMillis - started : renewDeadlineMillis
      const result =
        budget <= 0
          ? Either.left(new OrchestratorError({ status: 0, reason: "Timeout", message: "renew deadline passed" }))
          : yield* attempt.pipe(
              Effect.timeoutFail({
                duration: Duration.millis(budget),
                onTimeout: () =>
                  new OrchestratorError({ status: 0, reason: "Timeout", message: `no answer within ${budget} ms` }),
              }),
              Effect.either,
            )
      const now = yield* Clock.currentTimeMillis
      if (Either.isRight(result) && lastError !== undefined) {
        lastError = undefined
        yield* log.info(`${where}: the API server answers again`)
      }
      if (Either.isRight(result) && result.right._tag === "Leading") {
        lastRenewalMillis = now
        lastHolder = identity
        if (!leading) {
          yield* log.info(`${where}: ${identity} became the leader`)
          yield* setLeading(true)
        }
        return
      }
      if (Either.isRight(result)) {
        const holder = result.right._tag === "Held" ? result.right.holder : ""

        if (leading) {
          yield* log.warn(`${where}: now held by ${holder}; ${identity} steps down`)
          yield* setLeading(false)
        } else if (holder !== lastHolder) {
          yield* log.info(`${where}: held by ${holder}; ${identity} waits as a candidate`)
        }
        lastHolder = holder
        return
      }
      const error = result.left
      const text = `${error.status} ${error.reason}: ${error.message}`
      if (text !== lastError) {
        lastError = text
        yield* log.warn(`${where}: ${leading ? "cannot renew" : "cannot acquire"}: ${text}`)
      }
      if (leading && now - lastRenewalMillis >= renewDeadlineMillis) {
        yield* log.error(`${where}: not renewed within ${renewDeadlineMillis} ms; ${identity} steps down`)
        lastHolder = undefined
        yield* setLeading(false)
      }
    })

    const pause = Effect.gen(function* () {
      if (yield* SubscriptionRef.get(changes)) return yield* Effect.sleep(Duration.millis(retryPeriodMillis))
      const factor = 1 + (yield* Random.next) * JITTER
      yield* Effect.sleep(Duration.millis(retryPeriodMillis * factor))
    })

    const loop = Effect.forever(Effect.zipRight(step, pause))
    const fiber = yield* Effect.forkScoped(loop)

    // Stop competing first, then stop the controllers, then hand the Lease over.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        yield* Fiber.interrupt(fiber)
        if (!(yield* SubscriptionRef.get(changes))) return
        yield* setLeading(false)
        const release = Effect.gen(function* () {
          const lease = yield* read
          if (lease === undefined) return
          const next = released(lease, identity, yield* Clock.currentTimeMillis)
          if (next === undefined) return
          yield* client.replace(Resources.leases, next)
          yield* log.info(`${where}: ${identity} released the lease`)
        })
        yield* release.pipe(
          Effect.timeout(Duration.millis(Math.max(1000, retryPeriodMillis))),
          Effect.catchAll((e) => log.warn(`${where}: cannot release the lease: ${String(e)}`)),
        )
      }),
    )

    const whileLeader: LeaderElectionShape["whileLeader"] = (controllerName, controller) => {
      const run = Effect.gen(function* () {
        yield* log.info(`${identity} leads: starting controller ${controllerName}`)
        yield* controller.pipe(
          Effect.catchAllCause((cause) =>
            Effect.logError(`controller ${controllerName} failed`, cause).pipe(withScope("controllers")),
          ),
          Effect.onInterrupt(() => log.info(`leadership lost: controller ${controllerName} stopped`)),
        )
      })
      return changes.changes.pipe(
        Stream.changes,
        Stream.flatMap((leading) => (leading ? Stream.fromEffect(run) : Stream.empty), { switch: true }),
        Stream.runDrain,
        Effect.forkScoped,
        Effect.asVoid,
      )
    }

    return {
      identity,
      isLeader: SubscriptionRef.get(changes),
      changes,
      whileLeader,
    }
  })

/** The Lease-backed `LeaderElection` (`ENABLE_LEADER_ELECTION=true`, the default). */
export const layer = (options: LeaderElectionOptions): Layer.Layer<LeaderElection, never, OrchestratorClient> =>
  Layer.scoped(LeaderElection, makeLeaderElection(options))
