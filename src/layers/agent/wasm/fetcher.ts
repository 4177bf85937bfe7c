/**
 * The agent's WasmFetcher: turns a module URL into a file of the on-disk cache.
 *
 * A request is looked up in the cache index first (`wasm_cache_lookup_count{hit}`); a miss pulls
 * the module (http(s) download, or OCI registry pull) into a temporary file of the cache
 * directory — streamed, never held in memory, at most MESH_WASM_MAX_BINARY_SIZE_BYTES, the whole
 * pull within WASM_FETCH_TIMEOUT — checks the pinned checksum, validates the Wasm header, renames
 * the file into its place and records it (`wasm_remote_fetch_count{result}`,
 * `wasm_cache_entries`). A URL of another scheme is refused before any network call; with
 * WASM_REFUSE_METADATA_ADDRESSES every connection to a link-local or metadata address is.
 * Concurrent misses of the same request share one pull, which runs in the layer's scope so that
 * one caller giving up does not cancel it for the others. Every WASM_PURGE_INTERVAL the modules
 * unused for longer than WASM_MODULE_EXPIRY are deleted. At start the files a previous run left
 * are re-indexed (see `restore-cache.ts`) and its unfinished downloads removed.
 */
import { createHash } from "node:crypto"
import { resolve } from "node:path"
import { Clock, Deferred, Duration, Effect, Either, type Exit, FiberId, Layer, Schedule } from "effect"
import { refuseMetadataAddresses } from "../../../services/agent/wasm/address-policy.js"
import { type CacheKey, moduleFilePath, WasmCacheIndex } from "../../../services/agent/wasm/cache-index.js"
import { expectedChecksum, isWasmBinary } from "../../../services/agent/wasm/checksum.js"
import { WasmFetchError, WasmFetcher, type WasmModuleRequest } from "../../../services/agent/wasm/contract.js"
import { type InsecureHosts, isInsecureHost, parseInsecureHosts } from "../../../services/agent/wasm/insecure-hosts.js"
import { WasmFetchResult, wasmFetchMetrics } from "../../../services/agent/wasm/metrics.js"
import {
  type HttpModuleSource,
  moduleName,
  type OciModuleSource,
  parseModuleUrl,
  reusesAcrossVersions,
  sourceHost,
  type WasmModuleSource,
} from "../../../services/agent/wasm/module-url.js"
import { credentialsFor, parseDockerConfig } from "../../../services/agent/wasm/registry-auth.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics } from "../../../services/metrics/metrics.js"
import { describeStatus, httpDownload, type RetryPolicy } from "./http-get.js"
import {
  installModuleFile,
  readHead,
  removeModuleFile,
  removeStaleTemporaryFiles,
  temporaryFile,
} from "./module-files.js"
import { resolveImage } from "./registry-client.js"
import { restoreCacheIndex } from "./restore-cache.js"
import { unboxDownload } from "./unbox-file.js"

/** Under the agent's working directory, beside its other state (the reference's `var/lib/istio/data`). */
export const DEFAULT_WASM_CACHE_DIR = "./var/lib/mesh/data/wasm"

export interface WasmFetcherSettings {
  readonly cacheDir: string
  /** WASM_MODULE_EXPIRY */
  readonly moduleExpiry: Duration.Duration
  /** WASM_PURGE_INTERVAL */
  readonly purgeInterval: Duration.Duration
  /** WASM_HTTP_REQUEST_TIMEOUT: each request of a pull. */
  readonly requestTimeout: Duration.Duration
  /** WASM_HTTP_REQUEST_MAX_RETRIES: attempts per request. */
  readonly maxAttempts: number
  /** WASM_INSECURE_REGISTRIES as written. */
  readonly insecureRegistries: string
  /** MESH_WASM_MAX_BINARY_SIZE_BYTES: the largest download, layer or unpacked module. */
  readonly maxModuleBytes?: number
  /** WASM_FETCH_TIMEOUT: a whole pull, retries included. */
  readonly fetchTimeout?: Duration.Duration
  /** WASM_REFUSE_METADATA_ADDRESSES. */
  readonly refuseMetadataAddresses?: boolean
  /** Backoff between attempts (default 500ms doubling, at most 10s). */
  readonly backoff?: { readonly initial: Duration.Duration; readonly max: Duration.Duration }
}

/** A failed pull, with the `result` label it counts under. */
class PullFailure {
  constructor(
    readonly result: WasmFetchResult,
    readonly reason: string,
  ) {}
}

const sha256OfText = (text: string) => createHash("sha256").update(text).digest("hex")

/** The defaults of the agent's env table, for callers that set only some of the settings. */
export const DEFAULT_MAX_MODULE_BYTES = 64 * 1024 * 1024
export const DEFAULT_FETCH_TIMEOUT = Duration.seconds(30)

