/**
 * Keeps `clientConfig.caBundle` of every webhook in the ValidatingWebhookConfiguration named by
 * `VALIDATION_WEBHOOK_CONFIG_NAME` and the MutatingWebhookConfiguration named by
 * `INJECTION_WEBHOOK_CONFIG_NAME`, and of every Validating/MutatingWebhookConfiguration labelled
 * `mesh.io/rev=<REVISION>` (the revision tags and default validator `meshctl tag set` creates, which
 * copy the CA only once), equal to the CA of the webhook's serving certificate (spec 000 part 1
 * rule 9, issue 18 item 5). Labelled ones are found by an informer on the label, followed while
 * they exist and carry it. It re-patches when the CA changes and when someone edits a
 * configuration (an informer on each, selected by name); a configuration that does not exist is
 * waited for (logged once) and patched when it appears. Writes are PUTs with the read
 * resourceVersion, so a concurrent edit is never overwritten blindly; a failed write is counted
 * in `mesh_validation_config_update_error` (by the Status reason, as the reference labels it),
 * logged, and retried with exponential backoff from a fresh read; a successful one in
 * `mesh_validation_config_updates`. failurePolicy is left as it is: the spec says nothing of
 * flipping it. Meant to run under `LeaderElection.whileLeader`, so one instance writes.
 */
import { Duration, Effect, FiberMap, Option, Queue, Schedule, Stream, SubscriptionRef } from "effect"
import { Labels } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient, type OrchestratorError } from "../../services/orchestrator/client.js"
import { type InformerEvent, type InformerShape, Informers } from "../../services/orchestrator/informer.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"
import { DEFAULT_REVISION } from "../../services/revision-tags/names.js"
import {
  type OrchWebhookConfiguration,
  planCaBundle,
  toCaBundle,
  updateErrorReason,
} from "../../services/webhook/ca-bundle.js"

export const UPDATES_METRIC = "mesh_validation_config_updates"
export const UPDATE_ERROR_METRIC = "mesh_validation_config_update_error"

