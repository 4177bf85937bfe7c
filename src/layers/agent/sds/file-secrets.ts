/**
 * The file-mounted secrets the agent's SDS serves (`file-cert:<cert>~<key>`, `file-root:<ca>`,
 * issue 44): read when a stream first asks for a name, checked (services/agent/sds/file-secret.ts),
 * followed while some stream still asks, and each new version handed to the streams asking.
 *
 * Following, as the reference does it and a little more: the directories holding the files are
 * watched (the orchestrator swaps a `..data` symlink there; an editor renames a new file over
 * the old), a change to a named file or a `..` entry is read after `FILE_DEBOUNCE_DURATION`, and every
 * `MESH_SDS_FILE_POLL_INTERVAL` the files are stat'ed in case a watch missed it (some file
 * systems report nothing; a directory that did not exist yet cannot be watched). A name whose
 * files cannot be served — missing, unreadable, over `MESH_SDS_FILE_MAX_BYTES`, not a
 * certificate, a key that is not the certificate's — gets no response (the proxy waits for it,
 * as with the reference) and one log line per distinct problem; the version served before, if
 * any, stays served; the files are read again when they change.
 *
 * Bounded by what streams ask for: only names some stream holds are followed, and at most
 * `MESH_SDS_MAX_FILES` distinct files are followed at once (a name that would need more is
 * refused and logged; asking again later retries it).
 *
 * Which files: any path the proxy names, as in the reference. The names come from the proxy's
 * configuration, so whoever may write a Gateway or Sidecar for this workload can make the agent
 * read any file the agent can read and hand it to the proxy. Only material that parses as a
 * certificate (and a key matching it) is served, so arbitrary files (tokens, configuration) are
 * never passed on; but the agent's own key files are certificates too. The agent therefore
 * should not be able to read what its proxy must not serve (the pod's own mounts are the scope).
 */
import { type FSWatcher, watch } from "node:fs"
import { stat } from "node:fs/promises"
import { basename, dirname, resolve } from "node:path"
import { Duration, Effect, Queue, Runtime } from "effect"
import { type FileSecret, fileCertSecret, fileRootSecret } from "../../../services/agent/sds/file-secret.js"
import type { SecretObject } from "../../../services/agent/sds/sds.js"
import { type FileSecretName, filesOf, parseFileSecretName } from "../../../services/credentials/file-secret-name.js"
import { callerText } from "../../../services/logging/log-text.js"
import { throttled, withScope } from "../../../services/logging/logging.js"
import { Metrics, type MetricsShape } from "../../../services/metrics/metrics.js"
import { readBoundedFile } from "../../config-store/bounded-read.js"

export interface FileSecretSettings {
  /** `MESH_SDS_FILE_MAX_BYTES`: the largest file read. */
  readonly maxBytes: number
  /** `MESH_SDS_MAX_FILES`: distinct files followed at once. */
  readonly maxFiles: number
  /** `FILE_DEBOUNCE_DURATION`: from a watch event to the read. */
  readonly debounce: Duration.Duration
  /** `MESH_SDS_FILE_POLL_INTERVAL`: how often the files are stat'ed whatever the watches say. */
  readonly pollInterval: Duration.Duration
}

export const DEFAULT_FILE_SECRETS: FileSecretSettings = {
  maxBytes: 1024 * 1024,
  maxFiles: 256,
  debounce: Duration.millis(100),
  pollInterval: Duration.seconds(5),
}

/** A version of a file secret, as served. */
export interface ServedFileSecret {
  readonly secret: SecretObject
  readonly version: string
}

/** Called after a followed name got a new version. */
export type FileSecretListener = () => void

export interface FileSecretsShape {
  /**
   * Follows `name` for `listener`; false when it is not followed (not a well-formed name, or the
   * file bound is reached), which was logged. The first version comes through the listener.
   */
  readonly retain: (name: string, listener: FileSecretListener) => boolean
  /** Stops following `name` for `listener`; the last listener gone, its files are let go. */
  readonly release: (name: string, listener: FileSecretListener) => void
  /** The version served now, if the files were read and valid. */
  readonly current: (name: string) => ServedFileSecret | undefined
  /** Reads `name` once without following it (FetchSecrets). */
  readonly readOnce: (name: string) => Effect.Effect<ServedFileSecret | undefined>
  /** What is followed now: names, distinct files, watched directories. */
  readonly followed: () => { readonly names: number; readonly files: number; readonly directories: number }
}

