/**
 * The `--configDir` config store: every `.yaml` / `.yml` file under the directory (recursively,
 * multi-document), watched, re-read once changes settle (`FILE_DEBOUNCE_DURATION`, 100 ms), and
 * published as snapshots and change events through the shared store core.
 *
 * - Watching uses `fs.watch` (recursive). The names it reports narrow a reload to those paths;
 *   an event without a name, or on a hidden path (ConfigMap-style `..data` swaps), rescans
 *   the whole tree, re-reading only files whose size, mtime or inode changed. If the watcher
 *   cannot start (or fails), the store polls the tree instead.
 * - Files and directories whose name starts with `.` are skipped.
 * - A bad file (YAML error, schema error, unreadable) is logged in scope `file` with file,
 *   document and field, counted in `mesh_validation_config_load_error` (once per failed load of
 *   a file) and `mesh_validation_failed` (once per rejected document), and keeps serving its last
 *   valid version (see src/services/config-store/snapshot.ts). Fixing it clears the error.
 */
import type { Dirent, Stats } from "node:fs"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Data, Duration, Effect, Layer, Ref, Schedule, type Scope, Stream } from "effect"
import { parseConfigDocuments } from "../../services/config-model/parse.js"
import { formatIssue, type ValidationIssue } from "../../services/config-model/resource.js"
import { ConfigStore, type ConfigStoreShape } from "../../services/config-store/config-store.js"
import { makeConfigStoreCore } from "../../services/config-store/memory.js"
import type { ConfigSnapshot, FileParseResult, FileUpdate } from "../../services/config-store/snapshot.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"

/** Delay between the last change seen in the directory and the re-read. */
export const FILE_DEBOUNCE_DURATION = Duration.millis(100)
/** Poll period when the directory cannot be watched. */
export const FILE_POLL_INTERVAL = Duration.seconds(1)

export const CONFIG_LOAD_ERROR_METRIC = "mesh_validation_config_load_error"
export const VALIDATION_FAILED_METRIC = "mesh_validation_failed"

export interface FileStoreOptions {
  readonly configDir: string
  /** Default `FILE_DEBOUNCE_DURATION`. */
  readonly debounce?: Duration.DurationInput
  /** Poll period when watching is unavailable; default `FILE_POLL_INTERVAL`. */
  readonly pollInterval?: Duration.DurationInput
  /** Poll instead of watching (file systems without inotify). */
  readonly polling?: boolean
}

/** What the watcher asks to re-read: everything, or a set of paths that changed. */
export interface PendingReload {
  readonly full: boolean
  readonly paths: ReadonlySet<string>
}

const NOTHING: PendingReload = { full: false, paths: new Set() }

export const isConfigFile = (file: string): boolean => /\.ya?ml$/i.test(file)

/** True when a path below `root` has a component starting with `.` (hidden, or `..data`). */
export const isHiddenBelow = (root: string, file: string): boolean =>
  path
    .relative(root, file)
    .split(path.sep)
    .some((part) => part.startsWith(".") && part !== "..")

interface CachedFile {
  readonly size: number
  readonly mtimeMs: number
  readonly ino: number
  readonly text: string
}

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined

/** Every config file under `dir` (absolute paths, sorted); a missing directory is empty. */
export const listConfigFiles = (dir: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(() => walkConfigFiles(dir))

const walkConfigFiles = async (dir: string): Promise<Array<string>> => {
  const out: Array<string> = []
  const walk = async (current: string): Promise<void> => {
    let entries: Array<Dirent>
    try {
      entries = await fsp.readdir(current, { withFileTypes: true })
    } catch {
      return
    }
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.name.startsWith(".")) return
        const full = path.join(current, entry.name)
        let isDir = entry.isDirectory()
        let isFile = entry.isFile()
        if (entry.isSymbolicLink()) {
          const target = await fsp.stat(full).catch(() => undefined)
          isDir = target?.isDirectory() ?? false
          isFile = target?.isFile() ?? false
        }
        if (isDir) await walk(full)
        else if (isFile && isConfigFile(entry.name)) out.push(full)
      }),
    )
  }
  await walk(dir)
  return out.sort()
}

const unreadable = (file: string, error: unknown): FileParseResult => ({
  resources: [],
  issues: [
    { file, documentIndex: 0, path: "", message: `cannot read file: ${String((error as Error)?.message ?? error)}` },
  ],
})

