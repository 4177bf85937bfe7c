/**
 * The `ServiceRegistry` of mesh-discovery: the aggregate of the registries `--registries`
 * selects plus the ServiceEntry registry (always present: it follows the config store).
 *
 * - `Orchestrator`: Services, EndpointSlices, Pods and Nodes of the LocalCluster (first, so its
 *   definition of a host wins). Selected with neither `--orchconfig` nor an in-cluster
 *   environment (`ORCHESTRATOR_SERVICE_HOST`), start-up fails with OrchestratorNotConfiguredError.
 * - Without the orchestrator registry, the config store's orchestrator documents (`v1 Service`,
 *   `discovery.k8s.io/v1 EndpointSlice`, Endpoints, Pods, the system Namespace; from
 *   `--configDir`) form the orchestrator registry instead (file-orchestrator.ts).
 * - `Mock`: the in-memory registry (`MockRegistry` is always provided so embedders and tests can
 *   fill it; it joins the aggregate only when selected).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { DEFAULT_CLUSTER_ID } from "../../services/constants.js"
import { RemoteClusters } from "../../services/debug/clusterz.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import { makeAggregateRegistry } from "../../services/registry/aggregate.js"
import { MockRegistry, makeMockRegistry } from "../../services/registry/mock.js"
import {
  OrchestratorNotConfiguredError,
  ServiceRegistry,
  type ServiceRegistryShape,
} from "../../services/registry/registry.js"
import { makeFileOrchestratorRegistry } from "./file-orchestrator.js"
import { type MulticlusterOptions, makeMulticlusterController } from "./multicluster.js"
import { makeOrchestratorRegistry, type OrchestratorRegistryOptions } from "./orchestrator.js"
import { makeServiceEntryRegistry, type ServiceEntryRegistryOptions } from "./service-entry.js"

export type RegistryKind = "Orchestrator" | "Mock"

export interface RegistriesOptions extends ServiceEntryRegistryOptions {
  /** `--registries`. */
  readonly registries: ReadonlyArray<RegistryKind>
  /** `--orchconfig` ("" = none). */
  readonly orchconfig?: string
  /** `ORCHESTRATOR_SERVICE_HOST` ("" = not in a cluster). */
  readonly orchestratorServiceHost?: string
  /** The orchestrator registry's settings (clusterId comes from `clusterId`). */
  readonly orchestrator?: Omit<OrchestratorRegistryOptions, "clusterId">
  /** Remote clusters from Secrets (with the orchestrator registry). */
  readonly multicluster?: Pick<MulticlusterOptions, "qps" | "burst" | "insecureOptions" | "remoteClusterTimeout">
}

/** Whether the orchestrator registry is asked for but impossible to reach. */
export const checkOrchestrator = (options: RegistriesOptions): OrchestratorNotConfiguredError | undefined =>
  options.registries.includes("Orchestrator") &&
  (options.orchconfig ?? "") === "" &&
  (options.orchestratorServiceHost ?? "") === ""
    ? new OrchestratorNotConfiguredError()
    : undefined

export const layerRegistries = (
  options: RegistriesOptions,
): Layer.Layer<
  ServiceRegistry | MockRegistry | RemoteClusters,
  OrchestratorNotConfiguredError,
  ConfigStore | MeshWatcher | LocalCluster | Metrics
> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const problem = checkOrchestrator(options)
      if (problem !== undefined) return yield* Effect.fail(problem)
      const cluster = yield* LocalCluster
      const mock = yield* makeMockRegistry()
      const serviceEntries = yield* makeServiceEntryRegistry(options)
      const members: Array<ServiceRegistryShape> = []
      let remoteClusters: RemoteClusters["Type"]["clusters"] = Effect.succeed([])
      if (options.registries.includes("Orchestrator") && Option.isSome(cluster)) {
        const clusterId = options.clusterId ?? cluster.value.client.clusterId
        const registry = {
          domain: "cluster.local",
          drainingLabel: "mesh.io/draining",
          sendUnhealthyEndpoints: false,
          selectWorkloadEntries: true,
          ...options.orchestrator,
        }
        members.push(yield* makeOrchestratorRegistry({ ...registry, clusterId }).pipe(withCluster(cluster.value)))
        // Remote clusters come after the local one: the local definition of a host wins.
        const remote = yield* makeMulticlusterController({
          clusterId,
          namespace: registry.systemNamespace ?? "mesh-system",
          registry,
          qps: 80,
          burst: 160,
          insecureOptions: "",
          remoteClusterTimeout: "30 seconds",
          ...options.multicluster,
        }).pipe(withCluster(cluster.value))
        members.push(remote.registry)
        remoteClusters = remote.clusters
      } else {
        // No cluster: the config store's Service, EndpointSlice, Pod ... documents (file mode)
        // stand in for it, converted as the orchestrator registry converts the cluster's.
        members.push(
          yield* makeFileOrchestratorRegistry({
            domain: "cluster.local",
            drainingLabel: "mesh.io/draining",
            sendUnhealthyEndpoints: false,
            selectWorkloadEntries: true,
            ...options.orchestrator,
            clusterId: options.clusterId ?? DEFAULT_CLUSTER_ID,
          }),
        )
      }
      if (options.registries.includes("Mock")) members.push(mock.registry)
      members.push(serviceEntries)
      // Not waited for here: the layers above build while the lists load. What needs the synced
      // registry waits itself (`awaitSynced`): the ADS inputs, `/ready`, the status writers.
      const aggregate = yield* makeAggregateRegistry(members)
      return Context.make(ServiceRegistry, aggregate).pipe(
        Context.add(MockRegistry, mock),
        Context.add(RemoteClusters, { clusters: remoteClusters }),
      )
    }),
  )
