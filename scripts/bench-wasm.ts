/**
 * Wasm fetcher benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-wasm.mjs [--size-kib 512] [--repeats 200]
 *
 * Serves one module of `--size-kib` KiB from a local HTTP server and fetches it through the
 * agent's Wasm fetcher: the first fetch downloads it; the next `--repeats` fetches of the same
 * module (policy IfNotPresent, as a pushed ECDS update of the same plugin asks) must come from the
 * disk cache with zero network calls. Reports the server's request count after each phase and the
 * latency of cached fetches.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duration, Effect, Layer } from "effect"
import { makeWasmFetcher } from "../src/layers/agent/wasm/fetcher.js"
import { layer as metricsLayer } from "../src/layers/metrics.js"
import { arg, now, percentile, round1, serverLogsToStderr } from "./bench-support.js"

const SIZE_KIB = Number(arg("size-kib", "512"))
const REPEATS = Number(arg("repeats", "200"))

/** A module the fetcher accepts: the Wasm magic and version, then padding. */
const module = Buffer.concat([
  Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]),
  Buffer.alloc(SIZE_KIB * 1024 - 8, 7),
])
const sha256 = createHash("sha256").update(module).digest("hex")

const main = Effect.gen(function* () {
  let requests = 0
  const server = createServer((_req, res) => {
    requests += 1
    res.writeHead(200, { "content-type": "application/wasm" })
    res.end(module)
  })
  yield* Effect.acquireRelease(
    Effect.async<void>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () => Effect.sync(() => server.close()),
  )
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/filter.wasm`
  const cacheDir = mkdtempSync(join(tmpdir(), "bench-wasm-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(cacheDir, { recursive: true, force: true })))
  const fetcher = yield* makeWasmFetcher({
    cacheDir,
    moduleExpiry: Duration.hours(24),
    purgeInterval: Duration.hours(1),
    requestTimeout: Duration.seconds(15),
    maxAttempts: 5,
    insecureRegistries: "",
  })
  const request = { url, sha256, pullPolicy: "IfNotPresent" as const, resourceVersion: "1" }
  const started = now()
  yield* fetcher.fetch(request)
  const firstMs = now() - started
  const afterFirst = requests
  const cached: Array<number> = []
  for (let i = 0; i < REPEATS; i++) {
    const t = now()
    yield* fetcher.fetch(request)
    cached.push(now() - t)
  }
  return {
    moduleKiB: SIZE_KIB,
    firstFetch: { ms: round1(firstMs), networkRequests: afterFirst },
    cachedFetches: {
      count: REPEATS,
      networkRequests: requests - afterFirst,
      p50Ms: round1(percentile(cached, 50)),
      p99Ms: round1(percentile(cached, 99)),
    },
  }
})

const result = await Effect.runPromise(
  main.pipe(Effect.scoped, Effect.provide(Layer.merge(metricsLayer("bench-wasm"), serverLogsToStderr))),
)
console.log(JSON.stringify(result, null, 2))
