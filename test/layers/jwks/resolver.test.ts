/**
 * The JWKS resolver against real local servers: fetching, OIDC discovery, refresh every
 * PILOT_JWT_PUB_KEY_REFRESH_INTERVAL (TestClock), failures (last good keys kept, counted,
 * logged in scope authn), size and time bounds, JWKS_RESOLVER_INSECURE_SKIP_VERIFY against a
 * self-signed HTTPS server, and eviction of key sets no rule lists any more.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, HashMap, Layer, Logger, Option, Stream, TestClock } from "effect"
import {
  FETCH_FAIL_METRIC,
  FETCH_SUCCESS_METRIC,
  type JwksResolverOptions,
  layer as jwksResolverLayer,
  layerWith,
} from "../../../src/layers/jwks/resolver.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { JwksConfig } from "../../../src/services/jwks/config.js"
import { JwksResolver } from "../../../src/services/jwks/resolver.js"
import { type JwksTarget, jwksKey, serverFetchTargets } from "../../../src/services/jwks/targets.js"
import { SCOPE_ANNOTATION } from "../../../src/services/logging/logging.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { json, jwksServer, keySet, selfSignedCert } from "./jwks-server.js"

const INTERVAL = Duration.minutes(20)

const build = (options: Partial<JwksResolverOptions> = {}) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      layerWith({ mode: "server", refreshInterval: INTERVAL, insecureSkipVerify: false, ...options }).pipe(
        Layer.provideMerge(metricsLayer("test")),
      ),
    )
    const resolver = Context.get(context, JwksResolver)
    const metrics = Context.get(context, Metrics)
    const count = (name: string) =>
      Effect.promise(async () => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0)
    return {
      resolver,
      successes: count(FETCH_SUCCESS_METRIC),
      failures: count(FETCH_FAIL_METRIC),
      keysOf: (key: string) => Effect.map(resolver.current, (map) => map.get(key)),
    }
  })

/** Lets real I/O and the fibers it wakes run (TestClock does not move). */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

