/**
 * The cluster's Secrets and ConfigMaps for the Gateway-API push view (services/gateway-api/
 * tls-source.ts): the shared informers (the credential source and the status writer read the
 * same ones), the whole set again on each batch once both have synced, nothing (`undefined`,
 * not checked) before. Read cluster-wide only: a listener may reference another namespace's
 * Secret, and under `MESH_WATCH_NAMESPACE` the layer is not provided (only references are
 * checked then, as the status writer does).
 */
import { Effect, Layer, Stream } from "effect"
import type { SecretObject } from "../../services/credentials/credential.js"
import type { TlsObjects } from "../../services/gateway-api/tls-objects.js"
import { GatewayTlsObjects } from "../../services/gateway-api/tls-source.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

type ConfigMap = OrchObject & { readonly data?: Readonly<Record<string, string>> }

const NO_DATA: Readonly<Record<string, string>> = {}

const keyOf = (o: OrchObject): string => `${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`

export const layer = Layer.effect(
  GatewayTlsObjects,
  Effect.gen(function* () {
    const informers = yield* Informers
    const secrets = yield* informers.informer<OrchObject & SecretObject>(Resources.secrets)
    const configMaps = yield* informers.informer<ConfigMap>(Resources.configMaps)
    // The informers' own objects (and ConfigMap data) are kept: an unchanged one stays the
    // same object, which is what the push view compares.
    const snapshot = (): TlsObjects => ({
      secrets: new Map(secrets.list().map((o) => [keyOf(o), o] as const)),
      configMaps: new Map(configMaps.list().map((o) => [keyOf(o), o.data ?? NO_DATA] as const)),
    })
    return {
      changes: Stream.unwrapScoped(
        Effect.gen(function* () {
          // Subscribed first so that no batch between the sync and the first snapshot is missed.
          const secretBatches = (yield* secrets.subscribe).batches
          const configMapBatches = (yield* configMaps.subscribe).batches
          const changed = Stream.merge(Stream.fromQueue(secretBatches), Stream.fromQueue(configMapBatches))
          const synced = Effect.zipRight(Effect.zip(secrets.synced, configMaps.synced), Effect.sync(snapshot))
          return Stream.concat(
            Stream.succeed<TlsObjects | undefined>(undefined),
            Stream.concat(Stream.fromEffect(synced), changed.pipe(Stream.map(() => snapshot()))),
          )
        }),
      ),
    }
  }),
)
