/**
 * The JwksResolver layer: one worker fiber per key set the push pipeline asks for (`update`).
 * A worker fetches at once (discovering the URI first from the issuer's OIDC discovery document
 * when the rule has no `jwksUri`, as the reference does on every refresh), then again every
 * `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`; a changed key set is published on `changes`, which the
 * push pipeline turns into a push.
 *
 * A failed fetch (network, status, timeout, oversized or malformed document) is logged in scope
 * `authn` and counted in `pilot_jwks_resolver_network_fetch_fail_total`; the last good key set,
 * if any, stays published. After a failure the worker retries sooner (1 s, doubling, never
 * later than the refresh interval), so a key set that failed at start-up does not stay unusable
 * for a whole interval.
 *
 * A key no longer listed keeps its worker and key set for `evictAfter` (by default one refresh
 * interval; the reference evicts unused entries after a long idle time too), then both go.
 * Every timer is an Effect sleep, so tests drive refreshes, retries, timeouts and eviction
 * with TestClock.
 */
import { Duration, Effect, Either, FiberMap, Layer, SubscriptionRef } from "effect"
import { JwksConfig } from "../../services/jwks/config.js"
import {
  checkJwks,
  MAX_DOCUMENT_BYTES,
  openIdConfigurationUrl,
  parseOpenIdConfiguration,
} from "../../services/jwks/documents.js"
import { type JwksMode, parseJwksMode } from "../../services/jwks/mode.js"
import { JwksResolver, type JwksResolverShape } from "../../services/jwks/resolver.js"
import type { JwksTarget } from "../../services/jwks/targets.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { fetchDocument, JwksFetchError } from "./fetch.js"

export const FETCH_SUCCESS_METRIC = "pilot_jwks_resolver_network_fetch_success_total"
export const FETCH_FAIL_METRIC = "pilot_jwks_resolver_network_fetch_fail_total"

const DEFAULT_REFRESH_INTERVAL = Duration.minutes(20)
const DEFAULT_FIRST_RETRY = Duration.seconds(1)

export interface JwksResolverOptions {
  /** `PILOT_JWT_ENABLE_REMOTE_JWKS`, parsed. */
  readonly mode: JwksMode
  /** `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`; zero means the default (20 minutes). */
  readonly refreshInterval: Duration.DurationInput
  /** `JWKS_RESOLVER_INSECURE_SKIP_VERIFY` */
  readonly insecureSkipVerify: boolean
  /** How long a key no longer listed is kept; default: the refresh interval. */
  readonly evictAfter?: Duration.DurationInput
  /** First retry delay after a failed fetch (doubled per failure, capped by the interval); default 1 s. */
  readonly firstRetry?: Duration.DurationInput
  /** Largest accepted document; default `MAX_DOCUMENT_BYTES` (1 MiB). */
  readonly maxDocumentBytes?: number
}

const describeTarget = (target: JwksTarget) => target.jwksUri ?? `issuer ${target.issuer} (OIDC discovery)`

