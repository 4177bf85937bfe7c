/**
 * The CNI installer: puts the mesh plugin on the node and keeps it there.
 *
 * Start-up (a failure stops the process with a message saying what to fix): the CNI bin and
 * network directories must exist and be writable, the plugin program must exist, the template
 * must give a valid entry; then the plugin executable and the kubeconfig are written. After that
 * a loop keeps the config entry in place: on every change in the network directory or the
 * service-account directory (token rotation) it compares what is there with what should be and
 * rewrites what differs. A primary config that is missing or malformed is waited on, logged and
 * never overwritten. When the scope closes (SIGTERM) the installer takes everything out again:
 * first the config entry (so the runtime stops calling the plugin), then the kubeconfig and the
 * executable, so the node's networking is never left pointing at something missing.
 */
import { join } from "node:path"
import { Duration, Effect, Either, Layer, type Scope, Stream } from "effect"
import { parseCniConfig, removeMeshPlugin } from "../../services/cni/conflist-merge.js"
import { planConfig } from "../../services/cni/conflist-plan.js"
import { renderMeshEntry } from "../../services/cni/conflist-template.js"
import {
  CniInstallError,
  CniInstallStatus,
  type CniInstallStatusShape,
  type InstallFailure,
  InstallMetricNames,
  type InstallSettings,
  KUBECONFIG_FILENAME,
  meshOwnedName,
  PLUGIN_EXECUTABLE,
  pluginLauncherScript,
  STANDALONE_CONF_NAME,
} from "../../services/cni/install-settings.js"
import { kubeconfigText, redactedKubeconfigText } from "../../services/cni/kubeconfig-text.js"
import { MESH_CNI_PLUGIN_TYPE } from "../../services/cni/plugin-config.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import {
  type InstallFileError,
  readNetDir,
  readText,
  removeFile,
  requireReadableFile,
  requireWritableDirectory,
  writeAtomically,
} from "./install-files.js"
import { directoryChanges } from "./install-watch.js"

/** CNI config files are world-readable, as the runtime and the reference write them. */
const CONFIG_MODE = 0o644
const EXECUTABLE_MODE = 0o755

export interface InstallerTiming {
  /** Events closer together than this are handled once; default 100 ms. */
  readonly debounce?: Duration.DurationInput
  /** A full check even without events; default 30 s. */
  readonly resync?: Duration.DurationInput
}

const fatal = (result: InstallFailure, what: string) => (error: InstallFileError | { readonly message: string }) =>
  new CniInstallError({ result, message: `${what}: ${error.message}` })

