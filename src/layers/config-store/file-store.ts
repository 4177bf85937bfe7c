/**
 * The `--configDir` config store: every `.yaml` / `.yml` file under the directory (recursively,
 * multi-document), watched, re-read once changes settle (`FILE_DEBOUNCE_DURATION`, 100 ms), and
 * published as snapshots and change events through the shared store core.
 *
 * - Watching uses `fs.watch` (recursive). The names it reports narrow a reload to those paths;
 *   an event without a name, or on a hidden path (ConfigMap-style `..data` swaps), rescans
 *   the whole tree, re-reading only files whose size, mtime or inode changed. If the watcher
 *   cannot start (or fails), the store polls the tree instead.
 * - Files and directories whose name starts with `.` are skipped. Links are followed, each real
 *   directory walked once: a link looping back is skipped with one warning (see config-tree.ts).
 *   A config-named entry that is not a regular file (a FIFO, a device such as /dev/zero behind a
 *   link, a link looping between files) is never opened for reading: one warning each, naming
 *   the path and what it is. Files are read from an open descriptor, at most the size limit.
 * - Files are parsed one after the other in slices of documents, yielding to the event loop
 *   every PARSE_SLICE_MILLIS, so /ready, xDS and the webhook keep answering during a large load.
 *   Files over the size limit are refused unread (see config-model/yaml-limits.ts).
 * - A bad file (YAML error, schema error, unreadable, too large) is logged in scope `file` with
 *   file, document and field (at most MAX_LOGGED_ISSUES_PER_FILE issues and a count of the rest,
 *   and not again while its issues stay the same), counted in `mesh_validation_config_load_error`
 *   (once per failed load of a file) and `mesh_validation_failed` (once per rejected document),
 *   and keeps serving its last valid version (see src/services/config-store/snapshot.ts).
 *   Fixing it clears the error.
 */
import type { Stats } from "node:fs"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Data, Duration, Effect, Layer, Ref, Schedule, type Scope, Stream } from "effect"
import { parseConfigSteps } from "../../services/config-model/parse.js"
import { formatIssue, type ValidationIssue } from "../../services/config-model/resource.js"
import { MAX_CONFIG_FILE_BYTES, oversizedFileProblem } from "../../services/config-model/yaml-limits.js"
import { ConfigStore, type ConfigStoreShape } from "../../services/config-store/config-store.js"
import { makeConfigStoreCore } from "../../services/config-store/memory.js"
import type { ConfigSnapshot, FileParseResult, FileUpdate } from "../../services/config-store/snapshot.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { readBoundedFile } from "./bounded-read.js"
import { isConfigFile, type SkippedEntry, type SymlinkLoop, walkConfigTree } from "./config-tree.js"

export { type ConfigTree, isConfigFile, type SkippedEntry, type SymlinkLoop, walkConfigTree } from "./config-tree.js"

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
  readonly dev: number
  /** `undefined`: not read, being over the size limit. */
  readonly text: string | undefined
}

/** Longest run of parsing before the event loop gets a turn (ms). */
export const PARSE_SLICE_MILLIS = 20

/** Issues of one file logged per load; the rest are counted in one more line. */
export const MAX_LOGGED_ISSUES_PER_FILE = 3

/**
 * A pause to call between pieces of work: it yields to the event loop (I/O, timers) once
 * `sliceMillis` of work have passed since the last yield, and costs nothing otherwise.
 */
const slicer = (sliceMillis: number): (() => Promise<void>) => {
  let since = performance.now()
  return async () => {
    if (performance.now() - since < sliceMillis) return
    await new Promise<void>((resolve) => setImmediate(resolve))
    since = performance.now()
  }
}

const errnoOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error ? String((error as { code: unknown }).code) : undefined

