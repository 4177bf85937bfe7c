/**
 * The bounds of a Wasm pull (issue 34, finding 2) against real loopback servers:
 * - an endless body stops at MESH_WASM_MAX_BINARY_SIZE_BYTES (the connection is closed there, not
 *   retried, nothing left in the cache directory); a Content-Length over it is refused unread;
 * - the same cap holds for an OCI layer: refused unread when its descriptor says more, cut off
 *   when a registry lies about it; a manifest over 4 MiB is refused;
 * - WASM_FETCH_TIMEOUT bounds a whole pull (a body trickling forever), on the Effect clock;
 * - URLs of other schemes are refused before any network call, and so is a redirect to one;
 * - with WASM_REFUSE_METADATA_ADDRESSES a link-local literal, an IPv4-mapped one behind a
 *   redirect, and a host name whose lookup gives a refused address are refused unconnected.
 */
import { readdir } from "node:fs/promises"
import type { ServerResponse } from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { httpDownload, httpGet } from "../../../../src/layers/agent/wasm/http-get.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { sha256Hex } from "../../../../src/services/agent/wasm/checksum.js"
import { MediaType } from "../../../../src/services/agent/wasm/oci-manifest.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counter, makeFetcher, startServer, tempDir, waitUntil, wasmModule } from "./helpers.js"

const KiB = 1024
const MiB = 1024 * KiB
const LIMIT = 1 * MiB

/** Writes chunks of `size` bytes until the client goes away; counts what was written. */
const pour = (res: ServerResponse, sent: { bytes: number; closed: boolean }, size = 64 * KiB) => {
  const chunk = Buffer.alloc(size, 7)
  res.on("close", () => {
    sent.closed = true
  })
  const write = () => {
    while (!res.destroyed) {
      sent.bytes += chunk.length
      if (!res.write(chunk)) return void res.once("drain", write)
    }
  }
  write()
}

const temporaryFiles = (cacheDir: string) =>
  Effect.promise(() => readdir(cacheDir).then((names) => names.filter((n) => n.endsWith(".tmp"))))

const noRetry = { attempts: 1, initialBackoff: Duration.millis(1), maxBackoff: Duration.millis(1) }

