/**
 * Informers over one orchestrator API server: list (paged) then watch from the list's
 * resourceVersion, with bookmarks; a watch that ends is re-opened from the last version seen; a
 * 410 Gone (expired version) relists, and the relist publishes only what differs from the cache,
 * so a relist that finds nothing new causes no push. Errors back off exponentially (honouring
 * Retry-After) and are logged once per distinct reason, with a line when the informer recovers.
 *
 * One fiber per informer applies everything in order: the watch callbacks only queue what they
 * receive, tagged with the watch they belong to, so events of a closed watch are ignored.
 */
import { Clock, Deferred, Duration, Effect, Layer, PubSub, Queue, Random, Scope } from "effect"
import { withScope } from "../../services/logging/logging.js"
import {
  OrchestratorClient,
  type OrchestratorClientShape,
  OrchestratorError,
  type WatchEvent,
} from "../../services/orchestrator/client.js"
import {
  type InformerBatch,
  type InformerEvent,
  type InformerOptions,
  type InformerShape,
  Informers,
  type InformersShape,
} from "../../services/orchestrator/informer.js"
import { type OrchObject, objectKey } from "../../services/orchestrator/objects.js"
import { apiVersionOf, type ResourceRef } from "../../services/orchestrator/resources.js"

export interface InformerSettings {
  /** Items per list page; default 500 (client-go's pager). */
  readonly pageSize?: number
  /** First retry delay after an error; default 200 ms, doubled up to `maxBackoff`. */
  readonly minBackoff?: Duration.DurationInput
  /** Default 30 s. */
  readonly maxBackoff?: Duration.DurationInput
  /** Server-side watch timeout range in seconds; default 300–600 (spread so watches don't reconnect together). */
  readonly watchTimeoutSeconds?: readonly [number, number]
}

/** A watch that ends sooner than this with nothing delivered counts as a failure (backoff). */
const QUICK_CLOSE_MILLIS = 1000

type Inbox =
  | { readonly _tag: "event"; readonly watch: number; readonly event: WatchEvent }
  | { readonly _tag: "done"; readonly watch: number; readonly error: OrchestratorError | undefined }

const describeRef = (ref: ResourceRef, options: InformerOptions): string => {
  const parts = [`${ref.plural}.${apiVersionOf(ref)}`]
  if (options.namespace) parts.push(`namespace=${options.namespace}`)
  if (options.labelSelector) parts.push(`labels=${options.labelSelector}`)
  if (options.fieldSelector) parts.push(`fields=${options.fieldSelector}`)
  return parts.join(" ")
}

const isObject = (o: unknown): o is OrchObject =>
  typeof o === "object" &&
  o !== null &&
  typeof (o as OrchObject).metadata === "object" &&
  (o as OrchObject).metadata !== null &&
  typeof (o as OrchObject).metadata.name === "string"

/**
 * Drops `metadata.managedFields` from an object as it arrives, as the reference's informers do:
 * nothing here reads them, and they are a large part of every object (a third of a Pod's JSON)
 * that the cache would otherwise keep for as long as the object lives. Done before anything else
 * holds the object, so the fields die young. (An update sent without them keeps the server's.)
 */
const dropManagedFields = (o: unknown): void => {
  const metadata = (o as { metadata?: { managedFields?: unknown } } | null)?.metadata
  if (typeof metadata === "object" && metadata !== null && metadata.managedFields !== undefined)
    delete metadata.managedFields
}

/** The Status of an ERROR watch event. */
const statusCode = (object: unknown): number =>
  typeof object === "object" && object !== null && typeof (object as { code?: unknown }).code === "number"
    ? (object as { code: number }).code
    : 0

