/**
 * What `install-cni` launches (loaded only when the command runs): the installer, the race
 * repair controller, with --ambient-enabled the node agent, and the readiness, monitoring and introspection listeners, with one
 * Metrics registry. Besides the spec's flags it reads the pod's service environment for the API
 * server, and three variables the spec leaves unnamed ("variables after REPAIR_ENABLED: not
 * shown"): CNI_READINESS_PORT (default 8000, the reference's fixed port), CNI_PLUGIN_SOURCE (the
 * plugin program; default this package's bin/mesh-cni.cjs) and CNI_SERVICE_ACCOUNT_DIR.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { ConfigError, Effect, Layer } from "effect"
import { layer as installerLayer } from "../../layers/cni/install-installer.js"
import { layerMonitoring, layerReadiness } from "../../layers/cni/install-server.js"
import { layer as nodeAgentLayer } from "../../layers/cni/node-agent.js"
import { runRepairController } from "../../layers/cni/repair-controller.js"
import * as Introspection from "../../layers/introspection-server.js"
import { layer as loggingLayer } from "../../layers/logging.js"
import * as HeapGrowth from "../../layers/memory/heap-growth.js"
import { layer as metricsLayer } from "../../layers/metrics.js"
import { layer as orchestratorClientLayer, SERVICE_ACCOUNT_DIRS } from "../../layers/orchestrator/client.js"
import { layer as informersLayer } from "../../layers/orchestrator/informer.js"
import { DEFAULT_TEMPLATE } from "../../services/cni/conflist-template.js"
import { CniInstallError, type InstallSettings } from "../../services/cni/install-settings.js"
import type { RepairSettings } from "../../services/cni/repair-decision.js"
import { InstallCniConfig } from "../../services/config/cni-config.js"
import type { LogSettings } from "../../services/logging/options.js"
import { cniScopes } from "../../services/logging/scopes.js"
import { boundShutdown } from "../shared/run.js"
import type { CniArgs } from "./cni-flags.js"

/** How long removal may take after SIGTERM before the process is made to exit. */
const SHUTDOWN_MILLIS = 10_000

/** The first set of a mesh variable's value and the orchestrator's own (`ORCHESTRATOR_*`, then `KUBERNETES_*`). */
const firstOf = (...values: ReadonlyArray<string>): string => values.find((v) => v !== "") ?? ""

const templateOf = (args: CniArgs) =>
  Effect.suspend(() => {
    if (args.cniNetworkConfigFile !== "") {
      return Effect.try({
        try: () => ({ text: readFileSync(args.cniNetworkConfigFile, "utf8"), source: args.cniNetworkConfigFile }),
        catch: (e) =>
          new CniInstallError({
            result: "CREATE_CNI_CONFIG_FAILURE",
            message: `cannot read --cni-network-config-file ${args.cniNetworkConfigFile}: ${(e as Error).message}`,
          }),
      })
    }
    if (args.cniNetworkConfig !== "")
      return Effect.succeed({ text: args.cniNetworkConfig, source: "--cni-network-config" })
    return Effect.succeed({ text: DEFAULT_TEMPLATE, source: "built-in template" })
  })

/** bin/mesh-cni.cjs beside the bin/install-cni.cjs being run. */
const packagedPlugin = (): string => {
  const script = process.argv[1] ?? ""
  const dir = script === "" ? process.cwd() : dirname(existsSync(script) ? realpathSync(script) : script)
  return join(dir, "mesh-cni.cjs")
}