/** The directory cannot be watched (no inotify, too many watches, directory gone, ...). */
export class WatchError extends Data.TaggedError("WatchError")<{ readonly dir: string; readonly cause: unknown }> {
  override get message(): string {
    return `cannot watch ${this.dir}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/**
 * Bridges `fs.watch(dir, { recursive })` as a stream of changed paths (`undefined` = unknown).
 * A recursive watch also watches `dir` itself non-recursively: Node's recursive watcher on Linux
 * misses renames of entries over existing ones (the `..data` symlink swap of ConfigMap mounts).
 */
export const watchDirectory = (dir: string, recursive = true): Stream.Stream<string | undefined, WatchError> =>
  Stream.asyncScoped<string | undefined, WatchError>((emit) => {
    const open = (options: { readonly recursive: boolean }) =>
      Effect.acquireRelease(
        Effect.try({
          try: () => {
            const watcher = fs.watch(dir, { recursive: options.recursive, persistent: false }, (_event, filename) => {
              void emit.single(
                filename === null || filename === undefined ? undefined : path.resolve(dir, String(filename)),
              )
            })
            watcher.on("error", (cause) => void emit.fail(new WatchError({ dir, cause })))
            return watcher
          },
          catch: (cause) => new WatchError({ dir, cause }),
        }),
        (watcher) => Effect.sync(() => watcher.close()),
      )
    return recursive
      ? Effect.zipRight(open({ recursive: true }), open({ recursive: false }))
      : open({ recursive: false })
  })

/**
 * Runs `reload` after changes settle: each element of `changes` (re)starts a `debounce` timer;
 * when it fires, `reload` gets everything collected since the last reload. Clock-driven, so
 * tests drive it with TestClock.
 */
export const debounceReloads = <E, R>(
  changes: Stream.Stream<string | undefined, E>,
  debounce: Duration.DurationInput,
  reload: (pending: PendingReload) => Effect.Effect<void, never, R>,
): Effect.Effect<void, E, R> =>
  Effect.gen(function* () {
    const pending = yield* Ref.make<PendingReload>(NOTHING)
    yield* changes.pipe(
      Stream.tap((changed) =>
        Ref.update(pending, (p) =>
          changed === undefined
            ? { full: true, paths: p.paths }
            : { full: p.full, paths: new Set([...p.paths, changed]) },
        ),
      ),
      Stream.debounce(debounce),
      Stream.runForEach(() => Effect.flatMap(Ref.getAndSet(pending, NOTHING), reload)),
    )
  })

export interface FileConfigStore {
  readonly store: ConfigStoreShape
  /** Re-reads what changed (everything by default); the watcher calls this after debouncing. */
  readonly reload: (pending?: PendingReload) => Effect.Effect<ConfigSnapshot>
}

const logIssue = (issue: ValidationIssue) =>
  Effect.logError(`invalid configuration: ${formatIssue(issue)}`).pipe(
    Effect.annotateLogs({
      file: issue.file,
      document: issue.documentIndex,
      ...(issue.path !== "" ? { field: issue.path } : {}),
      ...(issue.kind !== undefined ? { kind: issue.kind } : {}),
      ...(issue.name !== undefined ? { name: `${issue.namespace ?? ""}/${issue.name}` } : {}),
    }),
  )

/** Builds the store, loads the directory once, then watches it for the life of the scope. */
export const makeFileConfigStore = (
  options: FileStoreOptions,
): Effect.Effect<FileConfigStore, never, Scope.Scope | Metrics> =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const loadErrors = metrics.counter(CONFIG_LOAD_ERROR_METRIC, "Webhook config (re)load errors")
    // Shared with the validation webhook, which labels its failures (the reference's label set);
    // the file store's own count is the unlabelled series.
    const validationFailed = metrics.counter(VALIDATION_FAILED_METRIC, "Resource validations that failed", [
      "group",
      "version",
      "resource",
      "reason",
    ])
    const root = path.resolve(options.configDir)
    const core = yield* makeConfigStoreCore
    const cache = new Map<string, CachedFile>()
    const lock = yield* Effect.makeSemaphore(1)

    /** Reads one file if it changed; `undefined` = unchanged, `null` = gone. */
    const readFile = async (file: string, force: boolean): Promise<FileUpdate | undefined | null> => {
      let stats: Stats
      try {
        stats = await fsp.stat(file)
      } catch (error) {
        if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return null
        return { file, result: unreadable(file, error) }
      }
      if (!stats.isFile()) return null
      const cached = cache.get(file)
      if (
        !force &&
        cached !== undefined &&
        cached.size === stats.size &&
        cached.mtimeMs === stats.mtimeMs &&
        cached.ino === stats.ino
      ) {
        return undefined
      }
      let text: string
      try {
        text = await fsp.readFile(file, "utf8")
      } catch (error) {
        if (errnoOf(error) === "ENOENT") return null
        cache.delete(file)
        return { file, result: unreadable(file, error) }
      }
      cache.set(file, { size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino, text })
      if (cached !== undefined && cached.text === text) return undefined
      return { file, result: parseConfigDocuments(file, text) }
    }

    const collectUpdates = (pending: PendingReload): Effect.Effect<ReadonlyArray<FileUpdate>> =>
      Effect.promise(async () => {
        const full = pending.full || [...pending.paths].some((p) => isHiddenBelow(root, p) || !p.startsWith(root))
        let candidates: Array<string>
        const gone = new Set<string>()
        if (full) {
          const present = new Set(await walkConfigFiles(root))
          for (const file of cache.keys()) if (!present.has(file)) gone.add(file)
          candidates = [...present]
        } else {
          candidates = []
          for (const changed of pending.paths) {
            const stats = await fsp.stat(changed).catch(() => undefined)
            if (stats?.isDirectory()) {
              const below = await walkConfigFiles(changed)
              const present = new Set(below)
              for (const file of cache.keys())
                if (file.startsWith(`${changed}${path.sep}`) && !present.has(file)) gone.add(file)
              candidates.push(...below)
            } else if (stats === undefined) {
              for (const file of cache.keys())
                if (file === changed || file.startsWith(`${changed}${path.sep}`)) gone.add(file)
            } else if (isConfigFile(changed)) {
              candidates.push(changed)
            }
          }
        }
        const results = await Promise.all(candidates.map((file) => readFile(file, false)))
        const updates: Array<FileUpdate> = []
        results.forEach((r, i) => {
          if (r === null) gone.add(candidates[i] as string)
          else if (r !== undefined) updates.push(r)
        })
        for (const file of gone) {
          cache.delete(file)
          updates.push({ file, result: undefined })
        }
        return updates.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
      })

    const reload = (pending: PendingReload = { full: true, paths: new Set() }) =>
      lock
        .withPermits(1)(
          Effect.gen(function* () {
            const updates = yield* collectUpdates(pending)
            if (updates.length === 0) return yield* core.store.snapshot
            const before = yield* core.store.snapshot
            const result = yield* core.apply(updates)
            for (const update of updates) {
              const issues = update.result?.issues ?? []
              if (issues.length > 0) {
                loadErrors.inc()
                validationFailed.inc(new Set(issues.map((i) => i.documentIndex)).size)
                yield* Effect.forEach(issues, logIssue, { discard: true })
                const entry = result.snapshot.files.get(update.file)
                if (entry?.stale === true) {
                  yield* Effect.logWarning(
                    `${update.file}: keeping the last valid version of this file (${entry.served.length} resources) until it is fixed`,
                  ).pipe(Effect.annotateLogs({ file: update.file }))
                }
              } else if ((before.files.get(update.file)?.issues.length ?? 0) > 0) {
                yield* Effect.logInfo(
                  update.result === undefined
                    ? `${update.file}: invalid file removed`
                    : `${update.file}: file is valid again`,
                ).pipe(Effect.annotateLogs({ file: update.file }))
              }
            }
            for (const [key, conflict] of result.snapshot.conflicts) {
              const old = before.conflicts.get(key)
              if (old !== undefined && old.winner === conflict.winner && old.ignored.length === conflict.ignored.length)
                continue
              yield* Effect.logWarning(
                `${key} is defined more than once; serving ${conflict.winner.source?.file ?? "?"} document ${conflict.winner.source?.documentIndex ?? 0}, ignoring ${conflict.ignored.map((r) => `${r.source?.file ?? "?"} document ${r.source?.documentIndex ?? 0}`).join(", ")}`,
              )
            }
            if (result.changes.length > 0) {
              yield* Effect.logDebug(
                `applied ${updates.length} file update(s): ${result.changes.length} resource change(s), version ${result.snapshot.version}`,
              )
            }
            return result.snapshot
          }),
        )
        .pipe(withScope("file"), Effect.withSpan("FileConfigStore.reload", { attributes: { full: pending.full } }))

    const debounce = options.debounce ?? FILE_DEBOUNCE_DURATION
    const poll = Stream.fromSchedule(Schedule.spaced(options.pollInterval ?? FILE_POLL_INTERVAL)).pipe(
      Stream.runForEach(() => reload()),
    )
    const watch = debounceReloads(watchDirectory(root), debounce, (pending) => Effect.asVoid(reload(pending))).pipe(
      Effect.catchAll((error) =>
        Effect.logWarning(
          `cannot watch ${root} (${error.message}); polling every ${Duration.format(options.pollInterval ?? FILE_POLL_INTERVAL)}`,
        ).pipe(withScope("file"), Effect.zipRight(reload()), Effect.zipRight(poll)),
      ),
    )

    const exists = yield* Effect.promise(() =>
      fsp.stat(root).then(
        (s) => s.isDirectory(),
        () => false,
      ),
    )
    if (!exists) {
      yield* Effect.logWarning(`config directory ${root} does not exist (yet); serving no configuration from it`).pipe(
        withScope("file"),
      )
    }
    // Watch first, then load: a change made during the first load is not missed.
    yield* Effect.forkScoped(options.polling === true || !exists ? poll : watch)
    const first = yield* reload()
    yield* core.markSynced
    yield* Effect.logInfo(`loaded ${first.size} resources from ${root} (${first.files.size} files)`).pipe(
      withScope("file"),
    )
    return { store: core.store, reload }
  })

/** The `--configDir` store as the ConfigStore. */
export const layerFile = (options: FileStoreOptions): Layer.Layer<ConfigStore, never, Metrics> =>
  Layer.scoped(
    ConfigStore,
    Effect.map(makeFileConfigStore(options), (s) => s.store),
  )
