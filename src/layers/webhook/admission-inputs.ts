/**
 * What the `/inject` handler reads on each request, kept current in the background so that the
 * request path only reads memory: the injector's config and values (injector-source.ts), the
 * mesh config (MeshWatcher), namespace labels (the orchestrator's shared Namespace informer; none
 * without an orchestrator), `REVISION`, and `ENABLE_NATIVE_SIDECARS` with, for `auto`, the
 * kubelet versions of the orchestrator's nodes (the shared Node informer).
 */
import { Effect, Option, type Scope, Stream } from "effect"
import type { AdmissionInputs } from "../../services/injection/admission.js"
import type { Json } from "../../services/injection/contract.js"
import {
  type NodeVersions,
  nativeSidecarDefault,
  nodeKubeletVersion,
  parseNativeSidecarMode,
} from "../../services/injection/native-sidecars.js"
import { InjectionWebhookConfig } from "../../services/injection/webhook-config.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { Informers } from "../../services/orchestrator/informer.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import { makeInjectorSource } from "../injection/injector-source.js"

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({})

/** Labels of a namespace from the informer's cache (empty until it has listed, or for an unknown namespace). */
const namespaceLabelLookup = Effect.gen(function* () {
  const informers = yield* Informers
  const namespaces = yield* informers.informer<OrchObject>(Resources.namespaces)
  return (name: string): Readonly<Record<string, string>> =>
    namespaces.get(undefined, name)?.metadata.labels ?? NO_LABELS
})

/** Kubelet versions from the informer's cache of Nodes (none until it has listed). */
const nodeVersionLookup = Effect.gen(function* () {
  const informers = yield* Informers
  const nodes = yield* informers.informer<OrchObject>(Resources.nodes)
  return {
    version: (name: string) => {
      const node = nodes.get(undefined, name)
      return node === undefined ? undefined : nodeKubeletVersion(node)
    },
    all: () => nodes.list().map(nodeKubeletVersion),
  } satisfies NodeVersions
})

/** Builds the inputs; their sources live (and are followed) in the scope. */
export const makeAdmissionInputs: Effect.Effect<
  () => AdmissionInputs,
  never,
  InjectionWebhookConfig | MeshWatcher | LocalCluster | Scope.Scope
> = Effect.gen(function* () {
  const config = yield* InjectionWebhookConfig
  const cluster = yield* LocalCluster
  const mesh = yield* MeshWatcher
  const source = yield* makeInjectorSource({
    injectDir: config.injectDir,
    namespace: config.namespace,
    revision: config.REVISION,
  })
  // The injector reads the mesh config as plain JSON, which MeshConfig is.
  let meshConfig = (yield* mesh.config) as unknown as Json
  yield* Effect.forkScoped(
    Stream.runForEach(mesh.configChanges, (next) =>
      Effect.sync(() => {
        meshConfig = next as unknown as Json
      }),
    ),
  )
  const namespaceLabels = Option.isSome(cluster)
    ? yield* namespaceLabelLookup.pipe(withCluster(cluster.value))
    : () => NO_LABELS
  const revision = config.REVISION
  const native = parseNativeSidecarMode(config.ENABLE_NATIVE_SIDECARS)
  if (native.warning !== undefined) yield* Effect.logWarning(native.warning)
  const nodes =
    native.mode === "auto" && Option.isSome(cluster)
      ? yield* nodeVersionLookup.pipe(withCluster(cluster.value))
      : undefined
  const nativeSidecars = (nodeName: string) => nativeSidecarDefault(native.mode, nodes, nodeName)
  return () => {
    const settings = source.current()
    return {
      config: settings.config,
      values: settings.values,
      meshConfig,
      revision,
      nativeSidecars,
      compliancePolicy: config.COMPLIANCE_POLICY,
      namespaceLabels,
    }
  }
})