export interface CaBundlePatcherOptions {
  /** `VALIDATION_WEBHOOK_CONFIG_NAME`; empty: no validating configuration is patched. */
  readonly validatingWebhookConfigName: string
  /** `INJECTION_WEBHOOK_CONFIG_NAME`; empty (injection off): no mutating configuration is patched. */
  readonly mutatingWebhookConfigName: string
  /**
   * `REVISION` ("" = `default`): every Validating/MutatingWebhookConfiguration labelled
   * `mesh.io/rev=<revision>` (revision tags, the default validator of `tag set default`) is patched
   * too, as it appears, for the kinds whose named configuration is on; absent: only the named ones.
   */
  readonly revision?: string
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

type WebhookInformer = InformerShape<OrchWebhookConfiguration>

interface Target {
  readonly ref: ResourceRef
  readonly name: string
  /** Where its current state is read from: its own informer (named) or the revision's (labelled). */
  readonly informer: WebhookInformer
  /** Set for a configuration followed by label: the `mesh.io/rev` value it must still carry. */
  readonly revision?: string
}

const WEBHOOK_KINDS: ReadonlyArray<ResourceRef> = [
  Resources.validatingWebhookConfigurations,
  Resources.mutatingWebhookConfigurations,
]

const keyOf = (ref: ResourceRef, name: string) => `${ref.kind}/${name}`

/**
 * Runs until interrupted (leadership lost, shutdown); never fails. Each configuration has its own
 * fiber (in one FiberMap keyed by kind/name), woken by its informer and by CA changes; wake-ups
 * while it works merge into one. A labelled configuration's fiber ends when it is deleted (or
 * loses the label).
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

      const named = [
        { ref: Resources.validatingWebhookConfigurations, name: options.validatingWebhookConfigName },
        { ref: Resources.mutatingWebhookConfigurations, name: options.mutatingWebhookConfigName },
      ].filter((t) => t.name !== "")
      if (named.length === 0 && options.revision === undefined)
        return yield* log.info("no webhook configuration to patch: both names are empty")
      const namedKeys = new Set(named.map((t) => keyOf(t.ref, t.name)))

      const ca = yield* SubscriptionRef.make<Option.Option<string>>(Option.none())
      const following = yield* FiberMap.make<string>()
      const wakeups = new Map<string, Queue.Queue<void>>()
      const wake = (key: string) => {
        const queue = wakeups.get(key)
        return queue === undefined ? Effect.void : Queue.offer(queue, undefined)
      }

      /** The loop of one configuration: reconcile on every wake-up, retrying failed writes. */
      const follow = (target: Target, wakeup: Queue.Queue<void>) =>
        Effect.gen(function* () {
          const what = `${target.ref.kind} ${target.name}`
          const { informer } = target
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
              // Relabelled to another revision (a fresh read can see it before the informer drops it).
              if (
                current !== undefined &&
                target.revision !== undefined &&
                current.metadata.labels?.[Labels.revision] !== target.revision
              )
                return
              if (current === undefined) {
                // A labelled one that is gone is dropped by its informer's delete event.
                if (!waitingLogged && target.revision === undefined)
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
          return yield* Effect.forever(Effect.zipRight(Queue.take(wakeup), withRetries))
        })

      /** Follows a configuration from now on (unless it already is) and wakes it. */
      const ensureFollowed = (target: Target) =>
        Effect.gen(function* () {
          const key = keyOf(target.ref, target.name)
          if (!(yield* FiberMap.has(following, key))) {
            const wakeup = yield* Queue.sliding<void>(1)
            wakeups.set(key, wakeup)
            yield* FiberMap.run(following, key, follow(target, wakeup))
          }
          yield* wake(key)
        })

      const unfollow = (key: string) =>
        Effect.zipRight(
          Effect.sync(() => wakeups.delete(key)),
          FiberMap.remove(following, key),
        )

      // The named configurations: an informer on each, selected by name.
      for (const { ref, name } of named) {
        const informer = yield* informers.informer<OrchWebhookConfiguration>(ref, {
          fieldSelector: `metadata.name=${name}`,
        })
        const { batches } = yield* informer.subscribe
        yield* ensureFollowed({ ref, name, informer })
        const key = keyOf(ref, name)
        yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(batches), wake(key))))
      }

      // The configurations of this revision: followed while they carry its label.
      if (options.revision !== undefined) {
        const revision = options.revision === "" ? DEFAULT_REVISION : options.revision
        // A kind whose named configuration is off (INJECT_ENABLED=false) is not patched at all.
        const patchedKinds = WEBHOOK_KINDS.filter((ref) => named.some((t) => t.ref === ref))
        for (const ref of patchedKinds) {
          const informer = yield* informers.informer<OrchWebhookConfiguration>(ref, {
            labelSelector: `${Labels.revision}=${revision}`,
          })
          const { objects, batches } = yield* informer.subscribe
          const onEvent = (event: Pick<InformerEvent<OrchWebhookConfiguration>, "type" | "object">) => {
            const name = event.object.metadata.name
            const key = keyOf(ref, name)
            // A named one is already followed through its own informer.
            if (namedKeys.has(key)) return Effect.void
            return event.type === "deleted" ? unfollow(key) : ensureFollowed({ ref, name, informer, revision })
          }
          yield* Effect.forEach(objects, (object) => onEvent({ type: "added", object }), { discard: true })
          yield* Effect.forkScoped(
            Effect.forever(
              Effect.flatMap(Queue.take(batches), (batch) => Effect.forEach(batch.events, onEvent, { discard: true })),
            ),
          )
        }
      }

      // The CA: remember the latest, wake every configuration when it changes.
      yield* options.caPem.pipe(
        Stream.filter((pem) => pem.trim() !== ""),
        Stream.changes,
        Stream.runForEach((pem) =>
          Effect.zipRight(
            SubscriptionRef.set(ca, Option.some(pem)),
            Effect.suspend(() => Effect.forEach([...wakeups.keys()], wake, { discard: true })),
          ),
        ),
      )
      // The CA stream ended (it should not): keep the configurations following the last CA.
      return yield* Effect.never
    }),
  )
