/**
 * Layers whose implementation depends on whether mesh-discovery has a LocalCluster: the
 * orchestrator variant when it does, the standalone one otherwise.
 */
import { Effect, Layer, Option } from "effect"
import * as Authority from "../../layers/ca/authority.js"
import { layerAuthority as cacertsAuthority } from "../../layers/ca/orchestrator/cacerts-secret.js"
import { layerWith as autoRegistration } from "../../layers/registry/autoregistration.js"
import { ControllersConfig } from "../../services/config/discovery-config.js"
import { LocalCluster, layerAccess } from "../../services/orchestrator/local-cluster.js"
import { layerNone as noProxyConnections } from "../../services/registry/autoregistration/proxy-connections.js"

/** The CA's keys: on the orchestrator also from the `cacerts` Secret (plugged, or the shared self-signed root). */
export const layerAuthority = Layer.unwrapEffect(
  Effect.map(LocalCluster, (local) =>
    Option.isSome(local) ? cacertsAuthority.pipe(Layer.provide(layerAccess(local.value))) : Authority.layer,
  ),
)

/** WorkloadEntry auto-registration follows proxy connections on the orchestrator; nobody does without one. */
export const layerProxyConnections = Layer.unwrapEffect(
  Effect.gen(function* () {
    const local = yield* LocalCluster
    const config = yield* ControllersConfig
    return Option.isSome(local) && config.PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION
      ? autoRegistration({
          autoRegistration: config.PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION,
          healthChecks: config.PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS,
          gracePeriod: config.PILOT_WORKLOAD_ENTRY_GRACE_PERIOD,
          instanceId: config.POD_NAME,
        }).pipe(Layer.provide(layerAccess(local.value)))
      : noProxyConnections
  }),
)
