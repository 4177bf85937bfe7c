/**
 * The cluster's credentials from its Secrets and ConfigMaps: one informer of each over every
 * namespace (or `MESH_WATCH_NAMESPACE`), each batch of changes giving the whole set of Secrets
 * that hold TLS material and ConfigMaps that hold a CA bundle (services/credentials; the
 * ConfigMaps are what BackendTLSPolicy `caCertificateRefs` name). Only objects that hold a
 * credential are kept, so the push pipeline's snapshot does not grow with the cluster's unrelated
 * Secrets and ConfigMaps, and a change to one of those leaves the set (and the pushes) as they were.
 */
import { Effect, Layer, Stream } from "effect"
import {
  type ConfigMapObject,
  type Credential,
  CredentialSource,
  credentialOfConfigMap,
  credentialOfSecret,
  type SecretObject,
} from "../../services/credentials/credential.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

type Secret = OrchObject & SecretObject
type ConfigMap = OrchObject & ConfigMapObject

const held = <A>(objects: ReadonlyArray<A>, credentialOf: (a: A) => Credential | undefined) =>
  objects.flatMap((o) => {
    const credential = credentialOf(o)
    return credential === undefined ? [] : [credential]
  })

/** Secrets before ConfigMaps of the same name (the generator keys them apart), then by namespace and name. */
const order = (c: Credential): string => `${c.namespace}\u0000${c.name}\u0000${c.source ?? ""}`

const sameCredentials = (a: ReadonlyArray<Credential>, b: ReadonlyArray<Credential>): boolean =>
  a.length === b.length && JSON.stringify(a) === JSON.stringify(b)

export const layerOrchestrator = (options: { readonly watchNamespace?: string } = {}) =>
  Layer.effect(
    CredentialSource,
    Effect.gen(function* () {
      const informers = yield* Informers
      const namespace =
        options.watchNamespace !== undefined && options.watchNamespace !== "" ? options.watchNamespace : undefined
      const scope = namespace === undefined ? {} : { namespace }
      const secrets = yield* informers.informer<Secret>(Resources.secrets, scope)
      const configMaps = yield* informers.informer<ConfigMap>(Resources.configMaps, scope)
      const snapshot = (): ReadonlyArray<Credential> =>
        [...held(secrets.list(), credentialOfSecret), ...held(configMaps.list(), credentialOfConfigMap)]
          .map((c) => [order(c), c] as const)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([, c]) => c)
      return {
        changes: Stream.unwrapScoped(
          Effect.gen(function* () {
            // Not waiting for the first list: a push pipeline held up by Secrets would hold up
            // every proxy; gateways wait for their credentials anyway (SDS never times out).
            const secretBatches = (yield* secrets.subscribe).batches
            const configMapBatches = (yield* configMaps.subscribe).batches
            const changed = Stream.merge(Stream.fromQueue(secretBatches), Stream.fromQueue(configMapBatches))
            return Stream.concat(Stream.sync(snapshot), changed.pipe(Stream.map(() => snapshot()))).pipe(
              Stream.changesWith(sameCredentials),
            )
          }),
        ),
      }
    }),
  )

/** No orchestrator: no credentials. */
export const layerNone = Layer.succeed(CredentialSource, { changes: Stream.succeed([]) })