export const makeWasmFetcher = (settings: WasmFetcherSettings) =>
  Effect.gen(function* () {
    const metrics = wasmFetchMetrics(yield* Metrics)
    const scope = yield* Effect.scope
    const cacheDir = resolve(settings.cacheDir)
    const insecure: InsecureHosts = parseInsecureHosts(settings.insecureRegistries)
    const retry: RetryPolicy = {
      attempts: Math.max(1, settings.maxAttempts),
      initialBackoff: settings.backoff?.initial ?? Duration.millis(500),
      maxBackoff: settings.backoff?.max ?? Duration.seconds(10),
    }
    const maxModuleBytes = settings.maxModuleBytes ?? DEFAULT_MAX_MODULE_BYTES
    const fetchTimeout = settings.fetchTimeout ?? DEFAULT_FETCH_TIMEOUT
    const addressPolicy = settings.refuseMetadataAddresses ? refuseMetadataAddresses() : undefined
    const requestOptions = (skipTlsVerify: boolean) => ({
      timeout: settings.requestTimeout,
      skipTlsVerify,
      ...(addressPolicy !== undefined ? { addressPolicy } : {}),
    })
    const limits = { cacheDir, maxBytes: maxModuleBytes }
    const index = new WasmCacheIndex()
    const inflight = new Map<string, Deferred.Deferred<string, WasmFetchError>>()
    yield* restoreCacheIndex(cacheDir, index).pipe(withScope("wasm"))
    yield* removeStaleTemporaryFiles(cacheDir).pipe(
      Effect.flatMap((stale) =>
        stale > 0 ? Effect.logInfo(`removed ${stale} unfinished Wasm download(s) from ${cacheDir}`) : Effect.void,
      ),
      Effect.catchAll((e) => Effect.logWarning(`cannot clean Wasm cache directory ${cacheDir}: ${e.reason}`)),
      withScope("wasm"),
    )
    metrics.cacheEntries.set(index.size)

    const fromHttp = (source: HttpModuleSource, skipTlsVerify: boolean) =>
      Effect.gen(function* () {
        const path = yield* temporaryFile(cacheDir).pipe(
          Effect.mapError((e) => new PullFailure(WasmFetchResult.fetchFailure, e.reason)),
        )
        const answer = yield* httpDownload(
          source.url,
          path,
          {
            ...requestOptions(skipTlsVerify),
            maxBytes: maxModuleBytes,
            maxBytesSource: "MESH_WASM_MAX_BINARY_SIZE_BYTES",
          },
          retry,
        ).pipe(Effect.mapError((e) => new PullFailure(WasmFetchResult.downloadFailure, e.reason)))
        if (answer.file === undefined)
          return yield* Effect.fail(new PullFailure(WasmFetchResult.downloadFailure, describeStatus(answer)))
        const module = yield* unboxDownload(answer.file, limits).pipe(
          Effect.mapError((e) => new PullFailure(WasmFetchResult.fetchFailure, e.reason)),
        )
        return { checksum: module.sha256, module: Effect.succeed(module) }
      })

    const fromRegistry = (source: OciModuleSource, request: WasmModuleRequest, plainHttp: boolean) =>
      Effect.gen(function* () {
        let credentials: ReturnType<typeof credentialsFor>
        if (request.pullSecret !== undefined && request.pullSecret.trim() !== "") {
          const config = parseDockerConfig(request.pullSecret)
          if (Either.isLeft(config))
            return yield* Effect.fail(new PullFailure(WasmFetchResult.manifestFailure, config.left))
          credentials = credentialsFor(config.right, source.registry)
        }
        const image = yield* resolveImage(source, {
          insecure: plainHttp,
          credentials,
          request: requestOptions(plainHttp),
          retry,
          maxModuleBytes,
          cacheDir,
        }).pipe(Effect.mapError((e) => new PullFailure(WasmFetchResult.manifestFailure, e.reason)))
        const module = image.download.pipe(
          Effect.mapError(
            (e) =>
              new PullFailure(
                e.step === "module" ? WasmFetchResult.fetchFailure : WasmFetchResult.downloadFailure,
                e.reason,
              ),
          ),
        )
        return { checksum: image.digest, module }
      })

    /** Pulls, verifies, stores and records a module; returns its file. */
    const pull = (request: WasmModuleRequest, source: WasmModuleSource, key: CacheKey) =>
      Effect.gen(function* () {
        const skipVerification = isInsecureHost(insecure, sourceHost(source))
        const fetched =
          source.kind === "http"
            ? yield* fromHttp(source, skipVerification)
            : yield* fromRegistry(source, request, skipVerification)
        if (key.checksum !== undefined && key.checksum !== fetched.checksum)
          return yield* Effect.fail(
            new PullFailure(
              WasmFetchResult.checksumMismatch,
              `module has checksum ${fetched.checksum}, which does not match ${key.checksum}`,
            ),
          )
        const module = yield* fetched.module
        const head = yield* readHead(module.path, 8).pipe(
          Effect.mapError((e) => new PullFailure(WasmFetchResult.fetchFailure, e.reason)),
        )
        if (!isWasmBinary(head))
          return yield* Effect.fail(
            new PullFailure(WasmFetchResult.fetchFailure, "the fetched bytes are not a Wasm module"),
          )
        const path = moduleFilePath(cacheDir, key.moduleName, fetched.checksum)
        yield* installModuleFile(module.path, path).pipe(
          Effect.mapError((e) => new PullFailure(WasmFetchResult.fetchFailure, `writing ${path}: ${e.reason}`)),
        )
        const entry = index.record(key, fetched.checksum, path, yield* Clock.currentTimeMillis)
        metrics.remoteFetches.inc({ result: WasmFetchResult.success })
        metrics.cacheEntries.set(index.size)
        yield* Effect.logInfo(`fetched Wasm module ${request.url} (sha256 ${fetched.checksum}) to ${entry.path}`)
        return entry.path
      }).pipe(
        // the temporary files of the pull go with it, whatever its outcome
        Effect.scoped,
        Effect.timeoutFail({
          duration: fetchTimeout,
          onTimeout: () =>
            new PullFailure(
              WasmFetchResult.downloadFailure,
              `not fetched within ${Duration.format(fetchTimeout)} (WASM_FETCH_TIMEOUT)`,
            ),
        }),
        Effect.catchIf(
          (e): e is PullFailure => e instanceof PullFailure,
          (e) => {
            metrics.remoteFetches.inc({ result: e.result })
            return Effect.fail(new WasmFetchError({ url: request.url, reason: e.reason }))
          },
        ),
      )

    /** Runs `work` once for concurrent callers with the same key; it lives in the layer's scope. */
    const shared = (dedupKey: string, work: Effect.Effect<string, WasmFetchError>) =>
      Effect.suspend(() => {
        const running = inflight.get(dedupKey)
        if (running !== undefined) return Deferred.await(running)
        const done = Deferred.unsafeMake<string, WasmFetchError>(FiberId.none)
        inflight.set(dedupKey, done)
        const settle = (exit: Exit.Exit<string, WasmFetchError>) =>
          Effect.suspend(() => {
            inflight.delete(dedupKey)
            return Deferred.done(done, exit)
          })
        return work.pipe(Effect.onExit(settle), Effect.forkIn(scope), Effect.zipRight(Deferred.await(done)))
      })

    const fetchModule = Effect.fn("WasmFetcher.fetch")(
      function* (request: WasmModuleRequest) {
        const source = parseModuleUrl(request.url)
        if (Either.isLeft(source)) return yield* new WasmFetchError({ url: request.url, reason: source.left })
        const checksum = expectedChecksum(request.sha256, source.right)
        if (Either.isLeft(checksum)) return yield* new WasmFetchError({ url: request.url, reason: checksum.left })
        const key: CacheKey = {
          url: request.url.trim(),
          moduleName: moduleName(source.right),
          checksum: checksum.right,
          resourceName: request.resourceName ?? "",
          resourceVersion: request.resourceVersion ?? "",
          reuseAcrossVersions: reusesAcrossVersions(request.pullPolicy, source.right),
        }
        const cached = index.lookup(key, yield* Clock.currentTimeMillis)
        metrics.cacheLookups.inc({ hit: String(cached !== undefined) })
        if (cached !== undefined) return cached.path
        const dedupKey = JSON.stringify([
          key.url,
          key.checksum ?? "",
          key.resourceName,
          key.reuseAcrossVersions ? "" : key.resourceVersion,
          sha256OfText(request.pullSecret ?? ""),
        ])
        return yield* shared(dedupKey, pull(request, source.right, key))
      },
      Effect.tapError((e) => Effect.logWarning(`cannot fetch Wasm module ${e.url}: ${e.reason}`)),
      withScope("wasm"),
    )

    const purgeExpired = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      for (const module of index.expired(now, Duration.toMillis(settings.moduleExpiry))) {
        index.remove(module)
        yield* removeModuleFile(module.path).pipe(
          Effect.catchAll((e) => Effect.logWarning(`cannot remove expired Wasm module ${module.path}: ${e.reason}`)),
        )
        yield* Effect.logDebug(
          `purged expired Wasm module ${module.moduleName ?? module.path} (sha256 ${module.checksum})`,
        )
      }
      metrics.cacheEntries.set(index.size)
    }).pipe(withScope("wasm"))

    yield* purgeExpired.pipe(Effect.schedule(Schedule.spaced(settings.purgeInterval)), Effect.forkScoped)

    return WasmFetcher.of({ fetch: fetchModule })
  })

export const layer = (settings: WasmFetcherSettings): Layer.Layer<WasmFetcher, never, Metrics> =>
  Layer.scoped(WasmFetcher, makeWasmFetcher(settings))
