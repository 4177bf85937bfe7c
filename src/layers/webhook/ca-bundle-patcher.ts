/**
 * Keeps `clientConfig.caBundle` of every webhook in the ValidatingWebhookConfiguration named by
 * `VALIDATION_WEBHOOK_CONFIG_NAME` and the MutatingWebhookConfiguration named by
 * `INJECTION_WEBHOOK_CONFIG_NAME` equal to the CA of the webhook's serving certificate (spec 000
 * part 1 rule 9, issue 18 item 5). It re-patches when the CA changes and when someone edits a
 * configuration (an informer on each, selected by name); a configuration that does not exist is
 * waited for (logged once) and patched when it appears. Writes are PUTs with the read
 * resourceVersion, so a concurrent edit is never overwritten blindly; a failed write is counted
 * in `mesh_validation_config_update_error` (by the Status reason, as the reference labels it),
 * logged, and retried with exponential backoff from a fresh read; a successful one in
 * `mesh_validation_config_updates`. failurePolicy is left as it is: the spec says nothing of
 * flipping it. Meant to run under `LeaderElection.whileLeader`, so one instance writes.
 */
import { Duration, Effect, Option, Queue, Schedule, Stream, SubscriptionRef } from "effect"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient, type OrchestratorError } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"
import {
  type OrchWebhookConfiguration,
  planCaBundle,
  toCaBundle,
  updateErrorReason,
} from "../../services/webhook/ca-bundle.js"

export const UPDATES_METRIC = "mesh_validation_config_updates"
export const UPDATE_ERROR_METRIC = "mesh_validation_config_update_error"

export interface CaBundlePatcherOptions {
  /** `VALIDATION_WEBHOOK_CONFIG_NAME`; empty: not patched. */
  readonly validatingWebhookConfigName: string
  /** `INJECTION_WEBHOOK_CONFIG_NAME`; empty: not patched. */
  readonly mutatingWebhookConfigName: string
  /** The CA certificates (PEM) of the webhook's serving certificate: the current ones, then every change. */
  readonly caPem: Stream.Stream<string>
  /** First retry delay after a failed write; default 100 ms, doubled up to `maxBackoff`. */
  readonly minBackoff?: Duration.DurationInput
  /** Default 30 s. */
  readonly maxBackoff?: Duration.DurationInput
}

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("validationController")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("validationController")),
  error: (message: string) => Effect.logError(message).pipe(withScope("validationController")),
}

interface Target {
  readonly ref: ResourceRef
  readonly name: string
}

/**
 * Runs until interrupted (leadership lost, shutdown); never fails. Each configuration has its own
 * fiber, woken by its informer and by CA changes; wake-ups while it works merge into one.
 */
