/**
 * The `ServiceRegistry` of mesh-discovery: the aggregate of the registries `--registries`
 * selects plus the ServiceEntry registry (always present: it follows the config store).
 *
 * - `Mock`: the in-memory registry (`MockRegistry` is always provided so embedders and tests can
 *   fill it; it joins the aggregate only when selected).
 * - `Orchestrator`: not implemented in this build. Selected with neither `--orchconfig` nor an
 *   in-cluster environment (`ORCHESTRATOR_SERVICE_HOST`), start-up fails with
 *   OrchestratorNotConfiguredError; otherwise it is skipped with a warning. No connection to
 *   an orchestrator is ever attempted here.
 */
import { Context, Effect, Layer } from "effect"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { withScope } from "../../services/logging/logging.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { makeAggregateRegistry } from "../../services/registry/aggregate.js"
import { MockRegistry, makeMockRegistry } from "../../services/registry/mock.js"
import {
  OrchestratorNotConfiguredError,
  ServiceRegistry,
  type ServiceRegistryShape,
} from "../../services/registry/registry.js"
import { makeServiceEntryRegistry, type ServiceEntryRegistryOptions } from "./service-entry.js"

export type RegistryKind = "Orchestrator" | "Mock"

export interface RegistriesOptions extends ServiceEntryRegistryOptions {
  /** `--registries`. */
  readonly registries: ReadonlyArray<RegistryKind>
  /** `--orchconfig` ("" = none). */
  readonly orchconfig?: string
  /** `ORCHESTRATOR_SERVICE_HOST` ("" = not in a cluster). */
  readonly orchestratorServiceHost?: string
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
): Layer.Layer<ServiceRegistry | MockRegistry, OrchestratorNotConfiguredError, ConfigStore | MeshWatcher> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const problem = checkOrchestrator(options)
      if (problem !== undefined) return yield* Effect.fail(problem)
      if (options.registries.includes("Orchestrator")) {
        yield* Effect.logWarning(
          "the orchestrator registry is not available in this build; skipping it (use --registries Mock to silence this)",
        ).pipe(withScope("kube"))
      }
      const mock = yield* makeMockRegistry()
      const serviceEntries = yield* makeServiceEntryRegistry(options)
      const members: Array<ServiceRegistryShape> = []
      if (options.registries.includes("Mock")) members.push(mock.registry)
      members.push(serviceEntries)
      const aggregate = yield* makeAggregateRegistry(members)
      yield* aggregate.awaitSynced
      return Context.make(ServiceRegistry, aggregate).pipe(Context.add(MockRegistry, mock))
    }),
  )
