/**
 * Where the `/inject` webhook of mesh-discovery gets the injector's configuration, chosen at
 * start as the reference does:
 * - files: when `<injectDir>/config` exists (the reference mounts the injector ConfigMap there),
 *   `config` and `values` of that directory, re-read when it changes (watched; polled where it
 *   cannot be watched);
 * - else, on an orchestrator: the injector ConfigMap (`mesh-sidecar-injector`, or
 *   `mesh-sidecar-injector-<REVISION>`) of `--namespace`, keys `config` and `values`, followed
 *   through its own informer; start-up waits for its first list, so no request is injected with
 *   defaults the ConfigMap would have overridden;
 * - else the built-in defaults.
 * A bad `config` or `values` keeps the last good pair and logs every problem; a ConfigMap deleted
 * later reverts to the defaults, a file deleted later keeps the last good pair (a mount being
 * replaced cannot be told from one removed).
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Duration, Effect, Either, Option, Schedule, type Scope, Stream } from "effect"
import {
  defaultInjectorSettings,
  type InjectorSettings,
  type NamedText,
  readInjectorSettings,
} from "../../services/injection/injector-settings.js"
import { injectorConfigMapName } from "../../services/injection/webhook-config.js"
import type { Informers } from "../../services/orchestrator/informer.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import type { OrchConfigMap } from "../../services/orchestrator/objects.js"
import {
  debounceReloads,
  FILE_DEBOUNCE_DURATION,
  FILE_POLL_INTERVAL,
  watchDirectory,
} from "../config-store/file-store.js"
import { followNamedConfigMap } from "../orchestrator/named-configmap.js"

export interface InjectorSourceOptions {
  /** The directory of the mounted `config` and `values`. */
  readonly injectDir: string
  /** `--namespace`: where the injector ConfigMap is. */
  readonly namespace: string
  /** `REVISION`: names the ConfigMap. */
  readonly revision: string
  readonly debounce?: Duration.DurationInput
  readonly pollInterval?: Duration.DurationInput
}

/** Holds the current settings; applies new texts, keeping the last good settings on problems. */
const makeHolder = () => {
  let current = defaultInjectorSettings()
  let lastKey: string | undefined
  const apply = (
    sources: { readonly config?: NamedText | undefined; readonly values?: NamedText | undefined },
    origin: string,
  ): Effect.Effect<void> =>
    Effect.gen(function* () {
      // Informer resyncs and file events that change nothing are not worth a re-parse or a log.
      const key = JSON.stringify([origin, sources.config?.text, sources.values?.text])
      if (key === lastKey) return
      lastKey = key
      const read = readInjectorSettings(sources, origin)
      if (Either.isLeft(read)) {
        for (const problem of read.left) yield* Effect.logError(`sidecar injector configuration: ${problem}`)
        yield* Effect.logError(`sidecar injector configuration from ${origin} is invalid; keeping ${current.origin}`)
        return
      }
      for (const warning of read.right.warnings) yield* Effect.logWarning(`sidecar injector configuration: ${warning}`)
      current = read.right.settings
      yield* Effect.logInfo(
        `sidecar injection: policy ${current.config.policy}, templates ${current.config.defaultTemplates.join(",") || "<none>"} (from ${origin})`,
      )
    })
  return { current: (): InjectorSettings => current, apply }
}

type FileRead =
  | { readonly _tag: "absent" }
  | { readonly _tag: "text"; readonly text: string }
  | { readonly _tag: "error"; readonly message: string }

const readFile = (file: string): Effect.Effect<FileRead> =>
  Effect.promise(() =>
    fsp.readFile(file, "utf8").then(
      (text): FileRead => ({ _tag: "text", text }),
      (error: NodeJS.ErrnoException): FileRead =>
        error.code === "ENOENT" || error.code === "ENOTDIR"
          ? { _tag: "absent" }
          : { _tag: "error", message: `${file}: cannot read: ${error.message}` },
    ),
  )