export const make = (options: JwksResolverOptions) =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const fetchSuccess = metrics.counter(
      FETCH_SUCCESS_METRIC,
      "JWKS and OIDC discovery documents the JWKS resolver fetched successfully",
    )
    const fetchFail = metrics.counter(FETCH_FAIL_METRIC, "JWKS and OIDC discovery document fetches that failed")
    const given = Duration.decode(options.refreshInterval)
    const refreshInterval = Duration.toMillis(given) > 0 ? given : DEFAULT_REFRESH_INTERVAL
    const evictAfter = options.evictAfter ?? refreshInterval
    const firstRetryMillis = Duration.toMillis(options.firstRetry ?? DEFAULT_FIRST_RETRY)
    const maxBytes = options.maxDocumentBytes ?? MAX_DOCUMENT_BYTES

    const resolved = yield* SubscriptionRef.make<ReadonlyMap<string, string>>(new Map())
    // SubscriptionRef publishes on every write: writes go through this lock and skip no-ops,
    // so that `changes` emits only real changes (each one costs a push).
    const publishLock = yield* Effect.makeSemaphore(1)
    const writeResolved = (edit: (map: ReadonlyMap<string, string>) => ReadonlyMap<string, string> | undefined) =>
      publishLock.withPermits(1)(
        Effect.gen(function* () {
          const next = edit(yield* SubscriptionRef.get(resolved))
          if (next !== undefined) yield* SubscriptionRef.set(resolved, next)
          return next !== undefined
        }),
      )

    const workers = yield* FiberMap.make<string>()
    const evictions = yield* FiberMap.make<string>()
    const updateLock = yield* Effect.makeSemaphore(1)
    /** Targets of the keys with a worker: the listed ones and those in their grace period. */
    const targets = new Map<string, JwksTarget>()
    let listed: ReadonlySet<string> = new Set()

    /** One document: fetched, checked, counted. */
    const fetchChecked = <A>(url: string, target: JwksTarget, check: (body: string) => Either.Either<A, string>) =>
      fetchDocument(url, {
        timeout: Duration.millis(target.timeoutMs),
        insecureSkipVerify: options.insecureSkipVerify,
        maxBytes,
      }).pipe(
        Effect.flatMap((body) =>
          Either.match(check(body), {
            onLeft: (reason) => Effect.fail(new JwksFetchError({ url, reason })),
            onRight: (value) => Effect.succeed(value),
          }),
        ),
        Effect.tapBoth({
          onFailure: () => Effect.sync(() => fetchFail.inc()),
          onSuccess: () => Effect.sync(() => fetchSuccess.inc()),
        }),
      )

    const resolveOnce = (target: JwksTarget) =>
      Effect.gen(function* () {
        let uri = target.jwksUri
        if (uri === undefined) {
          const discovery = openIdConfigurationUrl(target.issuer)
          if (discovery === undefined)
            return yield* new JwksFetchError({ url: target.issuer, reason: "the issuer is not an http(s) URL" })
          uri = yield* fetchChecked(discovery, target, parseOpenIdConfiguration)
        }
        const jwks = yield* fetchChecked(uri, target, checkJwks)
        return { uri, jwks }
      })

    const worker = (key: string) =>
      Effect.gen(function* () {
        let failures = 0
        for (;;) {
          const target = targets.get(key)
          if (target === undefined) return
          const outcome = yield* Effect.either(resolveOnce(target))
          if (Either.isRight(outcome)) {
            const { uri, jwks } = outcome.right
            let first = false
            const changed = yield* writeResolved((map) => {
              if (map.get(key) === jwks) return undefined
              first = !map.has(key)
              return new Map(map).set(key, jwks)
            })
            const from = target.jwksUri === undefined ? `${describeTarget(target)}, at ${uri}` : uri
            if (changed) yield* Effect.logInfo(`JWKS of ${from} ${first ? "fetched" : "changed"}`)
            else if (failures > 0) yield* Effect.logInfo(`JWKS of ${from} fetched again, unchanged`)
            failures = 0
            yield* Effect.sleep(refreshInterval)
          } else {
            failures++
            const held = (yield* SubscriptionRef.get(resolved)).has(key)
            const delay = Duration.millis(
              Math.min(Duration.toMillis(refreshInterval), firstRetryMillis * 2 ** Math.min(failures - 1, 30)),
            )
            yield* Effect.logError(
              `cannot resolve the JWKS of ${describeTarget(target)}: ${outcome.left.message}; ${
                held
                  ? "the keys fetched last stay in use"
                  : `tokens of issuer ${target.issuer} are rejected until a fetch succeeds`
              }; retrying in ${Duration.format(delay)}`,
            )
            yield* Effect.sleep(delay)
          }
        }
      }).pipe(withScope("authn"))

    const evict = (key: string) =>
      updateLock.withPermits(1)(
        Effect.gen(function* () {
          if (listed.has(key)) return
          targets.delete(key)
          yield* FiberMap.remove(workers, key)
          yield* writeResolved((map) => {
            if (!map.has(key)) return undefined
            const next = new Map(map)
            next.delete(key)
            return next
          })
        }),
      )

    const update = Effect.fn("JwksResolver.update")((list: ReadonlyArray<JwksTarget>) =>
      updateLock.withPermits(1)(
        Effect.gen(function* () {
          const next = new Map<string, JwksTarget>()
          for (const target of list) {
            const seen = next.get(target.key)
            if (seen === undefined || target.timeoutMs > seen.timeoutMs) next.set(target.key, target)
          }
          for (const [key, target] of next) {
            targets.set(key, target)
            yield* FiberMap.remove(evictions, key)
            yield* FiberMap.run(workers, key, worker(key), { onlyIfMissing: true })
          }
          for (const key of listed)
            if (!next.has(key))
              yield* FiberMap.run(evictions, key, Effect.zipRight(Effect.sleep(evictAfter), evict(key)), {
                onlyIfMissing: true,
              })
          listed = new Set(next.keys())
        }),
      ),
    )

    return JwksResolver.of({
      mode: options.mode,
      update,
      current: SubscriptionRef.get(resolved),
      changes: resolved.changes,
    } satisfies JwksResolverShape)
  })

/** A resolver with explicit options (tests, embedders). */
export const layerWith = (options: JwksResolverOptions): Layer.Layer<JwksResolver, never, Metrics> =>
  Layer.scoped(JwksResolver, make(options))

/** A resolver configured by `PILOT_JWT_ENABLE_REMOTE_JWKS`, `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`, `JWKS_RESOLVER_INSECURE_SKIP_VERIFY`. */
export const layer: Layer.Layer<JwksResolver, never, JwksConfig | Metrics> = Layer.scoped(
  JwksResolver,
  Effect.gen(function* () {
    const config = yield* JwksConfig
    const parsed = parseJwksMode(config.PILOT_JWT_ENABLE_REMOTE_JWKS)
    if (parsed.error !== undefined) yield* Effect.logError(parsed.error).pipe(withScope("authn"))
    return yield* make({
      mode: parsed.mode,
      refreshInterval: config.PILOT_JWT_PUB_KEY_REFRESH_INTERVAL,
      insecureSkipVerify: config.JWKS_RESOLVER_INSECURE_SKIP_VERIFY,
    })
  }),
)