export const makeInstaller = (
  settings: InstallSettings,
  timing: InstallerTiming = {},
): Effect.Effect<CniInstallStatusShape, CniInstallError, Metrics | Scope.Scope> =>
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const readyGauge = metrics.gauge(InstallMetricNames.ready, "Whether the CNI plugin installation is ready or not")
    const installs = metrics.counter(
      InstallMetricNames.installs,
      "Total number of CNI plugins installed by the mesh CNI installer",
      ["result"],
    )
    readyGauge.set(0)
    const failWith = (result: InstallFailure, what: string) => (error: InstallFileError | { message: string }) => {
      installs.inc({ result })
      return fatal(result, what)(error)
    }

    // --- start-up checks --------------------------------------------------------------------
    yield* requireWritableDirectory(settings.binDir, "the CNI bin directory (--cni-bin-dir)").pipe(
      Effect.mapError(failWith("COPY_BINARIES_FAILURE", "cannot install the plugin")),
    )
    yield* requireReadableFile(settings.pluginSource, "the mesh CNI plugin program").pipe(
      Effect.mapError(failWith("COPY_BINARIES_FAILURE", "cannot install the plugin")),
    )
    yield* requireWritableDirectory(settings.netDir, "the CNI network directory (--mounted-cni-net-dir)").pipe(
      Effect.mapError(failWith("CREATE_CNI_CONFIG_FAILURE", "cannot configure the plugin")),
    )
    const kubeconfigPath = join(settings.netDir, KUBECONFIG_FILENAME)
    const meshEntry = yield* Either.match(
      renderMeshEntry(settings.template.source, settings.template.text, {
        logLevel: settings.logLevel,
        logUdsAddress: "",
        kubeconfigFilename: KUBECONFIG_FILENAME,
        kubeconfigFilepath: kubeconfigPath,
        serviceHost: settings.service.host,
        servicePort: settings.service.port,
        nodeName: settings.nodeName,
      }),
      {
        onLeft: (e) => Effect.fail(failWith("CREATE_CNI_CONFIG_FAILURE", "cannot configure the plugin")(e)),
        // Ambient mode: the plugin hands enrolled pods to the node agent in this run directory.
        onRight: (entry) =>
          Effect.succeed(
            settings.ambient === undefined
              ? entry
              : { ...entry, ambient_enabled: true, cni_agent_run_dir: settings.ambient.agentRunDir },
          ),
      },
    )
    if (settings.service.host === "" || settings.service.port === "") {
      return yield* failWith(
        "CREATE_KUBECONFIG_FAILURE",
        "cannot write the plugin's orchestrator config",
      )({
        message:
          "ORCHESTRATOR_SERVICE_HOST/ORCHESTRATOR_SERVICE_PORT (or KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT) not set; is this not running in a pod?",
      })
    }

    // --- the pieces ------------------------------------------------------------------------
    const launcherPath = join(settings.binDir, PLUGIN_EXECUTABLE)
    const launcher = pluginLauncherScript(settings.nodePath, settings.pluginSource)
    const caSource = settings.caFile !== "" ? settings.caFile : join(settings.serviceAccountDir, "ca.crt")

    const installLauncher = readText(launcherPath).pipe(
      Effect.orElseSucceed(() => undefined),
      Effect.flatMap((current) =>
        current === launcher
          ? Effect.succeed(false)
          : Effect.as(writeAtomically(launcherPath, launcher, EXECUTABLE_MODE), true),
      ),
    )

    const kubeconfigInput = Effect.gen(function* () {
      const token = (yield* readText(join(settings.serviceAccountDir, "token")).pipe(
        Effect.mapError(failWith("READ_SERVICE_ACCOUNT_FAILURE", "cannot read the service-account token")),
      )).trim()
      const caPem = settings.skipTlsVerify
        ? undefined
        : yield* readText(caSource).pipe(
            Effect.mapError(failWith("CREATE_KUBECONFIG_FAILURE", "cannot read the orchestrator CA (--orch-ca-file)")),
          )
      return {
        protocol: settings.service.protocol,
        host: settings.service.host,
        port: settings.service.port,
        token,
        caPem,
        skipTlsVerify: settings.skipTlsVerify,
      }
    })
    let writtenKubeconfig: string | undefined
    const installKubeconfig = Effect.gen(function* () {
      const input = yield* kubeconfigInput
      const text = kubeconfigText(input)
      const current = yield* readText(kubeconfigPath).pipe(Effect.orElseSucceed(() => undefined))
      if (current === text) return false
      yield* writeAtomically(kubeconfigPath, text, settings.kubeconfigMode).pipe(
        Effect.mapError(failWith("CREATE_KUBECONFIG_FAILURE", "cannot write the plugin's orchestrator config")),
      )
      if (writtenKubeconfig === undefined)
        yield* Effect.logInfo(`wrote ${kubeconfigPath}:\n${redactedKubeconfigText(input, caSource)}`)
      else yield* Effect.logInfo(`rewrote ${kubeconfigPath} (token or CA changed)`)
      writtenKubeconfig = text
      return true
    })

    // --- the config entry --------------------------------------------------------------------
    let ready = false
    const setReady = (value: boolean) =>
      Effect.sync(() => {
        ready = value
        readyGauge.set(value ? 1 : 0)
      })
    /** Files holding the entry (to clean up), and for a list made from a `.conf`, that `.conf`'s name. */
    const chainedInto = new Map<string, string | undefined>()
    let lastProblem = ""
    const reportOnce = (problem: string, log: Effect.Effect<void>) =>
      Effect.suspend(() => {
        if (problem === lastProblem) return Effect.void
        lastProblem = problem
        return log
      })

    const installConfig = Effect.gen(function* () {
      const files = yield* readNetDir(settings.netDir, settings.confName)
      const plan = planConfig(settings, files, meshEntry)
      switch (plan._tag) {
        case "UpToDate":
          lastProblem = ""
          if (!ready) yield* Effect.logInfo(`mesh CNI plugin configured in ${join(settings.netDir, plan.file)}`)
          if (settings.chained && !settings.meshOwned && !chainedInto.has(plan.file))
            chainedInto.set(plan.file, undefined)
          return yield* setReady(true)
        case "Wait": {
          yield* setReady(false)
          const ignoring = plan.skipped.map((skipped) => `; ignoring ${skipped.message}`).join("")
          return yield* reportOnce(
            plan.reason + ignoring,
            Effect.logWarning(
              `waiting for the primary CNI network config in ${settings.netDir}: ${plan.reason}${ignoring}`,
            ),
          )
        }
        case "Malformed":
          yield* setReady(false)
          return yield* reportOnce(
            plan.error.message,
            Effect.zipRight(
              Effect.sync(() => installs.inc({ result: "CREATE_CNI_CONFIG_FAILURE" })),
              Effect.logError(`${plan.error.message}; left untouched, waiting for it to be fixed`),
            ),
          )
        case "Write": {
          for (const skipped of plan.skipped) yield* Effect.logWarning(`ignoring ${skipped.message}`)
          if (ready) yield* Effect.logWarning(`the mesh CNI plugin config changed in ${settings.netDir}; reinstalling`)
          yield* setReady(false)
          lastProblem = ""
          yield* writeAtomically(join(settings.netDir, plan.file), plan.text, CONFIG_MODE)
          if (plan.replaces !== undefined) yield* removeFile(join(settings.netDir, plan.replaces))
          if (settings.chained && !settings.meshOwned)
            chainedInto.set(plan.file, plan.replaces ?? chainedInto.get(plan.file))
          installs.inc({ result: "SUCCESS" })
          yield* Effect.logInfo(
            `mesh CNI plugin configured in ${join(settings.netDir, plan.file)}${plan.replaces !== undefined ? ` (replacing ${plan.replaces})` : ""}`,
          )
          return yield* setReady(true)
        }
      }
    })

    const reconcile = Effect.gen(function* () {
      if (yield* installLauncher) yield* Effect.logWarning(`${launcherPath} was missing or changed; reinstalled`)
      yield* installKubeconfig
      yield* installConfig
    }).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          setReady(false),
          reportOnce(error.message, Effect.logError(`installing the mesh CNI plugin: ${error.message}; retrying`)),
        ),
      ),
    )

    // --- removal -------------------------------------------------------------------------------
    const removeConfig = Effect.gen(function* () {
      if (!settings.chained)
        return yield* removeOwnFile(settings.confName === "" ? STANDALONE_CONF_NAME : settings.confName)
      if (settings.meshOwned) return yield* removeOwnFile(meshOwnedName(settings))
      for (const [file, convertedFrom] of chainedInto) {
        const path = join(settings.netDir, file)
        const text = yield* readText(path).pipe(Effect.orElseSucceed(() => undefined))
        if (text === undefined) continue
        const restoreTo =
          convertedFrom !== undefined &&
          (yield* readText(join(settings.netDir, convertedFrom)).pipe(
            Effect.as(false),
            Effect.orElseSucceed(() => true),
          ))
            ? convertedFrom
            : undefined
        const removed = removeMeshPlugin(file, text, { restoreSingle: restoreTo !== undefined })
        if (Either.isLeft(removed)) {
          yield* Effect.logError(`${removed.left.message}; left untouched`)
          continue
        }
        if (removed.right === undefined) continue
        const restoredSingle =
          restoreTo !== undefined && Either.getOrUndefined(parseCniConfig(restoreTo, removed.right))?._tag === "Single"
        if (restoredSingle && restoreTo !== undefined) {
          // The .conf first, then the list: at every moment the runtime finds a valid primary.
          yield* writeAtomically(join(settings.netDir, restoreTo), removed.right, CONFIG_MODE)
          yield* removeFile(path)
          yield* Effect.logInfo(`removed the mesh CNI plugin from ${path} (restored ${restoreTo})`)
        } else {
          yield* writeAtomically(path, removed.right, CONFIG_MODE)
          yield* Effect.logInfo(`removed the mesh CNI plugin from ${path}`)
        }
      }
    })
    const removeOwnFile = (file: string) =>
      Effect.gen(function* () {
        const path = join(settings.netDir, file)
        const text = yield* readText(path).pipe(Effect.orElseSucceed(() => undefined))
        if (text === undefined) return
        // A file of that name that is not the installer's (another config named by --cni-conf-name) stays.
        const parsed = Either.getOrUndefined(parseCniConfig(file, text))
        const ours =
          parsed !== undefined &&
          (parsed._tag === "Single"
            ? parsed.config.type === MESH_CNI_PLUGIN_TYPE
            : parsed.plugins.some((p) => p.type === MESH_CNI_PLUGIN_TYPE))
        if (!ours) return
        yield* removeFile(path)
        yield* Effect.logInfo(`removed ${path}`)
      })
    const logFailure = (what: string) => (error: { readonly message: string }) =>
      Effect.logError(`removing the mesh CNI plugin ${what}: ${error.message}`)
    // Each piece on its own: one that cannot be removed must not keep the others in place.
    const uninstall = Effect.gen(function* () {
      yield* setReady(false)
      yield* removeConfig.pipe(Effect.catchAll(logFailure("config")))
      yield* removeFile(kubeconfigPath).pipe(Effect.catchAll(logFailure("kubeconfig")))
      yield* removeFile(launcherPath).pipe(Effect.catchAll(logFailure("executable")))
      yield* Effect.logInfo("mesh CNI plugin removed from the node")
    })

    // --- start -----------------------------------------------------------------------------------
    // Registered before anything is written: a start-up that fails half-way leaves nothing behind,
    // and at shutdown the loop (forked later) is interrupted before this runs.
    yield* Effect.addFinalizer(() => uninstall)
    yield* installLauncher.pipe(Effect.mapError(failWith("COPY_BINARIES_FAILURE", "cannot install the plugin")))
    yield* Effect.logInfo(`installed ${launcherPath} (runs ${settings.pluginSource})`)
    yield* installKubeconfig

    yield* reconcile
    const changes = directoryChanges([settings.netDir, settings.serviceAccountDir], {
      debounce: timing.debounce ?? Duration.millis(100),
      resync: timing.resync ?? Duration.seconds(30),
    })
    yield* changes.pipe(
      Stream.runForEach(() => reconcile),
      Effect.forkScoped,
    )
    return { ready: Effect.sync(() => ready) }
  }).pipe(withScope("default"))

/** The installer as the CniInstallStatus service, for as long as the layer lives. */
export const layer = (settings: InstallSettings, timing: InstallerTiming = {}) =>
  Layer.scoped(CniInstallStatus, makeInstaller(settings, timing))