interface Entry {
  readonly name: string
  readonly spec: FileSecretName
  /** The files as named, and resolved against the agent's working directory. */
  readonly paths: ReadonlyArray<string>
  readonly listeners: Set<FileSecretListener>
  served: ServedFileSecret | undefined
  /** The files' signatures when last read; a poll reads again only when they differ. */
  stamp: string
  /** The problem last logged ("" while served): each distinct problem is logged once. */
  problem: string
}

interface WatchedDirectory {
  watcher: FSWatcher | undefined
  readonly paths: Set<string>
}

export const fileSecretMetrics = (metrics: MetricsShape) => ({
  loads: metrics.counter(
    "num_file_secret_loads_total",
    "Number of times a file-mounted secret (file-cert:, file-root:) was read and served: its first read and each change",
  ),
  // The reference's two counters, same names and help.
  failures: metrics.counter("num_file_secret_failures_total", "Number of times secret generation failed for files"),
  watcherFailures: metrics.counter(
    "num_file_watcher_failures_total",
    "Number of times file watcher failed to add watchers",
  ),
})

/**
 * Why a name is not served, as the log's throttle reason (fixed texts: the name and the files
 * are in the line, never in the reason), so one kind flooding does not hide the first line of
 * another.
 */
type Refusal = "malformed name" | "file bound" | "missing" | "unreadable" | "too large" | "invalid"
const throttleReason = (kind: Refusal) => `file secret not served: ${kind}`

