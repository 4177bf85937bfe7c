/**
 * Everything mesh-discovery reads, as one layer: the config store (`--configDir`, or an empty
 * in-memory store without it), the mesh configuration (`--meshConfig`, `--networksConfig`) and
 * the service registries (`--registries`, ServiceEntries from the config store).
 */
import { Effect, Layer } from "effect"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { layerMemory as configStoreMemory } from "../../services/config-store/memory.js"
import { withScope } from "../../services/logging/logging.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import type { MockRegistry } from "../../services/registry/mock.js"
import type { OrchestratorNotConfiguredError, ServiceRegistry } from "../../services/registry/registry.js"
import { layerFile as configStoreFile } from "../config-store/file-store.js"
import { layerFile as meshConfigFile } from "../mesh-config/file.js"
import { checkOrchestrator, layerRegistries, type RegistryKind } from "./registries.js"

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
  readonly env: {
    readonly CLUSTER_ID: string
    readonly PILOT_ENABLE_IP_AUTOALLOCATE: boolean
    readonly ORCHESTRATOR_SERVICE_HOST: string
    readonly SHARED_MESH_CONFIG: string
  }
  /** The shared mesh config as a file (embedders, tests); `SHARED_MESH_CONFIG` itself names an orchestrator ConfigMap. */
  readonly sharedMeshConfigPath?: string
}

export type DiscoveryInputs = ConfigStore | MeshWatcher | ServiceRegistry | MockRegistry

export const layer = (
  options: DiscoveryInputsOptions,
): Layer.Layer<DiscoveryInputs, OrchestratorNotConfiguredError, Metrics> => {
  const registryOptions = {
    registries: options.registries,
    orchconfig: options.orchconfig,
    orchestratorServiceHost: options.env.ORCHESTRATOR_SERVICE_HOST,
    clusterId: options.env.CLUSTER_ID,
    autoAllocate: options.env.PILOT_ENABLE_IP_AUTOALLOCATE,
  }
  return Layer.unwrapEffect(
    Effect.gen(function* () {
      // Fail before any file is read or watched.
      const problem = checkOrchestrator(registryOptions)
      if (problem !== undefined) return yield* Effect.fail(problem)
      if (options.env.SHARED_MESH_CONFIG !== "" && options.sharedMeshConfigPath === undefined) {
        yield* Effect.logWarning(
          `SHARED_MESH_CONFIG=${options.env.SHARED_MESH_CONFIG} names an orchestrator ConfigMap, which is not read without an orchestrator; using the standard mesh config only`,
        )
      }
      if (options.configDir === "") {
        yield* Effect.logInfo("no --configDir: no configuration resources are served from files").pipe(
          withScope("file"),
        )
      }
      const store = options.configDir === "" ? configStoreMemory() : configStoreFile({ configDir: options.configDir })
      const mesh = meshConfigFile({
        meshConfigPath: options.meshConfig,
        networksConfigPath: options.networksConfig,
        sharedMeshConfigPath: options.sharedMeshConfigPath,
      })
      return layerRegistries(registryOptions).pipe(Layer.provideMerge(Layer.merge(store, mesh)))
    }),
  )
}
