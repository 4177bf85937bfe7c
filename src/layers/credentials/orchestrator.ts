/**
 * The cluster's credentials from its Secrets: one informer over every namespace (or
 * `MESH_WATCH_NAMESPACE`), each batch of changes giving the whole set of Secrets that hold TLS
 * material (services/credentials). Only Secrets that hold a credential are kept, so the push
 * pipeline's snapshot does not grow with the cluster's unrelated Secrets, and a change to one of
 * those leaves the set (and the pushes) as they were.
 */
import { Effect, Layer, Stream } from "effect"
import {
  type Credential,
  CredentialSource,
  credentialOfSecret,
  type SecretObject,
} from "../../services/credentials/credential.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

type Secret = OrchObject & SecretObject

const sameCredentials = (a: ReadonlyArray<Credential>, b: ReadonlyArray<Credential>): boolean =>
  a.length === b.length && JSON.stringify(a) === JSON.stringify(b)

export const layerOrchestrator = (options: { readonly watchNamespace?: string } = {}) =>
  Layer.effect(
    CredentialSource,
    Effect.gen(function* () {
      const informers = yield* Informers
      const namespace =
        options.watchNamespace !== undefined && options.watchNamespace !== "" ? options.watchNamespace : undefined
      const informer = yield* informers.informer<Secret>(
        Resources.secrets,
        namespace === undefined ? {} : { namespace },
      )
      const snapshot = (): ReadonlyArray<Credential> =>
        informer
          .list()
          .flatMap((secret) => {
            const credential = credentialOfSecret(secret)
            return credential === undefined ? [] : [credential]
          })
          .sort((a, b) =>
            a.namespace === b.namespace ? (a.name < b.name ? -1 : 1) : a.namespace < b.namespace ? -1 : 1,
          )
      return {
        changes: Stream.unwrapScoped(
          Effect.gen(function* () {
            // Not waiting for the first list: a push pipeline held up by Secrets would hold up
            // every proxy; gateways wait for their credentials anyway (SDS never times out).
            const { batches } = yield* informer.subscribe
            return Stream.concat(
              Stream.sync(snapshot),
              Stream.fromQueue(batches).pipe(Stream.map(() => snapshot())),
            ).pipe(Stream.changesWith(sameCredentials))
          }),
        ),
      }
    }),
  )

/** No orchestrator: no credentials. */
export const layerNone = Layer.succeed(CredentialSource, { changes: Stream.succeed([]) })