/** A file's identity and state as stat sees it (through links), or why it cannot be stat'ed. */
const signature = (path: string): Promise<string> =>
  stat(path).then(
    (s) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`,
    (e: NodeJS.ErrnoException) => `!${e.code ?? "error"}`,
  )

const stampOf = (paths: ReadonlyArray<string>) =>
  Effect.promise(() => Promise.all(paths.map(signature))).pipe(Effect.map((s) => s.join("|")))

/** The texts of the files, or why they cannot be served. */
const readTexts = (paths: ReadonlyArray<string>, named: ReadonlyArray<string>, maxBytes: number) =>
  Effect.promise(() => Promise.all(paths.map((p) => readBoundedFile(p, maxBytes)))).pipe(
    Effect.map((reads): { texts: ReadonlyArray<string> } | { problem: string; kind: Refusal } => {
      const texts: Array<string> = []
      for (const [i, read] of reads.entries()) {
        const file = named[i]!
        switch (read._tag) {
          case "Text":
            texts.push(read.text)
            break
          case "TooLarge":
            return {
              problem: `${file} is larger than ${maxBytes} bytes (MESH_SDS_FILE_MAX_BYTES)`,
              kind: "too large",
            }
          case "NotRegular":
            return { problem: `${file} is ${read.kind}, not a file`, kind: "unreadable" }
          case "Failed":
            return read.code === "ENOENT"
              ? { problem: `${file} does not exist`, kind: "missing" }
              : { problem: `${file} cannot be read: ${read.message}`, kind: "unreadable" }
        }
      }
      return { texts }
    }),
  )

const build = (name: string, spec: FileSecretName, texts: ReadonlyArray<string>): FileSecret =>
  spec.kind === "cert" ? fileCertSecret(name, spec, texts[0]!, texts[1]!) : fileRootSecret(name, spec, texts[0]!)

/** The store of one SDS server (scoped: its watchers close with it). */
export const makeFileSecrets = (settings: FileSecretSettings = DEFAULT_FILE_SECRETS) =>
  Effect.gen(function* () {
    const metrics = fileSecretMetrics(yield* Metrics)
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runFork(runtime)
    const entries = new Map<string, Entry>()
    /** Resolved path → the names reading it. */
    const fileUsers = new Map<string, Set<string>>()
    const directories = new Map<string, WatchedDirectory>()
    /** Names to read at the worker's next turn; `fresh` ones were never read (no debounce). */
    const due = new Set<string>()
    const fresh = new Set<string>()
    const wake = yield* Queue.sliding<void>(1)

    const log = (effect: Effect.Effect<void>) => run(effect.pipe(withScope("sds")))
    const shown = (name: string) => callerText(name)

    /**
     * Marks for reading the names with a file in `dir` that `changed` may concern: the file
     * itself, or an entry starting with `..` (the orchestrator's `..data` link and version
     * directories, which a named file may lead through); any when the event names nothing.
     * Other files of a busy directory cost nothing.
     */
    const markDirectory = (dir: string, changed?: string | null) => {
      const watched = directories.get(dir)
      if (watched === undefined) return
      const any = changed === undefined || changed === null || changed.startsWith("..")
      let marked = false
      for (const path of watched.paths) {
        if (!any && basename(path) !== changed) continue
        for (const name of fileUsers.get(path) ?? []) due.add(name)
        marked = true
      }
      if (marked) Queue.unsafeOffer(wake, undefined)
    }

    const openWatcher = (dir: string): FSWatcher | undefined => {
      try {
        // Not persistent: a watch never keeps the agent alive.
        const watcher = watch(dir, { persistent: false }, (_event, changed) => markDirectory(dir, changed))
        watcher.on("error", () => {
          // e.g. the directory was removed: the poll notices and watches it again once it is back
          watcher.close()
          const watched = directories.get(dir)
          if (watched?.watcher === watcher) watched.watcher = undefined
          metrics.watcherFailures.inc()
          markDirectory(dir)
        })
        return watcher
      } catch {
        metrics.watcherFailures.inc()
        return undefined
      }
    }

    const follow = (path: string, name: string) => {
      const users = fileUsers.get(path)
      if (users !== undefined) {
        users.add(name)
        return
      }
      fileUsers.set(path, new Set([name]))
      const dir = dirname(path)
      const watched = directories.get(dir)
      if (watched !== undefined) watched.paths.add(path)
      else directories.set(dir, { watcher: openWatcher(dir), paths: new Set([path]) })
    }

    const unfollow = (path: string, name: string) => {
      const users = fileUsers.get(path)
      if (users === undefined) return
      users.delete(name)
      if (users.size > 0) return
      fileUsers.delete(path)
      const dir = dirname(path)
      const watched = directories.get(dir)
      if (watched === undefined) return
      watched.paths.delete(path)
      if (watched.paths.size > 0) return
      watched.watcher?.close()
      directories.delete(dir)
    }

    const refuse = (name: string, kind: Refusal, why: string) => {
      metrics.failures.inc()
      log(Effect.logWarning(`SDS: ${shown(name)} not served: ${why}`).pipe(throttled(throttleReason(kind))))
      return false
    }

    const retain = (name: string, listener: FileSecretListener): boolean => {
      const existing = entries.get(name)
      if (existing !== undefined) {
        existing.listeners.add(listener)
        return true
      }
      const spec = parseFileSecretName(name)
      if (spec === undefined)
        return refuse(
          name,
          "malformed name",
          "not a well-formed file secret name (file-cert:<cert>~<key> or file-root:<ca>)",
        )
      const named = filesOf(spec)
      const paths = named.map((f) => resolve(f))
      const added = new Set(paths.filter((p) => !fileUsers.has(p)))
      if (fileUsers.size + added.size > settings.maxFiles)
        return refuse(
          name,
          "file bound",
          `the agent already follows ${fileUsers.size} files for file secrets, at most ${settings.maxFiles} (MESH_SDS_MAX_FILES)`,
        )
      const entry: Entry = {
        name,
        spec,
        paths,
        listeners: new Set([listener]),
        served: undefined,
        stamp: "",
        problem: "",
      }
      entries.set(name, entry)
      for (const path of paths) follow(path, name)
      due.add(name)
      fresh.add(name)
      Queue.unsafeOffer(wake, undefined)
      return true
    }

    const release = (name: string, listener: FileSecretListener) => {
      const entry = entries.get(name)
      if (entry === undefined || !entry.listeners.delete(listener) || entry.listeners.size > 0) return
      entries.delete(name)
      due.delete(name)
      fresh.delete(name)
      for (const path of entry.paths) unfollow(path, name)
    }

    /** Reads a name's files and builds its secret, or says why (and which kind of refusal) it cannot be served. */
    const load = (
      name: string,
      spec: FileSecretName,
      paths: ReadonlyArray<string>,
    ): Effect.Effect<{ readonly result: FileSecret; readonly kind: Refusal }> =>
      Effect.map(readTexts(paths, filesOf(spec), settings.maxBytes), (read) =>
        "problem" in read
          ? { result: { _tag: "Invalid", reason: read.problem }, kind: read.kind }
          : { result: build(name, spec, read.texts), kind: "invalid" },
      )

    const reload = (name: string) =>
      Effect.gen(function* () {
        const entry = entries.get(name)
        if (entry === undefined) return
        // Taken before the read: a change during the read differs from it, so the poll reads again.
        const stamp = yield* stampOf(entry.paths)
        const { result, kind } = yield* load(name, entry.spec, entry.paths)
        if (entries.get(name) !== entry) return
        entry.stamp = stamp
        if (result._tag === "Invalid") {
          metrics.failures.inc()
          if (result.reason === entry.problem) return
          entry.problem = result.reason
          const kept = entry.served !== undefined ? `; still serving version ${entry.served.version}` : ""
          yield* Effect.logWarning(`SDS: ${shown(name)} not served: ${callerText(result.reason, 1024)}${kept}`).pipe(
            throttled(throttleReason(kind)),
          )
          return
        }
        entry.problem = ""
        if (entry.served?.version === result.version) return
        const first = entry.served === undefined
        entry.served = { secret: result.secret, version: result.version }
        metrics.loads.inc()
        yield* Effect.logInfo(
          `SDS: ${first ? "serving" : "rotated"} ${shown(name)} from files (${result.summary}, version ${result.version})`,
        )
        for (const listener of [...entry.listeners]) listener()
      })

    const worker = Effect.gen(function* () {
      yield* Queue.take(wake)
      if (fresh.size === 0 && Duration.toMillis(settings.debounce) > 0) {
        yield* Effect.sleep(settings.debounce)
        yield* Queue.takeAll(wake)
      }
      const names = [...due]
      due.clear()
      fresh.clear()
      for (const name of names) yield* reload(name)
    })

    const poll = Effect.gen(function* () {
      yield* Effect.sleep(settings.pollInterval)
      for (const [dir, watched] of directories) if (watched.watcher === undefined) watched.watcher = openWatcher(dir)
      let changed = false
      for (const entry of [...entries.values()]) {
        const stamp = yield* stampOf(entry.paths)
        if (stamp !== entry.stamp && entries.get(entry.name) === entry) {
          due.add(entry.name)
          changed = true
        }
      }
      if (changed) yield* Queue.offer(wake, undefined)
    })

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const watched of directories.values()) watched.watcher?.close()
        directories.clear()
      }),
    )
    yield* Effect.forkScoped(Effect.forever(worker).pipe(withScope("sds")))
    yield* Effect.forkScoped(Effect.forever(poll))

    const readOnce = (name: string) =>
      Effect.gen(function* () {
        const spec = parseFileSecretName(name)
        if (spec === undefined) {
          refuse(
            name,
            "malformed name",
            "not a well-formed file secret name (file-cert:<cert>~<key> or file-root:<ca>)",
          )
          return undefined
        }
        const { result, kind } = yield* load(
          name,
          spec,
          filesOf(spec).map((f) => resolve(f)),
        )
        if (result._tag === "Loaded") return { secret: result.secret, version: result.version }
        refuse(name, kind, callerText(result.reason, 1024))
        return undefined
      })

    const shape: FileSecretsShape = {
      retain,
      release,
      current: (name) => entries.get(name)?.served,
      readOnce,
      followed: () => ({ names: entries.size, files: fileUsers.size, directories: directories.size }),
    }
    return shape
  })