describe("Wasm pull limits", () => {
  it.scoped("an endless body fails at the size limit, unretried, its connection closed, no file left", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const sent = { bytes: 0, closed: false }
      const server = yield* startServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/wasm" })
        pour(res, sent)
      })
      const { fetcher, cacheDir } = yield* makeFetcher({ maxModuleBytes: LIMIT, maxAttempts: 3 })
      const url = server.url("/endless.wasm")
      const error = yield* Effect.flip(fetcher.fetch({ url, pullPolicy: "" }))
      expect(error.url).toBe(url)
      expect(error.reason).toBe(`the answer is larger than ${LIMIT} bytes (MESH_WASM_MAX_BINARY_SIZE_BYTES)`)
      yield* waitUntil(() => sent.closed)
      expect(sent.bytes).toBeLessThan(LIMIT + 8 * MiB)
      expect(server.requests()).toBe(1)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "download_failure" })).toBe(1)
      expect(yield* temporaryFiles(cacheDir)).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("a Content-Length over the limit is refused before the body is read", () =>
    Effect.gen(function* () {
      const sent = { bytes: 0, closed: false }
      const server = yield* startServer((_req, res) => {
        res.writeHead(200, { "content-length": String(10 * LIMIT) })
        pour(res, sent)
      })
      const dir = yield* tempDir("mesh-wasm-limits-")
      const options = { timeout: Duration.seconds(10), skipTlsVerify: false, maxBytes: LIMIT, maxBytesSource: "X" }
      const error = yield* Effect.flip(httpDownload(server.url("/declared.wasm"), `${dir}/f`, options, noRetry))
      expect(error.reason).toBe(`the answer is larger than ${LIMIT} bytes (X)`)
      expect(error.final).toBe(true)
      expect(yield* Effect.flip(httpGet(server.url("/declared.json"), options, noRetry))).toMatchObject({
        reason: `the answer is larger than ${LIMIT} bytes (X)`,
      })
      expect(yield* Effect.promise(() => readdir(dir))).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("WASM_FETCH_TIMEOUT ends a pull whose body trickles forever", () =>
    Effect.gen(function* () {
      const server = yield* startServer((_req, res) => {
        res.writeHead(200)
        res.write(wasmModule("slow"))
      })
      const { fetcher, cacheDir } = yield* makeFetcher({
        fetchTimeout: Duration.seconds(30),
        requestTimeout: Duration.minutes(10),
      })
      const pending = yield* Effect.fork(fetcher.fetch({ url: server.url("/slow.wasm"), pullPolicy: "" }))
      yield* waitUntil(() => server.requests() === 1)
      yield* TestClock.adjust(Duration.seconds(30))
      const error = yield* Effect.flip(Fiber.join(pending))
      expect(error.reason).toBe("not fetched within 30s (WASM_FETCH_TIMEOUT)")
      expect(yield* temporaryFiles(cacheDir)).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("other schemes are refused before any network call, also behind a redirect", () =>
    Effect.gen(function* () {
      const server = yield* startServer((_req, res) => {
        res.writeHead(302, { location: "file:///etc/passwd" })
        res.end()
      })
      const { fetcher } = yield* makeFetcher()
      for (const url of ["ftp://example.com/a.wasm", "file:///etc/passwd", "gopher://example.com/a", "data://x"]) {
        const error = yield* Effect.flip(fetcher.fetch({ url, pullPolicy: "" }))
        expect(error.reason, url).toMatch(/^unsupported module URL scheme "\w+" \(want http, https or oci\)$/)
      }
      const redirected = yield* Effect.flip(fetcher.fetch({ url: server.url("/to-file"), pullPolicy: "" }))
      expect(redirected.reason).toBe('unsupported URL scheme "file" (want http or https)')
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("WASM_REFUSE_METADATA_ADDRESSES: link-local literals and redirects to them are refused", () =>
    Effect.gen(function* () {
      const server = yield* startServer((req, res) => {
        if (req.url === "/ok.wasm") return void res.end(wasmModule("allowed"))
        res.writeHead(302, { location: "http://[::ffff:169.254.169.254]/latest/meta-data/" })
        res.end()
      })
      const { fetcher } = yield* makeFetcher({ refuseMetadataAddresses: true })
      const literal = yield* Effect.flip(fetcher.fetch({ url: "http://169.254.169.254/x.wasm", pullPolicy: "" }))
      expect(literal.reason).toBe(
        "address 169.254.169.254 is link-local (cloud metadata) (169.254.0.0/16), refused by WASM_REFUSE_METADATA_ADDRESSES",
      )
      const aws = yield* Effect.flip(fetcher.fetch({ url: "http://[fd00:ec2::254]/x.wasm", pullPolicy: "" }))
      expect(aws.reason).toContain("AWS IPv6")
      const redirect = yield* Effect.flip(fetcher.fetch({ url: server.url("/redirect"), pullPolicy: "" }))
      expect(redirect.reason).toContain("address ::ffff:a9fe:a9fe is link-local")
      // loopback stays allowed
      yield* fetcher.fetch({ url: server.url("/ok.wasm"), pullPolicy: "" })
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("the address check runs on what a host name resolves to, in the connection's lookup", () =>
    Effect.gen(function* () {
      const server = yield* startServer((_req, res) => void res.end(wasmModule("never")))
      const dir = yield* tempDir("mesh-wasm-limits-")
      const refuseLoopback = (address: string) =>
        address === "127.0.0.1" || address === "::1" ? `address ${address} is refused here` : undefined
      const options = {
        timeout: Duration.seconds(10),
        skipTlsVerify: false,
        maxBytes: LIMIT,
        maxBytesSource: "X",
        addressPolicy: refuseLoopback,
      }
      const error = yield* Effect.flip(
        httpDownload(`http://localhost:${server.port}/m.wasm`, `${dir}/f`, options, noRetry),
      )
      expect(error.reason).toMatch(/^localhost resolves to address (127\.0\.0\.1|::1) is refused here$/)
      expect(error.final).toBe(true)
      expect(server.requests()).toBe(0)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("an OCI layer over the limit: refused by its descriptor, or cut off when the registry lies", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const sent = { bytes: 0, closed: false }
      const honest = { digest: `sha256:${"a".repeat(64)}`, size: 10 * LIMIT }
      const liar = { digest: `sha256:${sha256Hex(wasmModule("claimed"))}`, size: 100 }
      const manifest = (layer: { digest: string; size: number }) =>
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MediaType.ociManifest,
          config: { mediaType: MediaType.wasmConfig, digest: `sha256:${sha256Hex(Buffer.from("{}"))}`, size: 2 },
          layers: [{ mediaType: MediaType.wasmLayer, ...layer }],
        })
      const server = yield* startServer((req, res) => {
        const path = req.url ?? ""
        if (path.endsWith("/manifests/honest")) {
          res.writeHead(200, { "content-type": MediaType.ociManifest })
          return void res.end(manifest(honest))
        }
        if (path.endsWith("/manifests/liar")) {
          res.writeHead(200, { "content-type": MediaType.ociManifest })
          return void res.end(manifest(liar))
        }
        if (path.endsWith("/manifests/huge")) {
          res.writeHead(200, { "content-type": MediaType.ociManifest })
          return pour(res, { bytes: 0, closed: false })
        }
        res.writeHead(200)
        pour(res, sent)
      })
      const host = `127.0.0.1:${server.port}`
      const { fetcher, cacheDir } = yield* makeFetcher({ maxModuleBytes: LIMIT, insecureRegistries: host })
      const described = yield* Effect.flip(fetcher.fetch({ url: `oci://${host}/f/m:honest`, pullPolicy: "" }))
      expect(described.reason).toBe(
        `layer ${honest.digest} has ${10 * LIMIT} bytes, over the limit of ${LIMIT} (MESH_WASM_MAX_BINARY_SIZE_BYTES)`,
      )
      expect(server.requests(`/v2/f/m/blobs/${honest.digest}`)).toBe(0)
      const lied = yield* Effect.flip(fetcher.fetch({ url: `oci://${host}/f/m:liar`, pullPolicy: "" }))
      expect(lied.reason).toContain(`the answer is larger than ${LIMIT} bytes (MESH_WASM_MAX_BINARY_SIZE_BYTES)`)
      yield* waitUntil(() => sent.closed)
      expect(sent.bytes).toBeLessThan(LIMIT + 8 * MiB)
      const huge = yield* Effect.flip(fetcher.fetch({ url: `oci://${host}/f/m:huge`, pullPolicy: "" }))
      expect(huge.reason).toContain("larger than 4194304 bytes (the 4 MiB manifest limit)")
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "download_failure" })).toBe(2)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "manifest_failure" })).toBe(1)
      expect(yield* temporaryFiles(cacheDir)).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
