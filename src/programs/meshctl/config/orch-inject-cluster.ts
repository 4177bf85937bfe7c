/**
 * `meshctl orch-inject` against a cluster (loaded only then): the injector ConfigMap's `config`
 * and `values` and the mesh ConfigMap's `mesh`, from the mesh namespace (`-i`), named by
 * `--injectConfigMapName`/`--meshConfigMapName` or by the revision. Each ConfigMap is read once;
 * a missing ConfigMap or key is an error that names it and the server.
 */
import { Data, Effect, Option } from "effect"
import { nodeKubeletVersion } from "../../../services/injection/native-sidecars.js"
import { injectorConfigMapName } from "../../../services/injection/webhook-config.js"
import { configMapSourceName, MESH_CONFIG_KEY, meshConfigMapName } from "../../../services/mesh-config/configmap.js"
import type { OrchConfigMap, OrchObject } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import type { GlobalOptions } from "../global-options.js"
import { orchestratorClient } from "../orchestrator-access.js"

export class InjectionSourceError extends Data.TaggedError("InjectionSourceError")<{ readonly message: string }> {}

/** A text and the name it is reported under. */
export interface NamedText {
  readonly name: string
  readonly text: string
}

export interface InjectionSourceRequest {
  readonly global: GlobalOptions
  readonly revision: string
  readonly injectConfigMapName: Option.Option<string>
  readonly meshConfigMapName: Option.Option<string>
  /** The inputs without a file, to read from the cluster. */
  readonly need: { readonly config: boolean; readonly values: boolean; readonly mesh: boolean }
  /** Whether to read the nodes' kubelet versions (`ENABLE_NATIVE_SIDECARS=auto`). */
  readonly nodes: boolean
}

/** The nodes' kubelet versions by name, or why they could not be listed. */
export type NodeVersionList =
  | { readonly _tag: "Listed"; readonly versions: ReadonlyMap<string, string> }
  | { readonly _tag: "Unavailable"; readonly reason: string }

/** Pages of this many nodes; at most NODE_PAGES of them (a million nodes) are read. */
const NODE_PAGE = 500
const NODE_PAGES = 2000

export const readInjectionSources = (request: InjectionSourceRequest) =>
  Effect.gen(function* () {
    const client = yield* orchestratorClient(request.global).pipe(
      Effect.mapError((e) => new InjectionSourceError({ message: e.message })),
    )
    const namespace = request.global.meshNamespace
    const injectorName = Option.getOrElse(request.injectConfigMapName, () => injectorConfigMapName(request.revision))
    const meshName = Option.getOrElse(request.meshConfigMapName, () => meshConfigMapName(request.revision))
    const fetched = new Map<string, Option.Option<OrchConfigMap>>()
    const configMap = (name: string) =>
      fetched.has(name)
        ? Effect.succeed(fetched.get(name) ?? Option.none())
        : client.get<OrchConfigMap>(Resources.configMaps, namespace, name).pipe(
            Effect.map(Option.some),
            Effect.catchIf(
              (e) => e.notFound,
              () => Effect.succeedNone,
            ),
            Effect.mapError(
              (e) =>
                new InjectionSourceError({
                  message: `cannot read ConfigMap ${namespace}/${name} from ${client.server}: ${e.message}`,
                }),
            ),
            Effect.tap((found) => Effect.sync(() => fetched.set(name, found))),
          )
    const entry = (name: string, key: string, flag: string) =>
      Effect.flatMap(configMap(name), (maybe) => {
        const found = Option.getOrUndefined(maybe)
        const text = found?.data?.[key]
        if (found === undefined)
          return new InjectionSourceError({
            message: `ConfigMap ${namespace}/${name} not found on ${client.server} (give ${flag}, or install the mesh there)`,
          })
        if (text === undefined)
          return new InjectionSourceError({
            message: `ConfigMap ${namespace}/${name} on ${client.server} has no key "${key}"`,
          })
        return Effect.succeed<NamedText>({ name: configMapSourceName(namespace, name, key), text })
      })
    const listNodes = Effect.gen(function* () {
      const versions = new Map<string, string>()
      let next: string | undefined
      let pages = 0
      do {
        const page = yield* client.list<OrchObject>(Resources.nodes, {
          limit: NODE_PAGE,
          ...(next !== undefined ? { continue: next } : {}),
        })
        for (const node of page.items) versions.set(node.metadata.name, nodeKubeletVersion(node))
        next = page.continue
        pages += 1
      } while (next !== undefined && next !== "" && pages < NODE_PAGES)
      return { _tag: "Listed", versions } as NodeVersionList
    }).pipe(
      Effect.catchAll((e) =>
        Effect.succeed<NodeVersionList>({
          _tag: "Unavailable",
          reason: `cannot list nodes on ${client.server}: ${e.message}`,
        }),
      ),
    )
    return {
      nodes: request.nodes ? yield* listNodes : undefined,
      config: request.need.config ? yield* entry(injectorName, "config", "--injectConfigFile") : undefined,
      values: request.need.values ? yield* entry(injectorName, "values", "--valuesFile") : undefined,
      mesh: request.need.mesh ? yield* entry(meshName, MESH_CONFIG_KEY, "--meshConfigFile") : undefined,
    }
  }).pipe(Effect.scoped)