export const makeInformer = <T extends OrchObject>(
  client: OrchestratorClientShape,
  ref: ResourceRef,
  options: InformerOptions = {},
  settings: InformerSettings = {},
): Effect.Effect<InformerShape<T>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const what = describeRef(ref, options)
    const pageSize = settings.pageSize ?? 500
    const minBackoff = Duration.toMillis(settings.minBackoff ?? Duration.millis(200))
    const maxBackoff = Duration.toMillis(settings.maxBackoff ?? Duration.seconds(30))
    const [minTimeout, maxTimeout] = settings.watchTimeoutSeconds ?? [300, 600]
    const objects = new Map<string, T>()
    const byNamespace = new Map<string, Map<string, T>>()
    const pubsub = yield* PubSub.unbounded<InformerBatch<T>>()
    const lock = yield* Effect.makeSemaphore(1)
    const synced = yield* Deferred.make<void>()
    const inbox = yield* Queue.unbounded<Inbox>()

    const store = (o: T) => {
      const key = objectKey(o)
      objects.set(key, o)
      const ns = o.metadata.namespace ?? ""
      const map = byNamespace.get(ns) ?? new Map<string, T>()
      if (map.size === 0) byNamespace.set(ns, map)
      map.set(key, o)
    }
    const forget = (o: T) => {
      const key = objectKey(o)
      objects.delete(key)
      byNamespace.get(o.metadata.namespace ?? "")?.delete(key)
    }
    const publish = (events: ReadonlyArray<InformerEvent<T>>, relist: boolean) =>
      events.length === 0
        ? Effect.void
        : lock.withPermits(1)(
            Effect.suspend(() => {
              for (const e of events) (e.type === "deleted" ? forget : store)(e.object)
              return PubSub.publish(pubsub, { events, relist })
            }),
          )

    // --- errors and backoff -------------------------------------------------------------
    let failures = 0
    let lastReason = ""
    const failed = (stage: string, error: OrchestratorError) =>
      Effect.gen(function* () {
        failures++
        const reason = `${stage}: ${error.status === 0 ? error.reason : `${error.status} ${error.reason}`}`
        const base = Math.min(maxBackoff, minBackoff * 2 ** Math.min(failures - 1, 20))
        const jitter = yield* Random.nextRange(0.8, 1.2)
        const delay = Math.max(base * jitter, (error.retryAfterSeconds ?? 0) * 1000)
        if (reason !== lastReason) {
          lastReason = reason
          yield* Effect.logWarning(
            `${what}: ${stage} failed (${error.message}); retrying in ${Math.round(delay)} ms`,
          ).pipe(withScope("kube"))
        }
        yield* Effect.sleep(Duration.millis(delay))
      })
    const recovered = Effect.suspend(() => {
      if (failures === 0) return Effect.void
      failures = 0
      lastReason = ""
      return Effect.logInfo(`${what}: connected again`).pipe(withScope("kube"))
    })

    // --- list ----------------------------------------------------------------------------
    /**
     * Lists every page; a continue token that expired (410) starts over. The first list asks for
     * `resourceVersion=0`, as client-go's reflector does: the API server answers from its watch
     * cache in one response, where a consistent paged list reads every page after the first from
     * etcd (for 10,000 pods some 1 CPU s more of API server and etcd, on the machine mesh shares
     * with them). Later lists (after 410 Gone, errors) are consistent reads, so the cache never
     * goes back in time.
     */
    const listAll = (fromCache: boolean) =>
      Effect.gen(function* () {
        while (true) {
          const items: Array<T> = []
          let token: string | undefined
          let version = ""
          let restart = false
          do {
            const page = yield* client
              .list<T>(ref, {
                ...options,
                limit: pageSize,
                ...(token !== undefined ? { continue: token } : fromCache ? { resourceVersion: "0" } : {}),
                // Left out of the text where it allows, else trimmed as each arrives: the fields
                // die young instead of outliving a 10,000-pod answer.
                withoutManagedFields: true,
                each: dropManagedFields,
              })
              .pipe(Effect.either)
            if (page._tag === "Left") {
              if (page.left.gone && token !== undefined) {
                restart = true
                break
              }
              yield* failed("list", page.left)
              restart = true
              break
            }
            for (const item of page.right.items) items.push(item)
            version = page.right.resourceVersion
            token = page.right.continue
          } while (token !== undefined)
          if (!restart) return { items, version }
        }
      })

    let listed = false
    const relist = Effect.gen(function* () {
      const { items, version } = yield* listAll(!listed)
      listed = true
      const seen = new Set<string>()
      const events: Array<InformerEvent<T>> = []
      for (const item of items) {
        if (!isObject(item)) continue
        const key = objectKey(item)
        seen.add(key)
        const before = objects.get(key)
        if (before === undefined) events.push({ type: "added", object: item })
        else if (before.metadata.resourceVersion !== item.metadata.resourceVersion) {
          events.push({ type: "updated", object: item, previous: before })
        }
      }
      for (const [key, before] of objects) if (!seen.has(key)) events.push({ type: "deleted", object: before })
      yield* publish(events, true)
      yield* recovered
      yield* Deferred.succeed(synced, undefined)
      return version
    })

    // --- watch ---------------------------------------------------------------------------
    let watchId = 0
    let current: { close: () => void } | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => current?.close()))

    /** Converts one watch event; returns the new resourceVersion and whether a relist is needed. */
    const eventOf = (
      /** The object as the events before this one (in the same batch, not yet applied) left it. */
      known: (key: string) => T | undefined,
      event: WatchEvent,
    ): { change?: InformerEvent<T>; version?: string; gone?: boolean; bad?: string } => {
      if (event.type === "ERROR") {
        const code = statusCode(event.object)
        return code === 410 ? { gone: true } : { bad: `error event ${JSON.stringify(event.object).slice(0, 200)}` }
      }
      if (event.type === "BOOKMARK") {
        // A bookmark carries only a resourceVersion to resume from.
        const version = (event.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion
        return typeof version === "string" && version !== "" ? { version } : {}
      }
      if (!isObject(event.object)) return { bad: `${event.type} event without an object name` }
      const object = event.object as T
      dropManagedFields(object)
      const version = object.metadata.resourceVersion
      const before = known(objectKey(object))
      if (event.type === "DELETED") {
        return before === undefined
          ? { ...(version ? { version } : {}) }
          : { change: { type: "deleted", object }, ...(version ? { version } : {}) }
      }
      if (before !== undefined && before.metadata.resourceVersion === version)
        return { ...(version ? { version } : {}) }
      const change: InformerEvent<T> =
        before === undefined ? { type: "added", object } : { type: "updated", object, previous: before }
      return { change, ...(version ? { version } : {}) }
    }

    /** Watches from `version` until the watch ends; returns the version to go on from, or undefined to relist. */
    const watchOnce = (version: string) =>
      Effect.gen(function* () {
        const id = ++watchId
        const timeoutSeconds = Math.round(yield* Random.nextRange(minTimeout, maxTimeout))
        const handle = yield* client
          .watch(
            ref,
            { ...options, resourceVersion: version, allowWatchBookmarks: true, timeoutSeconds },
            (event) => Queue.unsafeOffer(inbox, { _tag: "event", watch: id, event }),
            (error) => Queue.unsafeOffer(inbox, { _tag: "done", watch: id, error }),
          )
          .pipe(Effect.either)
        if (handle._tag === "Left") {
          if (handle.left.gone) return undefined
          yield* failed("watch", handle.left)
          return version
        }
        current = handle.right
        const openedAt = yield* Clock.currentTimeMillis
        let latest = version
        let gone = false
        let delivered = 0
        while (true) {
          const first = yield* Queue.take(inbox)
          const rest = yield* Queue.takeAll(inbox)
          const changes: Array<InformerEvent<T>> = []
          // Events of one batch are applied together: later ones must see what earlier ones did
          // (an object added and deleted in one batch must end deleted).
          const overlay = new Map<string, T | null>()
          const known = (key: string) => (overlay.has(key) ? (overlay.get(key) ?? undefined) : objects.get(key))
          let done: { error: OrchestratorError | undefined } | undefined
          for (const item of [first, ...rest]) {
            if (item.watch !== id || done !== undefined) continue
            if (item._tag === "done") {
              done = { error: item.error }
              continue
            }
            const result = eventOf(known, item.event)
            if (result.gone === true) gone = true
            if (result.bad !== undefined) {
              yield* Effect.logWarning(`${what}: ignoring a malformed watch event: ${result.bad}`).pipe(
                withScope("kube"),
              )
            }
            if (result.version !== undefined) latest = result.version
            delivered++
            if (result.change !== undefined) {
              changes.push(result.change)
              overlay.set(
                objectKey(result.change.object),
                result.change.type === "deleted" ? null : result.change.object,
              )
            }
          }
          yield* publish(changes, false)
          if (changes.length > 0) yield* recovered
          if (done !== undefined) {
            current = undefined
            if (gone || done.error?.gone === true) return undefined
            if (done.error !== undefined) {
              yield* failed("watch", done.error)
            } else if (delivered === 0 && (yield* Clock.currentTimeMillis) - openedAt < QUICK_CLOSE_MILLIS) {
              // A server (or proxy) that ends every watch at once must not be asked again in a tight loop.
              yield* failed(
                "watch",
                new OrchestratorError({
                  status: 0,
                  reason: "ClosedAtOnce",
                  message: "the watch ended as soon as it opened",
                }),
              )
            }
            return latest
          }
          if (gone) {
            handle.right.close()
          }
        }
      })

    const run = Effect.gen(function* () {
      let version: string | undefined
      while (true) {
        if (version === undefined) {
          version = yield* relist
          continue
        }
        const next = yield* watchOnce(version)
        if (next === undefined) {
          yield* Effect.logInfo(`${what}: resourceVersion ${version} expired; listing again`).pipe(withScope("kube"))
        }
        version = next
      }
    })
    yield* Effect.forkScoped(run)

    const subscribe = lock.withPermits(1)(
      Effect.gen(function* () {
        const batches = yield* PubSub.subscribe(pubsub)
        return { objects: [...objects.values()], batches }
      }),
    )
    return {
      ref,
      synced: Deferred.await(synced),
      hasSynced: Deferred.isDone(synced),
      get: (namespace, name) =>
        objects.get(namespace === undefined || namespace === "" ? name : `${namespace}/${name}`),
      list: (namespace) =>
        namespace === undefined ? [...objects.values()] : [...(byNamespace.get(namespace)?.values() ?? [])],
      subscribe,
    }
  })

