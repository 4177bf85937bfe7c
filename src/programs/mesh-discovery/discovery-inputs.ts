/**
 * Everything mesh-discovery reads, as one layer: the LocalCluster (the orchestrator, when
 * `--registries` includes it), the config store, the mesh configuration and the service
 * registries.
 *
 * - Config store: `--configDir` when set (it replaces the orchestrator as config source), else
 *   the orchestrator's custom resources, else an empty in-memory store.
 * - Mesh config: the `--meshConfig` file when it exists (as the reference: the ConfigMap is
 *   usually mounted there), else the `mesh[-REVISION]` ConfigMap of `--namespace` with
 *   `SHARED_MESH_CONFIG`, else defaults.
 * - Registries: see registries.ts.
 * - Credentials (TLS Secrets served to gateways over SDS): the orchestrator's Secrets, else none.
 */
import * as fs from "node:fs"
import { Effect, Layer, Option } from "effect"
import { layer as ambientPodsLayer } from "../../layers/ambient/pod-source.js"
import { layerFile as configStoreFile } from "../../layers/config-store/file-store.js"
import { layerWithKinds as orchestratorConfigStore } from "../../layers/config-store/orchestrator-store.js"
import {
  layerOrchestrator as credentialsFromOrchestrator,
  layerNone as noCredentials,
} from "../../layers/credentials/orchestrator.js"
import { layer as gatewayTlsObjectsLayer } from "../../layers/gateway-api/tls-source.js"
import { layerFile as meshConfigFile } from "../../layers/mesh-config/file.js"
import { layer as orchestratorMeshConfig } from "../../layers/mesh-config/orchestrator.js"
import type { OrchestratorConfigError } from "../../layers/orchestrator/client.js"
import { layer as localClusterLayer } from "../../layers/orchestrator/local-cluster.js"
import { layer as namespaceLabelsLayer } from "../../layers/orchestrator/namespace-labels.js"
import { checkOrchestrator, layerRegistries, type RegistryKind } from "../../layers/registry/registries.js"
import { RegistryInputsConfig } from "../../services/config/discovery-config.js"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { layerMemory as configStoreMemory } from "../../services/config-store/memory.js"
import { layerNone as noWatchedKinds, type WatchedConfigKinds } from "../../services/config-store/watched-kinds.js"
import type { CredentialSource } from "../../services/credentials/credential.js"
import { withScope } from "../../services/logging/logging.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import { LocalCluster, layerAccess, withCluster } from "../../services/orchestrator/local-cluster.js"
import type { MockRegistry } from "../../services/registry/mock.js"
import type { OrchestratorNotConfiguredError, ServiceRegistry } from "../../services/registry/registry.js"

export interface DiscoveryInputsOptions {
  /** `--configDir` ("" = none). */
  readonly configDir: string
  /** `--meshConfig`. */
  readonly meshConfig: string
  /** `--networksConfig`. */
  readonly networksConfig: string
  /** `--registries`. */
  readonly registries: ReadonlyArray<RegistryKind>
  /** `--orchconfig` ("" = none). */
  readonly orchconfig: string
  /** `--namespace` / `POD_NAMESPACE`: where the mesh ConfigMap lives. */
  readonly namespace?: string
  /** `--domain`. */
  readonly domain?: string
  /** `--orchestratorApiQPS` / `--orchestratorApiBurst`. */
  readonly orchestratorApiQPS?: number
  readonly orchestratorApiBurst?: number
  /** The shared mesh config as a file (embedders, tests); `SHARED_MESH_CONFIG` itself names an orchestrator ConfigMap. */
  readonly sharedMeshConfigPath?: string
}

export type DiscoveryInputs =
  | ConfigStore
  | CredentialSource
  | WatchedConfigKinds
  | MeshWatcher
  | ServiceRegistry
  | MockRegistry
  | LocalCluster

/** The inputs, with their environment variables from `RegistryInputsConfig`. */
export const layer = (
  options: DiscoveryInputsOptions,
): Layer.Layer<
  DiscoveryInputs,
  OrchestratorNotConfiguredError | OrchestratorConfigError,
  Metrics | RegistryInputsConfig
> => Layer.unwrapEffect(Effect.map(RegistryInputsConfig, (env) => layerWith(options, env)))

