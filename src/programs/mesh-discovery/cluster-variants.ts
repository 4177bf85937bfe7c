/**
 * Layers whose implementation depends on whether mesh-discovery has a LocalCluster: the
 * orchestrator variant when it does, the standalone one otherwise.
 */
import { Effect, Layer, Option } from "effect"
import * as Authority from "../../layers/ca/authority.js"
import { layerAuthority as cacertsAuthority } from "../../layers/ca/orchestrator/cacerts-secret.js"
import { type AutoRegistrationOptions, layerWith as autoRegistration } from "../../layers/registry/autoregistration.js"
import { LocalCluster, layerAccess } from "../../services/orchestrator/local-cluster.js"
import { layerNone as noProxyConnections } from "../../services/registry/autoregistration/proxy-connections.js"

/** The CA's keys: on the orchestrator also from the `cacerts` Secret (plugged, or the shared self-signed root). */
export const layerAuthority = Layer.unwrapEffect(
  Effect.map(LocalCluster, (local) =>
    Option.isSome(local) ? cacertsAuthority.pipe(Layer.provide(layerAccess(local.value))) : Authority.layer,
  ),
)

/** WorkloadEntry auto-registration follows proxy connections on the orchestrator; nobody does without one. */
export const layerProxyConnections = (options: AutoRegistrationOptions) =>
  Layer.unwrapEffect(
    Effect.map(LocalCluster, (local) =>
      Option.isSome(local) && options.autoRegistration
        ? autoRegistration(options).pipe(Layer.provide(layerAccess(local.value)))
        : noProxyConnections,
    ),
  )