const cacheKey = (ref: ResourceRef, options: InformerOptions): string =>
  [
    ref.group,
    ref.version,
    ref.plural,
    options.namespace ?? "",
    options.labelSelector ?? "",
    options.fieldSelector ?? "",
  ].join("|")

/** A factory sharing one informer per resource and options; informers live as long as its scope. */
export const makeInformers = (
  client: OrchestratorClientShape,
  settings: InformerSettings = {},
): Effect.Effect<InformersShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const lock = yield* Effect.makeSemaphore(1)
    const cache = new Map<string, InformerShape<OrchObject>>()
    return {
      clusterId: client.clusterId,
      informer: <T extends OrchObject>(ref: ResourceRef, options: InformerOptions = {}) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const key = cacheKey(ref, options)
            const existing = cache.get(key)
            if (existing !== undefined) return existing as unknown as InformerShape<T>
            const made = yield* makeInformer<T>(client, ref, options, settings).pipe(Scope.extend(scope))
            cache.set(key, made as unknown as InformerShape<OrchObject>)
            return made
          }),
        ),
    }
  })

/** `Informers` over the local cluster's `OrchestratorClient`. */
export const layer: Layer.Layer<Informers, never, OrchestratorClient> = Layer.scoped(
  Informers,
  Effect.flatMap(OrchestratorClient, (client) => makeInformers(client)),
)

export const layerWith = (settings: InformerSettings): Layer.Layer<Informers, never, OrchestratorClient> =>
  Layer.scoped(
    Informers,
    Effect.flatMap(OrchestratorClient, (client) => makeInformers(client, settings)),
  )
