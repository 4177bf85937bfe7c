/**
 * The file-backed MeshWatcher: `--meshConfig`, `--networksConfig` and (optionally) the shared
 * mesh config (`SHARED_MESH_CONFIG`; here a file, since no orchestrator is read) are read at
 * start, watched (their directories, so ConfigMap-style symlink swaps are seen) and re-read
 * after changes settle (100 ms). Absent files mean built-in defaults at start-up. A bad file
 * (YAML or field errors) keeps the last good configuration, logs file and field, and reports its
 * issues until it is fixed; a file deleted after start-up also keeps the last configuration.
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Duration, Effect, Either, Layer, Schedule, type Scope, Stream } from "effect"
import type { ValidationIssue } from "../../services/config-model/resource.js"
import { type MeshConfigSource, parseMeshNetworks, resolveMeshConfig } from "../../services/mesh-config/mesh-config.js"
import { MeshWatcher, type MeshWatcherControl, makeMeshWatcher } from "../../services/mesh-config/watcher.js"
import {
  debounceReloads,
  FILE_DEBOUNCE_DURATION,
  FILE_POLL_INTERVAL,
  watchDirectory,
} from "../config-store/file-store.js"
import { logIssues } from "./log-issues.js"

export interface MeshConfigFileOptions {
  /** `--meshConfig`; empty or absent file = defaults. */
  readonly meshConfigPath?: string | undefined
  /** `--networksConfig`; empty or absent file = no networks. */
  readonly networksConfigPath?: string | undefined
  /** The shared mesh config (`SHARED_MESH_CONFIG`) as a file; the standard mesh config wins over it. */
  readonly sharedMeshConfigPath?: string | undefined
  readonly debounce?: Duration.DurationInput
  readonly pollInterval?: Duration.DurationInput
  /** Poll instead of watching. */
  readonly polling?: boolean
}

type Read =
  | { readonly _tag: "absent" }
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "error"; readonly message: string }

const readText = (file: string): Effect.Effect<Read> =>
  Effect.promise(() =>
    fsp.readFile(file, "utf8").then(
      (text): Read => ({ _tag: "text", text }),
      (error: NodeJS.ErrnoException): Read =>
        error.code === "ENOENT" || error.code === "ENOTDIR"
          ? { _tag: "absent" }
          : { _tag: "error", message: error.message },
    ),
  )

export interface FileMeshWatcher {
  readonly control: MeshWatcherControl
  /** Re-reads every file now (the watcher calls it after debouncing). */
  readonly reload: Effect.Effect<void>
}

