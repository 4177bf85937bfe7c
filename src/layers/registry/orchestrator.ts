/**
 * The orchestrator registry: Services, EndpointSlices (core Endpoints where the API server does
 * not serve discovery.k8s.io/v1), Pods, Nodes and the system Namespace from the informers, plus
 * the ConfigStore's ServiceEntries and WorkloadEntries for cross-selection, folded into an
 * OrchestratorRegistryState by one fiber and published through a registry core.
 *
 * - Start-up: the Service, Pod, Node and Namespace informers start listing at once; meanwhile
 *   one `limit=1` list decides slices vs Endpoints (404 means Endpoints). Waits until every
 *   informer has listed, then subscribes (so the first objects are complete), publishes once
 *   and marks the registry synced. An API server that is down delays this, never fails it.
 * - Then: every queued batch (informers, config, trust domain) is applied before one snapshot is
 *   published, so a burst of events is one registry change.
 * - Gauges `endpoint_no_pod` and `pilot_endpoint_not_ready` follow every publish.
 */
import { Effect, Layer, Queue, Schedule, type Scope } from "effect"
import type { ConfigResource } from "../../services/config-model/resource.js"
import type { ServiceEntrySpec } from "../../services/config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../services/config-model/schemas/workload-entry.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import { SYSTEM_NAMESPACE } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { type InformerBatch, type InformerShape, Informers } from "../../services/orchestrator/informer.js"
import type {
  OrchEndpointSlice,
  OrchEndpoints,
  OrchNamespace,
  OrchNode,
  OrchObject,
  OrchPod,
  OrchService,
} from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import { makeRegistryCore } from "../../services/registry/core.js"
import { ORCHESTRATOR_REGISTRY } from "../../services/registry/orchestrator/service.js"
import { OrchestratorRegistryState } from "../../services/registry/orchestrator/state.js"
import { ServiceRegistry, type ServiceRegistryShape } from "../../services/registry/registry.js"
import { type ConfigInput, forwardConfigInputs } from "./config-inputs.js"

export interface OrchestratorRegistryOptions {
  /** `--clusterID` / `CLUSTER_ID`. */
  readonly clusterId: string
  /** `--domain`, e.g. `cluster.local`. */
  readonly domain: string
  /** `PILOT_DRAINING_LABEL`; "" disables. */
  readonly drainingLabel: string
  /** `PILOT_SEND_UNHEALTHY_ENDPOINTS`. */
  readonly sendUnhealthyEndpoints: boolean
  /** `PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`. */
  readonly selectWorkloadEntries: boolean
  /** `PILOT_ENABLE_SERVICEENTRY_SELECT_PODS` (default true). */
  readonly selectPods?: boolean
  /** `MESH_WATCH_NAMESPACE`: "" (or unset) watches every namespace. */
  readonly watchNamespace?: string
  /** `--namespace` / `POD_NAMESPACE`: its `topology.mesh.io/network` label is the cluster's network. */
  readonly systemNamespace?: string
}

type Input =
  | { readonly _tag: "services"; readonly batch: InformerBatch<OrchService> }
  | { readonly _tag: "slices"; readonly batch: InformerBatch<OrchEndpointSlice> }
  | { readonly _tag: "endpoints"; readonly batch: InformerBatch<OrchEndpoints> }
  | { readonly _tag: "pods"; readonly batch: InformerBatch<OrchPod> }
  | { readonly _tag: "nodes"; readonly batch: InformerBatch<OrchNode> }
  | { readonly _tag: "namespaces"; readonly batch: InformerBatch<OrchNamespace> }
  | ConfigInput

const CONFIG_KINDS = new Set(["ServiceEntry", "WorkloadEntry"])

const configLists = (snapshot: ConfigSnapshot) =>
  [
    snapshot.list("ServiceEntry") as ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
    snapshot.list("WorkloadEntry") as ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
  ] as const

