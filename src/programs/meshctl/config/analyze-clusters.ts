/**
 * The clusters `meshctl analyze` reads: the primary (the global flags' context) with every kind
 * the analyzers use, and the remote clusters of a multi-cluster analysis (`--remote-contexts`,
 * else the primary's remote secrets; services/analysis/remote-clusters.ts) with their service
 * discovery kinds and mesh resources. Listing goes through the orchestrator client, 500 objects
 * a page; a kind the cluster does not serve (CRD not installed) lists as empty.
 */
import { readFileSync } from "node:fs"
import { Data, Duration, Effect } from "effect"
import type { KindInfo } from "../../../services/config-model/kinds.js"
import type { OrchestratorClientShape } from "../../../services/orchestrator/client.js"
import type { GlobalOptions } from "../global-options.js"

/** A cluster could not be reached or listed (exit 1). */
export class ClusterReadFailed extends Data.TaggedError("ClusterReadFailed")<{ readonly message: string }> {}

const fail = (message: string) => new ClusterReadFailed({ message })

interface Ref {
  readonly group: string
  readonly version: string
  readonly plural: string
  readonly kind: string
  readonly namespaced: boolean
}

const modules = () =>
  Effect.promise(() =>
    Promise.all([
      import("../orchestrator-access.js"),
      import("../../../services/orchestrator/resources.js"),
      import("../../../services/config-model/kinds.js"),
      import("../../../layers/orchestrator/client.js"),
    ]),
  )

/** The mesh kinds, as list references. */
const meshRefs = (kinds: ReadonlyArray<KindInfo>, isMesh: (k: KindInfo) => boolean): ReadonlyArray<Ref> =>
  kinds
    .filter(isMesh)
    .map((k) => ({ group: k.group, version: k.version, plural: k.plural, kind: k.kind, namespaced: k.namespaced }))

/** Every object of `refs`, each with its apiVersion and kind (list items carry neither). */
const listAll = (client: OrchestratorClientShape, refs: ReadonlyArray<Ref>, cluster: string) =>
  Effect.forEach(
    refs,
    (ref) =>
      Effect.gen(function* () {
        const items: Array<unknown> = []
        let next: string | undefined
        do {
          const page = yield* client.list(ref, { limit: 500, ...(next !== undefined ? { continue: next } : {}) })
          for (const item of page.items)
            items.push({
              ...(item as object),
              apiVersion: ref.group === "" ? ref.version : `${ref.group}/${ref.version}`,
              kind: ref.kind,
            })
          next = page.continue
        } while (next !== undefined && next !== "")
        return items
      }).pipe(
        Effect.catchAll((error) =>
          (error as { status?: number }).status === 404
            ? Effect.succeed([] as Array<unknown>)
            : Effect.fail(
                fail(
                  `cannot list ${ref.kind}${cluster === "" ? "" : ` in cluster ${cluster}`}: ${(error as { message?: string }).message ?? String(error)}`,
                ),
              ),
        ),
      ),
    { concurrency: 8 },
  ).pipe(Effect.map((lists) => lists.flat()))

/** The primary cluster's objects the analyzers read. */
export const listPrimary = (global: GlobalOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const [{ orchestratorClient }, { Resources }, { allKinds, isMeshKind }] = yield* modules()
      const client = yield* orchestratorClient(global).pipe(Effect.mapError((e) => fail(e.message)))
      return yield* listAll(
        client,
        [
          Resources.services,
          Resources.pods,
          Resources.namespaces,
          Resources.nodes,
          // The analyzers of the injector and webhooks, Gateway credentials, remote clusters and CRD versions.
          Resources.configMaps,
          Resources.secrets,
          Resources.mutatingWebhookConfigurations,
          Resources.validatingWebhookConfigurations,
          {
            group: "apiextensions.k8s.io",
            version: "v1",
            plural: "customresourcedefinitions",
            kind: "CustomResourceDefinition",
            namespaced: false,
          },
          { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true },
          ...meshRefs(allKinds(), isMeshKind),
        ],
        "",
      )
    }),
  )

/** Where a remote cluster is reached: a context of the kubeconfig, or a remote secret's kubeconfig. */
export type RemoteSource =
  | { readonly _tag: "context"; readonly context: string }
  | { readonly _tag: "secret"; readonly clusterId: string; readonly source: string; readonly kubeconfig: string }

/** A remote cluster's objects: its service discovery kinds (Deployments, ConfigMaps and webhooks left out, as the reference does) and mesh resources. */
export const listRemote = (global: GlobalOptions, remote: RemoteSource) =>
  Effect.scoped(
    Effect.gen(function* () {
      const [{ orchestratorClient }, { Resources }, { allKinds, isMeshKind }, { makeOrchestratorClient }] =
        yield* modules()
      const cluster = remote._tag === "context" ? remote.context : remote.clusterId
      const client =
        remote._tag === "context"
          ? yield* orchestratorClient({ ...global, context: remote.context }).pipe(
              Effect.mapError((e) => fail(`remote context ${remote.context}: ${e.message}`)),
            )
          : yield* makeOrchestratorClient({
              source: { _tag: "text", name: remote.source, yaml: remote.kubeconfig },
              clusterId: remote.clusterId,
              qps: 0,
              burst: 0,
              requestTimeoutMillis: Duration.toMillis(global.orchclientTimeout),
            }).pipe(Effect.mapError((e) => fail(`remote cluster ${remote.clusterId}: ${e.message}`)))
      const objects = yield* listAll(
        client,
        [
          Resources.services,
          Resources.pods,
          Resources.namespaces,
          Resources.nodes,
          Resources.secrets,
          ...meshRefs(allKinds(), isMeshKind),
        ],
        cluster,
      )
      return { cluster, objects }
    }),
  )

/** The kubeconfig's text (for its context names), or a failure naming where it was looked for. */
export const readKubeconfig = (global: GlobalOptions) =>
  Effect.gen(function* () {
    const { kubeconfigSource } = yield* Effect.promise(() => import("../orchestrator-source.js"))
    const source = yield* kubeconfigSource(global)
    if (source === undefined)
      return yield* fail("--remote-contexts: no orchestrator configuration to read contexts from")
    return yield* Effect.try({
      try: () => readFileSync(source.path, "utf8"),
      catch: (e) => fail(`cannot read ${source.path} (from ${source.from}): ${String(e)}`),
    })
  })