export const runCaBundlePatcher = (
  options: CaBundlePatcherOptions,
): Effect.Effect<void, never, OrchestratorClient | Informers | Metrics> =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* OrchestratorClient
      const informers = yield* Informers
      const metrics = yield* Metrics
      const updates = metrics.counter(UPDATES_METRIC, "Webhook config updates")
      const updateErrors = metrics.counter(UPDATE_ERROR_METRIC, "Webhook config update errors", ["reason"])
      const backoff = Schedule.exponential(Duration.decode(options.minBackoff ?? "100 millis"), 2).pipe(
        Schedule.union(Schedule.spaced(Duration.decode(options.maxBackoff ?? "30 seconds"))),
      )

      const targets: ReadonlyArray<Target> = [
        { ref: Resources.validatingWebhookConfigurations, name: options.validatingWebhookConfigName },
        { ref: Resources.mutatingWebhookConfigurations, name: options.mutatingWebhookConfigName },
      ].filter((t) => t.name !== "")
      if (targets.length === 0) return yield* log.info("no webhook configuration to patch: both names are empty")

      const ca = yield* SubscriptionRef.make<Option.Option<string>>(Option.none())
      const wakeups = yield* Effect.forEach(targets, () => Queue.sliding<void>(1))

      const follow = (target: Target, wake: Queue.Queue<void>) =>
        Effect.gen(function* () {
          const what = `${target.ref.kind} ${target.name}`
          const informer = yield* informers.informer<OrchWebhookConfiguration>(target.ref, {
            fieldSelector: `metadata.name=${target.name}`,
          })
          const { batches } = yield* informer.subscribe
          yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(batches), Queue.offer(wake, undefined))))
          let waitingLogged = false
          let malformed: string | undefined
          // Our last write, and the version it replaced: until the informer has seen the write,
          // its copy is that older version, and planning from it would only earn a 409.
          let lastWrite:
            | { readonly replaced: string | undefined; readonly written: OrchWebhookConfiguration }
            | undefined

          const newest = (cached: OrchWebhookConfiguration | undefined) =>
            cached !== undefined &&
            lastWrite !== undefined &&
            lastWrite.replaced !== undefined &&
            cached.metadata.resourceVersion === lastWrite.replaced
              ? lastWrite.written
              : cached

          /** One attempt; `fresh` reads from the API server instead of the informer's copy. */
          const reconcile = (fresh: boolean): Effect.Effect<void, OrchestratorError> =>
            Effect.gen(function* () {
              const pem = yield* SubscriptionRef.get(ca)
              if (Option.isNone(pem)) return
              const current = fresh
                ? yield* client.get<OrchWebhookConfiguration>(target.ref, undefined, target.name).pipe(
                    Effect.asSome,
                    Effect.catchIf(
                      (e) => e.notFound,
                      () => Effect.succeedNone,
                    ),
                    Effect.map(Option.getOrUndefined),
                  )
                : newest(informer.get(undefined, target.name))
              if (current === undefined) {
                if (!waitingLogged)
                  yield* log.info(`${what} does not exist (yet): its caBundle is patched once it is created`)
                waitingLogged = true
                return
              }
              waitingLogged = false
              const plan = planCaBundle(current, toCaBundle(pem.value))
              if (plan._tag === "Current") return
              if (plan._tag === "Malformed") {
                const key = `${current.metadata.resourceVersion}|${plan.field}`
                if (malformed !== key) yield* log.error(`${what}: cannot patch caBundle: ${plan.field} ${plan.reason}`)
                malformed = key
                return
              }
              malformed = undefined
              const written = yield* client
                .replace(target.ref, plan.object)
                .pipe(
                  Effect.tapError((e) => Effect.sync(() => updateErrors.inc({ reason: updateErrorReason(e.reason) }))),
                )
              lastWrite = { replaced: current.metadata.resourceVersion, written }
              updates.inc()
              yield* log.info(`${what}: caBundle of ${plan.webhooks} webhook(s) set to the current CA`)
            })

          let attempt = 0
          const withRetries = Effect.suspend(() => reconcile(attempt++ > 0)).pipe(
            Effect.tapError((e) =>
              log.warn(`${what}: cannot update caBundle (will retry): ${e.status} ${e.reason}: ${e.message}`),
            ),
            Effect.retry(backoff),
            Effect.ensuring(
              Effect.sync(() => {
                attempt = 0
              }),
            ),
            Effect.orDie,
          )
          yield* informer.synced
          return yield* Effect.forever(Effect.zipRight(Queue.take(wake), withRetries))
        })

      for (const [i, target] of targets.entries()) yield* Effect.forkScoped(follow(target, wakeups[i]!))
      for (const wake of wakeups) yield* Queue.offer(wake, undefined)
      // The CA: remember the latest, wake every configuration when it changes.
      yield* options.caPem.pipe(
        Stream.filter((pem) => pem.trim() !== ""),
        Stream.changes,
        Stream.runForEach((pem) =>
          Effect.zipRight(
            SubscriptionRef.set(ca, Option.some(pem)),
            Effect.forEach(wakeups, (wake) => Queue.offer(wake, undefined), { discard: true }),
          ),
        ),
      )
      // The CA stream ended (it should not): keep the configurations following the last CA.
      return yield* Effect.never
    }),
  )