const apply = (state: OrchestratorRegistryState, input: Input): void => {
  switch (input._tag) {
    case "services":
      state.applyServices(input.batch.events)
      return
    case "slices":
      state.applyEndpointSlices(input.batch.events)
      return
    case "endpoints":
      state.applyEndpoints(input.batch.events)
      return
    case "pods":
      state.applyPods(input.batch.events)
      return
    case "nodes":
      state.applyNodes(input.batch.events)
      return
    case "namespaces":
      state.applyNamespaces(input.batch.events)
      return
    case "config":
      state.setConfig(...configLists(input.snapshot))
      return
    case "trustDomain":
      state.setTrustDomain(input.trustDomain)
      return
  }
}

/** Whether the API server serves EndpointSlices; retried (with backoff) until it answers. */
const servesEndpointSlices = (namespace: string | undefined) =>
  Effect.flatMap(OrchestratorClient, (client) =>
    client.list(Resources.endpointSlices, { ...(namespace !== undefined ? { namespace } : {}), limit: 1 }).pipe(
      Effect.as(true),
      Effect.catchIf(
        (e) => e.status === 404,
        () => Effect.succeed(false),
      ),
      Effect.tapError((e) =>
        Effect.logWarning(
          `orchestrator registry: cannot list endpointslices.discovery.k8s.io/v1 (${e.status} ${e.reason}: ${e.message}); retrying`,
        ),
      ),
      Effect.retry(Schedule.union(Schedule.exponential("200 millis"), Schedule.spaced("30 seconds"))),
      Effect.orDie,
    ),
  )

export const makeOrchestratorRegistry = (
  options: OrchestratorRegistryOptions,
): Effect.Effect<
  ServiceRegistryShape,
  never,
  Informers | OrchestratorClient | ConfigStore | MeshWatcher | Metrics | Scope.Scope
