/** Test support for the Wasm fetcher: modules, a counting HTTP server, a fetcher on a temp cache. */
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Duration, Effect, Layer } from "effect"
import { makeWasmFetcher, type WasmFetcherSettings } from "../../../../src/layers/agent/wasm/fetcher.js"
import { WasmFetcher } from "../../../../src/services/agent/wasm/contract.js"
import type { Metrics } from "../../../../src/services/metrics/metrics.js"
import { tarOf } from "../../../support/tar.js"

export { tarOf }

/** A valid Wasm binary (header + one custom section) whose bytes depend on `label`. */
export const wasmModule = (label: string) => {
  const name = Buffer.from("mesh-test")
  const payload = Buffer.from(label)
  const body = Buffer.concat([Buffer.from([name.length]), name, payload])
  if (body.length > 127) throw new Error("label too long for a one-byte section size")
  return Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x00, body.length]), body])
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>

export interface TestServer {
  readonly port: number
  readonly url: (path: string) => string
  /** Requests received so far, by path (query excluded). */
  readonly requests: (path?: string) => number
}

/** A loopback HTTP server for the test's scope; it counts every request. */
export const startServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.async<{ server: ReturnType<typeof createServer>; counts: Map<string, number> }>((resume) => {
      const counts = new Map<string, number>()
      const server = createServer((req, res) => {
        const path = new URL(req.url ?? "/", "http://x").pathname
        counts.set(path, (counts.get(path) ?? 0) + 1)
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          Promise.resolve(handler(req, res, Buffer.concat(chunks))).catch((e) => {
            res.statusCode = 500
            res.end(String(e))
          })
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, counts })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      }),
  ).pipe(
    Effect.map(({ server, counts }): TestServer => {
      const port = (server.address() as AddressInfo).port
      return {
        port,
        url: (path) => `http://127.0.0.1:${port}${path}`,
        requests: (path) =>
          path === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(path) ?? 0),
      }
    }),
  )

export const tempDir = (prefix: string) =>
  Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), prefix))),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
  )

export const defaultSettings = (cacheDir: string): WasmFetcherSettings => ({
  cacheDir,
  moduleExpiry: Duration.hours(24),
  purgeInterval: Duration.hours(1),
  requestTimeout: Duration.seconds(15),
  maxAttempts: 5,
  insecureRegistries: "",
  backoff: { initial: Duration.millis(1), max: Duration.millis(5) },
})

/** A fetcher on a fresh cache directory, living as long as the test's scope. */
export const makeFetcher = (overrides: Partial<WasmFetcherSettings> = {}) =>
  Effect.gen(function* () {
    const cacheDir = yield* tempDir("mesh-wasm-cache-")
    const context = yield* Layer.build(
      Layer.scoped(WasmFetcher, makeWasmFetcher({ ...defaultSettings(cacheDir), ...overrides })),
    )
    return { cacheDir, fetcher: Context.get(context, WasmFetcher) }
  })

/** Waits (without sleeping) until `condition` holds, letting I/O callbacks run in between. */
export const waitUntil = (condition: () => boolean | Promise<boolean>) =>
  Effect.promise(async () => {
    while (!(await condition())) await new Promise<void>((r) => setImmediate(r))
  })

export const counter = (metrics: Context.Tag.Service<Metrics>, name: string, labels: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const metric = metrics.registry.getSingleMetric(name)
    if (metric === undefined) return 0
    const data = await metric.get()
    return data.values
      .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
      .reduce((sum, v) => sum + v.value, 0)
  })
