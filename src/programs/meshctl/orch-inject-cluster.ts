/**
 * `meshctl orch-inject` against a cluster (loaded only then): the injector ConfigMap's `config`
 * and `values` and the mesh ConfigMap's `mesh`, from the mesh namespace (`-i`), named by
 * `--injectConfigMapName`/`--meshConfigMapName` or by the revision. Each ConfigMap is read once;
 * a missing ConfigMap or key is an error that names it and the server.
 */
import { Data, Effect, Option } from "effect"
import { injectorConfigMapName } from "../../services/injection/webhook-config.js"
import { configMapSourceName, MESH_CONFIG_KEY, meshConfigMapName } from "../../services/mesh-config/configmap.js"
import type { OrchConfigMap } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import type { GlobalOptions } from "./global-options.js"
import { orchestratorClient } from "./orchestrator-access.js"

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
}

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
    return {
      config: request.need.config ? yield* entry(injectorName, "config", "--injectConfigFile") : undefined,
      values: request.need.values ? yield* entry(injectorName, "values", "--valuesFile") : undefined,
      mesh: request.need.mesh ? yield* entry(meshName, MESH_CONFIG_KEY, "--meshConfigFile") : undefined,
    }
  }).pipe(Effect.scoped)