/** Every config file under `dir` (absolute paths, sorted); a missing directory is empty. */
export const listConfigFiles = (dir: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(
    Effect.promise(() => walkConfigTree(dir)),
    (tree) => tree.files,
  )

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

    /**
     * A file read and needing a parse, an update already known (unreadable, too large), or a path
     * that is no longer a file to read (a FIFO or a device put in its place: gone, and why).
     */
    type Read =
      | { readonly file: string; readonly text: string }
      | { readonly file: string; readonly update: FileUpdate }
      | { readonly file: string; readonly skipped: string }

    const oversizedUpdate = (file: string, bytes: number): Read => ({
      file,
      update: {
        file,
        result: {
          resources: [],
          issues: [{ file, documentIndex: 0, path: "", message: oversizedFileProblem(bytes) ?? "" }],
        },
      },
    })

    /** Reads one file if it changed; `undefined` = unchanged, `null` = gone. */
    const readFile = async (file: string): Promise<Read | undefined | null> => {
      let stats: Stats
      try {
        stats = await fsp.stat(file)
      } catch (error) {
        if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return null
        if (errnoOf(error) === "ELOOP") return { file, skipped: "symbolic link loop (too many levels of links)" }
        return { file, update: { file, result: unreadable(file, error) } }
      }
      if (stats.isDirectory()) return null
      const cached = cache.get(file)
      if (
        stats.isFile() &&
        cached !== undefined &&
        cached.size === stats.size &&
        cached.mtimeMs === stats.mtimeMs &&
        cached.ino === stats.ino &&
        cached.dev === stats.dev
      ) {
        return undefined
      }
      // Too large to read at all: refused from its size, and remembered so that it is not
      // reported again until it changes.
      if (stats.isFile() && oversizedFileProblem(stats.size) !== undefined) {
        cache.set(file, { size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino, dev: stats.dev, text: undefined })
        return oversizedUpdate(file, stats.size)
      }
      // Type and size are taken again from the open file: the path may be something else by now.
      const read = await readBoundedFile(file, MAX_CONFIG_FILE_BYTES)
      switch (read._tag) {
        case "NotRegular":
          cache.delete(file)
          return { file, skipped: read.kind }
        case "Failed":
          if (read.code === "ENOENT") return null
          cache.delete(file)
          if (read.code === "ELOOP") return { file, skipped: "symbolic link loop (too many levels of links)" }
          return { file, update: { file, result: unreadable(file, read.message) } }
        case "TooLarge":
          cache.delete(file)
          return oversizedUpdate(file, read.bytes)
        case "Text": {
          const opened = read.stats ?? stats
          const identity = { size: opened.size, mtimeMs: opened.mtimeMs, ino: opened.ino, dev: opened.dev }
          cache.set(file, { ...identity, text: read.text })
          if (cached !== undefined && cached.text === read.text) return undefined
          return { file, text: read.text }
        }
      }
    }

    /**
     * The cached path of the file `changed` is another path of (a link to it, reached by the walk
     * under another name), or `changed` itself: a file is read under one path only.
     */
    const canonicalPath = async (changed: string): Promise<string> => {
      if (cache.has(changed)) return changed
      const stats = await fsp.stat(changed).catch(() => undefined)
      if (stats === undefined) return changed
      for (const [file, cached] of cache) {
        if (cached.ino !== stats.ino || cached.dev !== stats.dev) continue
        // Still that file (an inode is reused once its file is deleted)?
        const current = await fsp.stat(file).catch(() => undefined)
        if (current?.ino === stats.ino && current.dev === stats.dev) return file
      }
      return changed
    }

    /** What a reload found: updates, and the directory loops and entries it did not read. */
    interface Collected {
      readonly updates: ReadonlyArray<FileUpdate>
      readonly loops: ReadonlyArray<SymlinkLoop>
      readonly skipped: ReadonlyArray<SkippedEntry>
      /** Whether the whole tree was walked (so `skipped` is complete). */
      readonly full: boolean
    }

    const collectUpdates = (pending: PendingReload): Effect.Effect<Collected> =>
      Effect.promise(async () => {
        let full = pending.full || [...pending.paths].some((p) => isHiddenBelow(root, p) || !p.startsWith(root))
        const candidates = new Set<string>()
        const gone = new Set<string>()
        if (!full) {
          for (const changed of pending.paths) {
            const stats = await fsp.stat(changed).catch(() => undefined)
            if (stats?.isDirectory()) {
              // A directory (or a link to one) appeared or changed: only a walk from the root
              // knows which real directories are already walked and which links loop.
              full = true
              break
            }
            if (stats === undefined) {
              for (const file of cache.keys())
                if (file === changed || file.startsWith(`${changed}${path.sep}`)) gone.add(file)
            } else if (isConfigFile(changed)) {
              candidates.add(await canonicalPath(changed))
            }
          }
        }
        let loops: ReadonlyArray<SymlinkLoop> = []
        const skipped: Array<SkippedEntry> = []
        if (full) {
          candidates.clear()
          gone.clear()
          const tree = await walkConfigTree(root)
          loops = tree.loops
          skipped.push(...tree.skipped)
          for (const file of tree.files) candidates.add(file)
          for (const file of cache.keys()) if (!candidates.has(file)) gone.add(file)
        }
        const ordered = [...candidates].sort()
        const reads = await Promise.all(ordered.map(readFile))
        const updates: Array<FileUpdate> = []
        // Parsing is the slow part: one file after the other, in slices, giving the event loop
        // back between slices so that /ready, xDS and the webhook keep answering.
        const pause = slicer(PARSE_SLICE_MILLIS)
        for (const [i, read] of reads.entries()) {
          if (read === null) gone.add(ordered[i] as string)
          else if (read !== undefined && "skipped" in read) {
            gone.add(read.file)
            skipped.push({ path: read.file, reason: read.skipped })
          } else if (read !== undefined && "update" in read) updates.push(read.update)
          else if (read !== undefined) {
            const steps = parseConfigSteps(read.file, read.text)
            for (let step = steps.next(); ; step = steps.next()) {
              if (step.done === true) {
                updates.push({ file: read.file, result: step.value })
                break
              }
              await pause()
            }
          }
          await pause()
        }
        for (const file of gone) {
          cache.delete(file)
          updates.push({ file, result: undefined })
        }
        return {
          updates: updates.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)),
          loops,
          skipped,
          full,
        }
      })

    /** Per file, the issues last logged: the same problems are not logged again on every reload. */
    const loggedIssues = new Map<string, string>()
    const warnedLoops = new Set<string>()
    /** Entries not read (`path\0reason`) already logged: each is logged once while it stays. */
    const warnedSkipped = new Set<string>()

    const logFileIssues = (file: string, issues: ReadonlyArray<ValidationIssue>) =>
      Effect.gen(function* () {
        const signature = issues.map(formatIssue).join("\n")
        if (loggedIssues.get(file) === signature) return false
        loggedIssues.set(file, signature)
        yield* Effect.forEach(issues.slice(0, MAX_LOGGED_ISSUES_PER_FILE), logIssue, { discard: true })
        const more = issues.length - MAX_LOGGED_ISSUES_PER_FILE
        if (more > 0) {
          yield* Effect.logError(
            `invalid configuration: ... and ${more} more issue${more === 1 ? "" : "s"} in this file (meshctl validate -f ${file} lists them all)`,
          ).pipe(Effect.annotateLogs({ file }))
        }
        return true
      })

    const reload = (pending: PendingReload = { full: true, paths: new Set() }) =>
      lock
        .withPermits(1)(
          Effect.gen(function* () {
            const { updates, loops, skipped, full } = yield* collectUpdates(pending)
            const current = new Set(skipped.map((entry) => `${entry.path}\u0000${entry.reason}`))
            for (const entry of skipped) {
              const key = `${entry.path}\u0000${entry.reason}`
              if (warnedSkipped.has(key)) continue
              warnedSkipped.add(key)
              yield* Effect.logWarning(`${entry.path}: not read: ${entry.reason}; only regular files are read`).pipe(
                Effect.annotateLogs({ file: entry.path }),
              )
            }
            // A full walk sees every such entry: one that went away is logged again if it comes back.
            if (full) for (const key of warnedSkipped) if (!current.has(key)) warnedSkipped.delete(key)
            for (const loop of loops) {
              if (warnedLoops.has(loop.link)) continue
              warnedLoops.add(loop.link)
              yield* Effect.logWarning(
                `${loop.link}: symbolic link loops back to ${loop.target}; not followed (the files there are read once, under their own path)`,
              ).pipe(Effect.annotateLogs({ file: loop.link }))
            }
            if (updates.length === 0) return yield* core.store.snapshot
            const before = yield* core.store.snapshot
            const result = yield* core.apply(updates)
            for (const update of updates) {
              const issues = update.result?.issues ?? []
              if (issues.length === 0) loggedIssues.delete(update.file)
              if (issues.length > 0) {
                loadErrors.inc()
                validationFailed.inc(new Set(issues.map((i) => i.documentIndex)).size)
                const entry = result.snapshot.files.get(update.file)
                if ((yield* logFileIssues(update.file, issues)) && entry?.stale === true) {
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
            let conflicts = 0
            for (const [key, conflict] of result.snapshot.conflicts) {
              const old = before.conflicts.get(key)
              if (old !== undefined && old.winner === conflict.winner && old.ignored.length === conflict.ignored.length)
                continue
              // A file copied next to itself duplicates every resource: a few lines and a count.
              if (++conflicts > MAX_LOGGED_ISSUES_PER_FILE) continue
              yield* Effect.logWarning(
                `${key} is defined more than once; serving ${conflict.winner.source?.file ?? "?"} document ${conflict.winner.source?.documentIndex ?? 0}, ignoring ${conflict.ignored.map((r) => `${r.source?.file ?? "?"} document ${r.source?.documentIndex ?? 0}`).join(", ")}`,
              )
            }
            if (conflicts > MAX_LOGGED_ISSUES_PER_FILE) {
              const more = conflicts - MAX_LOGGED_ISSUES_PER_FILE
              yield* Effect.logWarning(
                `... and ${more} more resource${more === 1 ? " is" : "s are"} defined more than once; the first definition (by file path, then document) is served`,
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