> =>
  Effect.gen(function* () {
    const informers = yield* Informers
    const store = yield* ConfigStore
    const mesh = yield* MeshWatcher
    const metrics = yield* Metrics
    const core = yield* makeRegistryCore(ORCHESTRATOR_REGISTRY)
    const noPodGauge = metrics.gauge("endpoint_no_pod", "Endpoints without an associated pod.")
    const notReadyGauge = metrics.gauge("pilot_endpoint_not_ready", "Endpoint found in unready state")
    const namespace =
      options.watchNamespace !== undefined && options.watchNamespace !== "" ? options.watchNamespace : undefined
    const scoped = namespace !== undefined ? { namespace } : {}
    const systemNamespace = options.systemNamespace ?? SYSTEM_NAMESPACE
    const state = new OrchestratorRegistryState({
      clusterId: options.clusterId,
      domain: options.domain,
      trustDomain: (yield* mesh.config).trustDomain,
      drainingLabel: options.drainingLabel,
      sendUnhealthyEndpoints: options.sendUnhealthyEndpoints,
      selectWorkloadEntries: options.selectWorkloadEntries,
      selectPods: options.selectPods ?? true,
      systemNamespace,
    })
    const inbox = yield* Queue.unbounded<Input>()
    let counted = { noPod: 0, notReady: 0 }
    // A registry that goes away (a remote cluster removed) takes its share with it.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        noPodGauge.inc(-counted.noPod)
        notReadyGauge.inc(-counted.notReady)
      }),
    )

    /** Folds the inputs into the state and publishes the result once. */
    const publish = Effect.fn("OrchestratorRegistry.publish")(function* (inputs: Iterable<Input>) {
      for (const input of inputs) apply(state, input)
      for (const problem of state.takeProblems())
        yield* Effect.logWarning(`orchestrator registry: skipping invalid object: ${problem}`)
      const diff = yield* core.replace(state.snapshot())
      const stats = state.stats
      // Gauges shared with other registries (clusters) and with the xDS side: each writer adds
      // the change of its own share. Not-ready endpoints sent as UNHEALTHY are counted by the
      // xDS side (src/layers/xds/endpoint-gauges.ts); only those left out are counted here.
      noPodGauge.inc(stats.endpointsNoPod - counted.noPod)
      const notReady = options.sendUnhealthyEndpoints ? 0 : stats.endpointsNotReady
      notReadyGauge.inc(notReady - counted.notReady)
      counted = { noPod: stats.endpointsNoPod, notReady }
      yield* Effect.logDebug(
        `orchestrator registry: +${diff.servicesAdded.length} ~${diff.servicesUpdated.length} -${diff.servicesRemoved.length} services, endpoints changed for ${diff.endpointsChanged.length}`,
      )
    })

    /** Subscribes once the informer has listed, so the first objects are the complete list. */
    const follow = <T extends OrchObject>(
      informer: InformerShape<T>,
      wrap: (batch: InformerBatch<T>) => Input,
    ): Effect.Effect<Input, never, Scope.Scope> =>
      Effect.gen(function* () {
        yield* informer.synced
        const { objects, batches } = yield* informer.subscribe
        yield* Queue.take(batches).pipe(
          Effect.flatMap((batch) => Queue.offer(inbox, wrap(batch))),
          Effect.forever,
          Effect.forkScoped,
        )
        return wrap({ events: objects.map((object) => ({ type: "added" as const, object })), relist: true })
      })

    const run = Effect.gen(function* () {
      // The informers that do not depend on the API server's answer start listing at once (a
      // pod list of a large cluster is the longest wait of start-up); only slices-or-Endpoints
      // waits for it.
      const services = yield* informers.informer<OrchService>(Resources.services, scoped)
      const pods = yield* informers.informer<OrchPod>(Resources.pods, scoped)
      const nodes = yield* informers.informer<OrchNode>(Resources.nodes)
      const namespaces = yield* informers.informer<OrchNamespace>(Resources.namespaces, {
        fieldSelector: `metadata.name=${systemNamespace}`,
      })
      const slices = yield* servesEndpointSlices(namespace)
      if (!slices)
        yield* Effect.logInfo(
          "orchestrator registry: the API server does not serve endpointslices.discovery.k8s.io/v1; reading core Endpoints",
        )
      // Nodes before pods: the first publish then finds each pod's node already there.
      const initial = yield* Effect.all(
        [
          follow(services, (batch) => ({ _tag: "services", batch })),
          slices
            ? follow(yield* informers.informer<OrchEndpointSlice>(Resources.endpointSlices, scoped), (batch) => ({
                _tag: "slices",
                batch,
              }))
            : follow(yield* informers.informer<OrchEndpoints>(Resources.endpoints, scoped), (batch) => ({
                _tag: "endpoints",
                batch,
              })),
          follow(nodes, (batch) => ({ _tag: "nodes", batch })),
          follow(pods, (batch) => ({ _tag: "pods", batch })),
          follow(namespaces, (batch) => ({ _tag: "namespaces", batch })),
        ],
        { concurrency: "unbounded" },
      )
      const config = yield* forwardConfigInputs(store, mesh, inbox, CONFIG_KINDS)
      yield* store.awaitSynced
      yield* publish([...initial, { _tag: "config", snapshot: config }])
      yield* core.markSynced
      yield* Effect.logInfo(
        `orchestrator registry synced: ${(yield* core.registry.services).length} services (cluster ${options.clusterId}${namespace !== undefined ? `, namespace ${namespace}` : ""})`,
      )
      // Everything queued meanwhile goes into one publish.
      return yield* Queue.take(inbox).pipe(
        Effect.flatMap((first) => Effect.flatMap(Queue.takeAll(inbox), (rest) => publish([first, ...rest]))),
        Effect.forever,
      )
    })
    yield* run.pipe(withScope("kube"), Effect.forkScoped)
    return core.registry
  })

/** The orchestrator registry alone as the ServiceRegistry. */
export const layer = (
  options: OrchestratorRegistryOptions,
): Layer.Layer<ServiceRegistry, never, Informers | OrchestratorClient | ConfigStore | MeshWatcher | Metrics> =>
  Layer.scoped(ServiceRegistry, makeOrchestratorRegistry(options))