const layerWith = (
  options: DiscoveryInputsOptions,
  env: RegistryInputsConfig["Type"],
): Layer.Layer<DiscoveryInputs, OrchestratorNotConfiguredError | OrchestratorConfigError, Metrics> => {
  const registryOptions = {
    registries: options.registries,
    orchconfig: options.orchconfig,
    orchestratorServiceHost: env.ORCHESTRATOR_SERVICE_HOST,
    clusterId: env.CLUSTER_ID,
    autoAllocate: env.PILOT_ENABLE_IP_AUTOALLOCATE,
    orchestrator: {
      domain: options.domain ?? "cluster.local",
      drainingLabel: env.PILOT_DRAINING_LABEL,
      sendUnhealthyEndpoints: env.PILOT_SEND_UNHEALTHY_ENDPOINTS,
      selectWorkloadEntries: env.PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES,
      selectPods: env.PILOT_ENABLE_SERVICEENTRY_SELECT_PODS,
      watchNamespace: env.MESH_WATCH_NAMESPACE,
      systemNamespace: options.namespace ?? "mesh-system",
    },
    multicluster: {
      qps: options.orchestratorApiQPS ?? 80,
      burst: options.orchestratorApiBurst ?? 160,
      insecureOptions: env.PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS,
      remoteClusterTimeout: env.PILOT_REMOTE_CLUSTER_TIMEOUT,
    },
  }
  const cluster = localClusterLayer({
    enabled: options.registries.includes("Orchestrator"),
    orchconfig: options.orchconfig,
    serviceHost: env.ORCHESTRATOR_SERVICE_HOST,
    servicePort: env.ORCHESTRATOR_SERVICE_PORT,
    clusterId: env.CLUSTER_ID,
    qps: options.orchestratorApiQPS ?? 80,
    burst: options.orchestratorApiBurst ?? 160,
  })
  const sources = Layer.unwrapEffect(
    Effect.gen(function* () {
      const local = yield* LocalCluster
      const access = Option.isSome(local) ? layerAccess(local.value) : undefined
      if (options.configDir === "" && access === undefined) {
        yield* Effect.logInfo("no --configDir: no configuration resources are served from files").pipe(
          withScope("file"),
        )
      }
      const store =
        options.configDir !== ""
          ? Layer.merge(configStoreFile({ configDir: options.configDir }), noWatchedKinds)
          : access !== undefined
            ? orchestratorConfigStore({
                watchNamespace: env.MESH_WATCH_NAMESPACE,
                crdSources: {
                  gatewayApi: env.PILOT_ENABLE_GATEWAY_API,
                  alphaGatewayApi: env.PILOT_ENABLE_ALPHA_GATEWAY_API,
                  inferenceExtension: env.ENABLE_GATEWAY_API_INFERENCE_EXTENSION,
                },
              }).pipe(Layer.provide(access))
            : Layer.merge(configStoreMemory(), noWatchedKinds)
      // Gateway and DestinationRule credentials: the cluster's Secrets, when there is a cluster.
      // And the namespaces' labels (Gateway listeners select route namespaces by them), and the
      // Secrets and ConfigMaps Gateway listeners reference (cluster-wide reads only).
      const watchNamespace = env.MESH_WATCH_NAMESPACE
      const credentials =
        access !== undefined
          ? Layer.mergeAll(
              credentialsFromOrchestrator({ watchNamespace }),
              namespaceLabelsLayer,
              watchNamespace === "" ? gatewayTlsObjectsLayer : Layer.empty,
              env.PILOT_ENABLE_AMBIENT === true
                ? ambientPodsLayer({
                    clusterId: env.CLUSTER_ID,
                    autoAllowWaypointPolicy: env.PILOT_AUTO_ALLOW_WAYPOINT_POLICY,
                    systemNamespace: options.namespace ?? "mesh-system",
                  })
                : Layer.empty,
            ).pipe(Layer.provide(access))
          : noCredentials
      const meshFileExists = options.meshConfig !== "" && fs.existsSync(options.meshConfig)
      if (access !== undefined && !meshFileExists) {
        return Layer.mergeAll(
          store,
          credentials,
          orchestratorMeshConfig({
            namespace: options.namespace ?? "mesh-system",
            revision: env.REVISION,
            sharedConfigMapName: env.SHARED_MESH_CONFIG,
          }).pipe(Layer.provide(access)),
        )
      }
      if (env.SHARED_MESH_CONFIG !== "" && options.sharedMeshConfigPath === undefined) {
        yield* Effect.logWarning(
          access === undefined
            ? `SHARED_MESH_CONFIG=${env.SHARED_MESH_CONFIG} names an orchestrator ConfigMap, which is not read without an orchestrator; using the standard mesh config only`
            : `SHARED_MESH_CONFIG=${env.SHARED_MESH_CONFIG} is not merged with the --meshConfig file ${options.meshConfig}; using the file only`,
        )
      }
      return Layer.mergeAll(
        store,
        credentials,
        meshConfigFile({
          meshConfigPath: options.meshConfig,
          networksConfigPath: options.networksConfig,
          sharedMeshConfigPath: options.sharedMeshConfigPath,
        }),
      )
    }),
  )
  return Layer.unwrapEffect(
    Effect.gen(function* () {
      // Fail before any file is read or watched, or any connection made.
      const problem = checkOrchestrator(registryOptions)
      if (problem !== undefined) return yield* Effect.fail(problem)
      return layerRegistries(registryOptions).pipe(Layer.provideMerge(sources), Layer.provideMerge(cluster))
    }),
  )
}

/** Runs `effect` with the local cluster's client and informers, or not at all without one. */
export const whenOrchestrator = <R>(effect: Effect.Effect<void, never, R>) =>
  Effect.flatMap(LocalCluster, (local) => (Option.isSome(local) ? withCluster(local.value)(effect) : Effect.void))