export const runInstallCni = (args: CniArgs, logging: LogSettings) =>
  Effect.gen(function* () {
    // The whole table, read once when the command started (every bad variable reported then).
    const env = yield* InstallCniConfig
    yield* boundShutdown(SHUTDOWN_MILLIS)
    const readinessPort = env.CNI_READINESS_PORT
    if (!(readinessPort > 0 && readinessPort < 65536))
      return yield* Effect.fail(
        ConfigError.InvalidData(["CNI_READINESS_PORT"], `expected a port (1-65535), got ${readinessPort}`),
      )
    const pluginSource = env.CNI_PLUGIN_SOURCE || packagedPlugin()
    const serviceAccountDir =
      env.CNI_SERVICE_ACCOUNT_DIR ||
      (SERVICE_ACCOUNT_DIRS.find((d) => existsSync(join(d, "token"))) ?? SERVICE_ACCOUNT_DIRS[1])
    const service = {
      host: firstOf(env.ORCHESTRATOR_SERVICE_HOST, env.KUBERNETES_SERVICE_HOST),
      port: firstOf(env.ORCHESTRATOR_SERVICE_PORT, env.KUBERNETES_SERVICE_PORT),
      protocol: firstOf(env.ORCHESTRATOR_SERVICE_PROTOCOL, env.KUBERNETES_SERVICE_PROTOCOL) || "https",
    }
    const settings: InstallSettings = {
      netDir: args.mountedCniNetDir,
      binDir: args.cniBinDir,
      pluginSource,
      nodePath: process.execPath,
      confName: args.cniConfName,
      chained: args.chainedCniPlugin,
      meshOwned: args.meshOwnedCniConfig,
      meshOwnedFilename: args.meshOwnedCniConfigFilename,
      template: yield* templateOf(args),
      logLevel: args.logLevel,
      nodeName: env.NODE_NAME,
      service,
      serviceAccountDir,
      caFile: args.orchCaFile,
      skipTlsVerify: args.skipTlsVerify,
      kubeconfigMode: args.orchconfigMode,
      ...(args.ambientEnabled ? { ambient: { agentRunDir: args.cniAgentRunDir } } : {}),
    }
    const repair: RepairSettings = {
      deletePods: args.repairDeletePods,
      labelPods: args.repairLabelPods,
      labelKey: args.repairBrokenPodLabelKey,
      labelValue: args.repairBrokenPodLabelValue,
      sidecarAnnotation: args.repairSidecarAnnotation,
      initContainerName: args.repairInitContainerName,
      initContainerExitCode: args.repairInitContainerExitCode,
      initContainerTerminationMessage: args.repairInitContainerTerminationMessage,
      nodeName: args.repairNodeName || env.NODE_NAME,
      fieldSelectors: args.repairFieldSelectors,
      labelSelectors: args.repairLabelSelectors,
    }
    // Repair needs something to do: with neither labelling nor deleting it would only watch.
    const repairing = args.repairEnabled && (repair.deletePods || repair.labelPods)
    if (args.repairEnabled && !repairing)
      yield* Effect.logInfo("race repair enabled, but neither --repair-label-pods nor --repair-delete-pods is set")
    const repairLayer = repairing
      ? Layer.scopedDiscard(Effect.forkScoped(runRepairController(repair))).pipe(
          Layer.provide(informersLayer),
          Layer.provide(
            orchestratorClientLayer({
              source: { _tag: "inCluster", host: service.host, port: service.port || "443", serviceAccountDir },
              clusterId: "Orchestrator",
              qps: 0,
              burst: 0,
            }),
          ),
        )
      : Layer.empty

    // Ambient mode: the node agent (plugin events in, the node proxy's socket out).
    const ambientLayer = args.ambientEnabled
      ? nodeAgentLayer({
          runDir: args.cniAgentRunDir,
          nodeProxyAddress: args.nodeProxyUdsAddress,
          inpod: {
            dnsCapture: env.AMBIENT_DNS_CAPTURE,
            ipv6: env.AMBIENT_IPV6,
            hostProbeSnatV4: env.HOST_PROBE_SNAT_IP,
            hostProbeSnatV6: env.HOST_PROBE_SNAT_IPV6,
          },
        })
      : Layer.empty

    const servers = Layer.mergeAll(
      HeapGrowth.layerFromEnv,
      layerReadiness(readinessPort, "CNI_READINESS_PORT"),
      layerMonitoring(args.monitoringPort),
      Introspection.layerWith({
        host: args.ctrlzAddress === "*" ? undefined : args.ctrlzAddress,
        port: args.ctrlzPort,
      }),
    ).pipe(Layer.provide(installerLayer(settings)))

    return yield* Layer.launch(
      Layer.mergeAll(ambientLayer, servers, repairLayer).pipe(Layer.provide(metricsLayer("install-cni"))),
    ).pipe(Effect.onInterrupt(() => Effect.logInfo("install-cni stopped")))
  }).pipe(Effect.provide(loggingLayer(logging, cniScopes)))