export const makeFileMeshWatcher = (
  options: MeshConfigFileOptions,
): Effect.Effect<FileMeshWatcher, never, Scope.Scope> =>
  Effect.gen(function* () {
    const control = yield* makeMeshWatcher()
    const nonEmpty = (p: string | undefined) => (p === undefined || p === "" ? undefined : path.resolve(p))
    const meshPath = nonEmpty(options.meshConfigPath)
    const networksPath = nonEmpty(options.networksConfigPath)
    const sharedPath = nonEmpty(options.sharedMeshConfigPath)
    const seen = new Set<string>()
    let meshIssues: ReadonlyArray<ValidationIssue> = []
    let networkIssues: ReadonlyArray<ValidationIssue> = []
    const lock = yield* Effect.makeSemaphore(1)

    /** A source to apply, `"keep"` to keep the last config, or undefined when absent from the start. */
    const source = (file: string | undefined) =>
      Effect.gen(function* () {
        if (file === undefined) return { source: undefined, issues: [] as ReadonlyArray<ValidationIssue> }
        const read = yield* readText(file)
        switch (read._tag) {
          case "text":
            seen.add(file)
            return { source: { file, text: read.text } as MeshConfigSource, issues: [] }
          case "error":
            return {
              source: "keep" as const,
              issues: [{ file, documentIndex: 0, path: "", message: `cannot read file: ${read.message}` }],
            }
          case "absent":
            if (seen.has(file)) {
              yield* Effect.logWarning(`${file} was removed; keeping the last configuration read from it`)
              return { source: "keep" as const, issues: [] }
            }
            return { source: undefined, issues: [] }
        }
      })

    const reloadMesh = Effect.gen(function* () {
      const shared = yield* source(sharedPath)
      const standard = yield* source(meshPath)
      if (shared.source === "keep" || standard.source === "keep") {
        meshIssues = [...shared.issues, ...standard.issues]
        yield* logIssues("mesh configuration", meshIssues)
        return
      }
      const resolved = resolveMeshConfig({ shared: shared.source, standard: standard.source })
      if (Either.isLeft(resolved)) {
        meshIssues = resolved.left
        yield* logIssues("mesh configuration", meshIssues)
        return
      }
      const wasBad = meshIssues.length > 0
      meshIssues = []
      yield* Effect.forEach(resolved.right.warnings, (w) => Effect.logWarning(w), { discard: true })
      const changed = yield* control.setConfig(resolved.right.value)
      if (changed)
        yield* Effect.logInfo(`mesh configuration updated${meshPath !== undefined ? ` from ${meshPath}` : ""}`)
      else if (wasBad) yield* Effect.logInfo("mesh configuration files are valid again")
    })

    const reloadNetworks = Effect.gen(function* () {
      const read = yield* source(networksPath)
      if (read.source === "keep") {
        networkIssues = read.issues
        yield* logIssues("mesh networks", networkIssues)
        return
      }
      if (read.source === undefined) return
      const parsed = parseMeshNetworks(read.source.file, read.source.text)
      if (Either.isLeft(parsed)) {
        networkIssues = parsed.left
        yield* logIssues("mesh networks", networkIssues)
        return
      }
      networkIssues = []
      yield* Effect.forEach(parsed.right.warnings, (w) => Effect.logWarning(w), { discard: true })
      if (yield* control.setNetworks(parsed.right.value))
        yield* Effect.logInfo(`mesh networks updated from ${read.source.file}`)
    })

    const reload = lock.withPermits(1)(
      Effect.gen(function* () {
        yield* reloadMesh
        yield* reloadNetworks
        yield* control.setIssues([...meshIssues, ...networkIssues])
      }),
    )

    const files = [meshPath, networksPath, sharedPath].filter((f): f is string => f !== undefined)
    const dirs = [...new Set(files.map((f) => path.dirname(f)))]
    const pollInterval = options.pollInterval ?? FILE_POLL_INTERVAL
    const poll = Stream.fromSchedule(Schedule.spaced(pollInterval)).pipe(Stream.runForEach(() => reload))
    const watch = debounceReloads(
      Stream.mergeAll(
        dirs.map((dir) => watchDirectory(dir, false)),
        { concurrency: "unbounded" },
      ),
      options.debounce ?? FILE_DEBOUNCE_DURATION,
      () => reload,
    ).pipe(
      Effect.catchAll((error) => {
        const message = `${error.message}; polling mesh configuration files every ${Duration.format(pollInterval)}`
        // A missing directory is the usual case for the default paths: not worth a warning.
        const missing = (error.cause as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
        return (missing ? Effect.logDebug(message) : Effect.logWarning(message)).pipe(
          Effect.zipRight(reload),
          Effect.zipRight(poll),
        )
      }),
    )
    if (files.length > 0) yield* Effect.forkScoped(options.polling === true ? poll : watch)
    yield* reload
    const config = yield* control.watcher.config
    yield* Effect.logInfo(
      `mesh configuration: ${meshPath !== undefined && seen.has(meshPath) ? meshPath : "built-in defaults"}; trust domain ${config.trustDomain}, root namespace ${config.rootNamespace}`,
    )
    return { control, reload }
  })

/** The MeshWatcher from files. */
export const layerFile = (options: MeshConfigFileOptions): Layer.Layer<MeshWatcher> =>
  Layer.scoped(
    MeshWatcher,
    Effect.map(makeFileMeshWatcher(options), (w) => w.control.watcher),
  )
