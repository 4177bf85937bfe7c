/**
 * The orchestrator registry of file mode: the config store's `v1 Service`,
 * `discovery.k8s.io/v1 EndpointSlice`, `v1 Endpoints`, `v1 Pod` and `v1 Namespace` documents
 * (from `--configDir`) folded by the orchestrator registry's own state, so the services and
 * endpoints they describe are served exactly as the same objects from a cluster would be. Used
 * when no orchestrator registry runs (as the reference's file mode with a file-backed cluster);
 * with none of these documents it is an empty registry.
 *
 * One fiber follows the store: each change event touching these kinds (or ServiceEntry /
 * WorkloadEntry, for cross-selection) is one publish; the registry is synced after the store's
 * first load.
 */
import { Effect, Queue, type Scope } from "effect"
import type { ConfigResource } from "../../services/config-model/resource.js"
import type { ServiceEntrySpec } from "../../services/config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../services/config-model/schemas/workload-entry.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import { SYSTEM_NAMESPACE } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { makeRegistryCore } from "../../services/registry/core.js"
import { ConfigFeed, ORCHESTRATOR_DOCUMENT_KINDS } from "../../services/registry/orchestrator/from-config.js"
import { ORCHESTRATOR_REGISTRY } from "../../services/registry/orchestrator/service.js"
import { OrchestratorRegistryState } from "../../services/registry/orchestrator/state.js"
import type { ServiceRegistryShape } from "../../services/registry/registry.js"
import { type ConfigInput, forwardConfigInputs } from "./config-inputs.js"
import type { OrchestratorRegistryOptions } from "./orchestrator.js"

const WATCHED_KINDS = new Set<string>([...ORCHESTRATOR_DOCUMENT_KINDS, "ServiceEntry", "WorkloadEntry"])

type Input = ConfigInput

export const makeFileOrchestratorRegistry = (
  options: Omit<OrchestratorRegistryOptions, "watchNamespace">,
): Effect.Effect<ServiceRegistryShape, never, ConfigStore | MeshWatcher | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const mesh = yield* MeshWatcher
    const core = yield* makeRegistryCore(ORCHESTRATOR_REGISTRY)
    const state = new OrchestratorRegistryState({
      clusterId: options.clusterId,
      domain: options.domain,
      trustDomain: (yield* mesh.config).trustDomain,
      drainingLabel: options.drainingLabel,
      sendUnhealthyEndpoints: options.sendUnhealthyEndpoints,
      selectWorkloadEntries: options.selectWorkloadEntries,
      selectPods: options.selectPods ?? true,
      systemNamespace: options.systemNamespace ?? SYSTEM_NAMESPACE,
    })
    const feed = new ConfigFeed()
    // Events queued before the first publish may be older than the snapshot it used.
    let applied = -1
    const inbox = yield* Queue.unbounded<Input>()

    const publish = Effect.fn("FileOrchestratorRegistry.publish")(function* (inputs: ReadonlyArray<Input>) {
      // Only the latest snapshot matters: the feed diffs against what it last handed on.
      let latest: ConfigSnapshot | undefined
      for (const input of inputs) if (input._tag === "config") latest = input.snapshot
      for (const input of inputs) if (input._tag === "trustDomain") state.setTrustDomain(input.trustDomain)
      if (latest !== undefined && latest.version > applied) {
        applied = latest.version
        const events = feed.next(latest)
        state.applyNamespaces(events.namespaces)
        state.applyPods(events.pods)
        state.applyServices(events.services)
        state.applyEndpointSlices(events.slices)
        state.applyEndpoints(events.endpoints)
        state.setConfig(
          latest.list("ServiceEntry") as ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
          latest.list("WorkloadEntry") as ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
        )
      }
      for (const problem of state.takeProblems())
        yield* Effect.logWarning(`orchestrator objects from config files: skipping invalid object: ${problem}`)
      const diff = yield* core.replace(state.snapshot())
      if (diff.servicesAdded.length + diff.servicesUpdated.length + diff.servicesRemoved.length > 0)
        yield* Effect.logDebug(
          `orchestrator objects from config files: +${diff.servicesAdded.length} ~${diff.servicesUpdated.length} -${diff.servicesRemoved.length} services`,
        )
    })

    const run = Effect.gen(function* () {
      const snapshot = yield* forwardConfigInputs(store, mesh, inbox, WATCHED_KINDS)
      yield* store.awaitSynced
      yield* publish([{ _tag: "config", snapshot: yield* store.snapshot }])
      yield* core.markSynced
      const services = (yield* core.registry.services).length
      if (services > 0 || snapshot.list("Service").length > 0)
        yield* Effect.logInfo(`orchestrator objects from config files: ${services} services`)
      return yield* Queue.take(inbox).pipe(
        Effect.flatMap((first) => Effect.flatMap(Queue.takeAll(inbox), (rest) => publish([first, ...rest]))),
        Effect.forever,
      )
    })
    yield* run.pipe(withScope("file"), Effect.forkScoped)
    return core.registry
  })