const fileExists = (file: string): Effect.Effect<boolean> =>
  Effect.promise(() =>
    fsp.stat(file).then(
      (s) => s.isFile(),
      () => false,
    ),
  )

/** Reads `config` and `values` of the directory now and whenever it changes. */
const followFiles = (
  holder: ReturnType<typeof makeHolder>,
  options: InjectorSourceOptions,
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = path.resolve(options.injectDir)
    const configFile = path.join(dir, "config")
    const valuesFile = path.join(dir, "values")
    const reload = Effect.gen(function* () {
      const [config, values] = yield* Effect.all([readFile(configFile), readFile(valuesFile)])
      for (const read of [config, values]) {
        if (read._tag === "error") {
          yield* Effect.logError(`sidecar injector configuration: ${read.message}; keeping the last one read`)
          return
        }
      }
      if (config._tag !== "text") {
        yield* Effect.logWarning(`${configFile} was removed; keeping the sidecar injector configuration read before`)
        return
      }
      yield* holder.apply(
        {
          config: { name: configFile, text: config.text },
          values: values._tag === "text" ? { name: valuesFile, text: values.text } : undefined,
        },
        dir,
      )
    })
    const pollInterval = options.pollInterval ?? FILE_POLL_INTERVAL
    const poll = Stream.fromSchedule(Schedule.spaced(pollInterval)).pipe(Stream.runForEach(() => reload))
    yield* Effect.forkScoped(
      debounceReloads(watchDirectory(dir, false), options.debounce ?? FILE_DEBOUNCE_DURATION, () => reload).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning(`${error.message}; polling ${dir} every ${Duration.format(pollInterval)}`).pipe(
            Effect.zipRight(poll),
          ),
        ),
      ),
    )
    // Read after the watcher is forked: it opens while the files are read, so a change made
    // right after this read is seen.
    yield* reload
  })

/** Follows the injector ConfigMap from its first list on. */
const followConfigMap = (
  holder: ReturnType<typeof makeHolder>,
  namespace: string,
  name: string,
): Effect.Effect<void, never, Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const followed = yield* followNamedConfigMap(namespace, name, "sidecar injector")
    const origin = `ConfigMap ${namespace}/${name}`
    const apply = (configMap: OrchConfigMap | undefined) => {
      const data = configMap?.data ?? {}
      const key = (k: string): NamedText | undefined =>
        typeof data[k] === "string" ? { name: `${origin} key ${k}`, text: data[k] } : undefined
      return configMap === undefined
        ? holder.apply({}, "built-in defaults")
        : holder.apply({ config: key("config"), values: key("values") }, origin)
    }
    let current = followed.initial
    if (current === undefined) yield* Effect.logInfo(`no ConfigMap ${origin}: sidecar injection uses built-in defaults`)
    yield* apply(current)
    yield* Effect.forkScoped(
      Stream.fromQueue(followed.batches).pipe(
        Stream.runForEach((batch) => {
          const before = current
          current = followed.next(current, batch)
          if (before === current) return Effect.void
          if (before !== undefined && current === undefined) {
            return Effect.logWarning(`${origin} was deleted; sidecar injection reverts to built-in defaults`).pipe(
              Effect.zipRight(apply(undefined)),
            )
          }
          return apply(current)
        }),
      ),
    )
  })

/** Builds the source; returns once its first configuration is read. */
export const makeInjectorSource = (
  options: InjectorSourceOptions,
): Effect.Effect<{ readonly current: () => InjectorSettings }, never, LocalCluster | Scope.Scope> =>
  Effect.gen(function* () {
    const holder = makeHolder()
    const cluster = yield* LocalCluster
    if (yield* fileExists(path.join(path.resolve(options.injectDir), "config"))) {
      yield* followFiles(holder, options)
    } else if (Option.isSome(cluster)) {
      yield* followConfigMap(holder, options.namespace, injectorConfigMapName(options.revision)).pipe(
        withCluster(cluster.value),
      )
    } else {
      yield* Effect.logInfo("sidecar injection uses built-in defaults (no injector files, no orchestrator)")
    }
    return { current: holder.current }
  })