/** Waits, in real time, until `condition` holds. */
const waitFor = (condition: Effect.Effect<boolean>, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      if (yield* condition) {
        // The fiber that made it true goes on to its next sleep before TestClock moves.
        yield* settle
        return
      }
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

const uriTarget = (uri: string, timeoutMs = 5000): JwksTarget => ({
  key: uri,
  issuer: "https://issuer.test",
  jwksUri: uri,
  timeoutMs,
})
const kidOf = (jwks: string | undefined) =>
  jwks === undefined ? undefined : (JSON.parse(jwks) as { keys: Array<{ kid: string }> }).keys[0]?.kid

describe("JWKS resolver", () => {
  it.scoped("fetches at once, refreshes every interval, and emits only changed key sets", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      server.answer("/jwks", json(keySet("first")))
      const { resolver, keysOf, successes } = yield* build()
      const uri = `${server.base}/jwks`
      const emitted = yield* Effect.fork(
        resolver.changes.pipe(
          Stream.map((map) => kidOf(map.get(uri))),
          Stream.take(3),
          Stream.runCollect,
        ),
      )
      yield* resolver.update([uriTarget(uri)])
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => kidOf(k) === "first"),
        "the first fetch",
      )
      expect(server.hits("/jwks")).toBe(1)

      // Not before the interval ...
      yield* TestClock.adjust(Duration.minutes(19))
      yield* settle
      expect(server.hits("/jwks")).toBe(1)
      // ... and an unchanged key set is no change.
      yield* TestClock.adjust(Duration.minutes(1))
      yield* waitFor(
        Effect.map(successes, (n) => n === 2),
        "the unchanged refresh",
      )

      server.answer("/jwks", { status: 200, body: JSON.stringify(keySet("second"), null, 2) })
      yield* TestClock.adjust(INTERVAL)
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => kidOf(k) === "second"),
        "the changed refresh",
      )
      expect(server.hits("/jwks")).toBe(3)
      expect([...(yield* Fiber.join(emitted))]).toEqual([undefined, "first", "second"])
    }),
  )

  it.scoped("discovers the JWKS URI of a rule without one from the issuer's OIDC discovery document", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      const issuer = `${server.base}/tenant/`
      server.answer("/tenant/.well-known/openid-configuration", json({ issuer, jwks_uri: `${server.base}/keys` }))
      server.answer("/keys", json(keySet("discovered")))
      const { resolver, keysOf, successes } = yield* build()
      const targets = serverFetchTargets([{ spec: { jwtRules: [{ issuer }] } }], "proxy", () => false)
      yield* resolver.update(targets)
      const key = jwksKey({ issuer })
      expect(key).toBe(`issuer:${issuer}`)
      yield* waitFor(
        Effect.map(keysOf(key), (k) => kidOf(k) === "discovered"),
        "discovered keys",
      )
      expect(yield* successes).toBe(2)

      // Discovery is read again on refresh: a moved key set is followed.
      server.answer("/tenant/.well-known/openid-configuration", json({ issuer, jwks_uri: `${server.base}/moved` }))
      server.answer("/moved", json(keySet("moved")))
      yield* TestClock.adjust(INTERVAL)
      yield* waitFor(
        Effect.map(keysOf(key), (k) => kidOf(k) === "moved"),
        "keys at the new URI",
      )
    }),
  )

  it.scoped("keeps the last good keys when a refresh fails, counts and logs it, and retries soon", () => {
    const logged: Array<{ level: string; message: string; scope: string | undefined }> = []
    const capture = Logger.make(({ logLevel, message, annotations }) => {
      logged.push({
        level: logLevel.label,
        message: String(Array.isArray(message) ? message.join(" ") : message),
        scope: Option.getOrUndefined(HashMap.get(annotations, SCOPE_ANNOTATION)) as string | undefined,
      })
    })
    return Effect.gen(function* () {
      const server = yield* jwksServer()
      server.answer("/jwks", json(keySet("good")))
      const { resolver, keysOf, failures } = yield* build()
      const uri = `${server.base}/jwks`
      yield* resolver.update([uriTarget(uri)])
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => k !== undefined),
        "the first fetch",
      )

      server.answer("/jwks", { status: 500, body: "down" })
      yield* TestClock.adjust(INTERVAL)
      yield* waitFor(
        Effect.map(failures, (n) => n === 1),
        "the failed refresh",
      )
      expect(kidOf(yield* keysOf(uri))).toBe("good")
      const error = logged.find((l) => l.level === "ERROR")
      expect(error?.scope).toBe("authn")
      expect(error?.message).toContain(uri)
      expect(error?.message).toContain("HTTP status 500")
      expect(error?.message).toContain("the keys fetched last stay in use")

      // The retry comes after 1 s, not after a whole interval; then 2 s.
      yield* TestClock.adjust(Duration.seconds(1))
      yield* waitFor(
        Effect.map(failures, (n) => n === 2),
        "the first retry",
      )
      server.answer("/jwks", json(keySet("recovered")))
      yield* TestClock.adjust(Duration.seconds(1))
      yield* settle
      expect(server.hits("/jwks")).toBe(3)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => kidOf(k) === "recovered"),
        "the second retry",
      )
    }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
  })

  it.scoped("holds no keys for a URI that never answered well: error status, malformed, oversized", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      server.answer("/not-jwks", json({ key: "nope" }))
      // Valid JWKS JSON just over 1 MiB.
      server.answer("/huge", json({ keys: [{ kty: "oct", k: "A".repeat(1024 * 1024) }] }))
      server.answer("/small", json(keySet("small")))
      const { resolver, keysOf, failures } = yield* build()
      const uris = ["/missing", "/not-jwks", "/huge", "/small"].map((p) => `${server.base}${p}`)
      yield* resolver.update(uris.map((uri) => uriTarget(uri)))
      yield* waitFor(
        Effect.map(failures, (n) => n === 3),
        "three failures",
      )
      yield* waitFor(
        Effect.map(keysOf(uris[3]!), (k) => k !== undefined),
        "the good fetch",
      )
      expect([...(yield* resolver.current).keys()]).toEqual([uris[3]])
    }),
  )

  it.scoped("accepts a document up to the size limit", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      const body = JSON.stringify({ keys: [{ kty: "oct", k: "" }] })
      const padded = JSON.stringify({ keys: [{ kty: "oct", k: "A".repeat(1000 - body.length) }] })
      expect(padded.length).toBe(1000)
      server.answer("/exact", { status: 200, body: padded })
      server.answer("/over", { status: 200, body: `${padded} ` })
      const { resolver, keysOf, failures } = yield* build({ maxDocumentBytes: 1000 })
      yield* resolver.update([uriTarget(`${server.base}/exact`), uriTarget(`${server.base}/over`)])
      yield* waitFor(
        Effect.map(failures, (n) => n === 1),
        "the oversized document to fail",
      )
      yield* waitFor(
        Effect.map(keysOf(`${server.base}/exact`), (k) => k !== undefined),
        "the exact-size fetch",
      )
    }),
  )

  it.scoped("gives up on a server that does not answer within the rule's timeout", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      server.answer("/slow", "hang")
      const { resolver, failures } = yield* build()
      yield* resolver.update([uriTarget(`${server.base}/slow`, 2000)])
      yield* waitFor(
        Effect.sync(() => server.hits("/slow") === 1),
        "the request",
      )
      yield* TestClock.adjust(Duration.millis(1999))
      yield* settle
      expect(yield* failures).toBe(0)
      yield* TestClock.adjust(Duration.millis(1))
      yield* waitFor(
        Effect.map(failures, (n) => n === 1),
        "the timeout",
      )
    }),
  )

  it.scoped("verifies the JWKS server's certificate unless JWKS_RESOLVER_INSECURE_SKIP_VERIFY", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer(selfSignedCert())
      expect(server.base.startsWith("https://")).toBe(true)
      server.answer("/jwks", json(keySet("tls")))
      const uri = `${server.base}/jwks`
      const verifying = yield* build()
      const skipping = yield* build({ insecureSkipVerify: true })
      yield* verifying.resolver.update([uriTarget(uri)])
      yield* skipping.resolver.update([uriTarget(uri)])
      yield* waitFor(
        Effect.map(skipping.keysOf(uri), (k) => kidOf(k) === "tls"),
        "the fetch without verification",
      )
      yield* waitFor(
        Effect.map(verifying.failures, (n) => n >= 1),
        "the verifying fetch to fail",
      )
      expect(yield* verifying.keysOf(uri)).toBeUndefined()
    }),
  )

  it.scoped("keeps an unlisted key set for the grace period, then drops it and stops fetching", () =>
    Effect.gen(function* () {
      const server = yield* jwksServer()
      server.answer("/jwks", json(keySet("kept")))
      const { resolver, keysOf } = yield* build({ evictAfter: Duration.minutes(5) })
      const uri = `${server.base}/jwks`
      yield* resolver.update([uriTarget(uri)])
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => k !== undefined),
        "the first fetch",
      )

      // Removed and back within the grace period: the keys never went away.
      yield* resolver.update([])
      yield* TestClock.adjust(Duration.minutes(4))
      yield* resolver.update([uriTarget(uri)])
      yield* TestClock.adjust(Duration.minutes(5))
      yield* settle
      expect(kidOf(yield* keysOf(uri))).toBe("kept")
      expect(server.hits("/jwks")).toBe(1)

      yield* resolver.update([])
      yield* TestClock.adjust(Duration.minutes(5))
      yield* waitFor(
        Effect.map(keysOf(uri), (k) => k === undefined),
        "the eviction",
      )
      yield* TestClock.adjust(INTERVAL)
      yield* settle
      expect(server.hits("/jwks")).toBe(1)
    }),
  )

  it.scoped("reads its mode and settings from the environment slice", () =>
    Effect.gen(function* () {
      const modeOf = (value: string) =>
        Effect.gen(function* () {
          const context = yield* Layer.build(
            jwksResolverLayer.pipe(
              Layer.provide(JwksConfig.layer({ PILOT_JWT_ENABLE_REMOTE_JWKS: value })),
              Layer.provide(metricsLayer("test")),
            ),
          )
          return Context.get(context, JwksResolver).mode
        })
      expect(yield* modeOf("false")).toBe("server")
      expect(yield* modeOf("true")).toBe("hybrid")
      expect(yield* modeOf("proxy")).toBe("proxy")
      expect(yield* modeOf("sometimes")).toBe("server")
    }),
  )
})
