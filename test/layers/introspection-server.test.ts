/**
 * The introspection listener over real HTTP: a caller that is not local (the "is local" decision
 * injected, since tests only use loopback) cannot change log levels or read the environment or
 * the arguments, while the read-only views still answer; a local caller keeps full access and
 * sees secret-looking variables redacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { layerWith as introspectionServerLayer } from "../../src/layers/introspection-server.js"
import { layer as loggingLayer } from "../../src/layers/logging.js"
import { layer as metricsLayer } from "../../src/layers/metrics.js"
import { REDACTED } from "../../src/services/debug/introspection-access.js"
import { resolveLogSettings } from "../../src/services/logging/options.js"
import { discoveryScopes } from "../../src/services/logging/scopes.js"
import { freePort } from "../support/ports.js"

const settings = Either.getOrThrow(
  resolveLogSettings(
    { asJson: false, caller: "", outputLevel: "", stackTraceLevel: "default:none", targets: [], vklog: 0 },
    discoveryScopes,
  ),
)

/** Serves the listener with the given "is local" rule for the duration of `use`. */
const withListener = <A>(
  isLocal: ((remote: string | undefined) => boolean) | undefined,
  use: (base: string) => Promise<A>,
) =>
  Effect.gen(function* () {
    const port = yield* Effect.promise(freePort)
    yield* Layer.launch(
      introspectionServerLayer({ host: "127.0.0.1", port }, "--ctrlz_port", isLocal ? { isLocal } : {}).pipe(
        Layer.provide(Layer.merge(loggingLayer(settings, discoveryScopes), metricsLayer("pilot-discovery"))),
      ),
    ).pipe(Effect.forkScoped)
    const base = `http://127.0.0.1:${port}`
    // Bounded wait for the listener: it is up once it answers.
    for (let i = 0; i < 200; i++) {
      const up = yield* Effect.promise(() =>
        fetch(`${base}/versionj/`).then(
          () => true,
          () => false,
        ),
      )
      if (up) break
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }
    return yield* Effect.promise(() => use(base))
  }).pipe(Effect.scoped)

describe("introspection listener", () => {
  it.live("refuses changes, the environment and the arguments to a caller that is not local", () =>
    withListener(
      () => false,
      async (base) => {
        const put = await fetch(`${base}/scopej/ads`, {
          method: "PUT",
          body: JSON.stringify({ output_level: "debug" }),
        })
        expect(put.status).toBe(403)
        expect(await put.text()).toContain("only served to localhost")
        expect((await fetch(`${base}/envj/`)).status).toBe(403)
        expect((await fetch(`${base}/argsj/`)).status).toBe(403)
        // The refused PUT changed nothing; the read-only views stay open.
        const ads = await fetch(`${base}/scopej/ads`)
        expect(ads.status).toBe(200)
        expect(await ads.json()).toMatchObject({ name: "ads", output_level: "info" })
        expect((await fetch(`${base}/versionj/`)).status).toBe(200)
        // The pages follow the same rule as their JSON views.
        expect((await fetch(`${base}/envz/`)).status).toBe(403)
        expect((await fetch(`${base}/argsz/`)).status).toBe(403)
        for (const path of ["/", "/scopez/", "/memz/", "/runtimej/", "/procz/", "/versionz/", "/metricz/", "/signalz/"])
          expect((await fetch(`${base}${path}`)).status, path).toBe(200)
      },
    ),
  )

  it.live("serves a local caller and redacts secret-looking variables", () =>
    Effect.gen(function* () {
      process.env.MESH_TEST_API_TOKEN = "do-not-show-me"
      yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env.MESH_TEST_API_TOKEN))
      yield* withListener(undefined, async (base) => {
        const put = await fetch(`${base}/scopej/ads`, {
          method: "PUT",
          body: JSON.stringify({ output_level: "debug" }),
        })
        expect(put.status).toBe(202)
        const env = (await (await fetch(`${base}/envj/`)).json()) as Array<string>
        expect(env).toContain(`MESH_TEST_API_TOKEN=${REDACTED}`)
        expect(JSON.stringify(env)).not.toContain("do-not-show-me")
        expect(env.some((line) => line.startsWith("PATH="))).toBe(true)
        const page = await (await fetch(`${base}/envz/`)).text()
        expect(page).toContain(REDACTED.replace("<", "&lt;").replace(">", "&gt;"))
        expect(page).not.toContain("do-not-show-me")
      })
    }).pipe(Effect.scoped),
  )
})
