/**
 * The orchestrator objects the gateway deployment controller reads: the Gateway-API Gateways
 * and GatewayClasses through the config store's own informers (same resource, version and
 * namespace, so shared rather than copied), and the Deployments and Services it deploys. Used by
 * the controller (deployment-controller.ts) and by the status writer, which folds the
 * deployments' readiness into the Gateways' status.
 */
import { Effect, Queue, type Scope } from "effect"
import type { WatchedKind } from "../../services/config-store/watched-kinds.js"
import type { Observed } from "../../services/gateway-api/deployment/deployed.js"
import type { ObservedDeployment } from "../../services/gateway-api/deployment/readiness.js"
import { GATEWAY_API_GROUP } from "../../services/gateway-api/model.js"
import type { InformerShape, InformersShape } from "../../services/orchestrator/informer.js"
import type { OrchObject, OrchService } from "../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"

export const DeploymentResource: ResourceRef = {
  group: "apps",
  version: "v1",
  plural: "deployments",
  kind: "Deployment",
  namespaced: true,
}

export const ServiceAccountResource: ResourceRef = {
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
}

const namespaced = (namespace: string) => (namespace === "" ? {} : { namespace })

/** Every change of any of `informers` wakes `dirty` (a sliding queue of one). */
export const followInto = (
  dirty: Queue.Enqueue<void>,
  informers: ReadonlyArray<{
    readonly subscribe: Effect.Effect<{ readonly batches: Queue.Dequeue<unknown> }, never, Scope.Scope>
  }>,
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.forEach(
    informers,
    (informer) =>
      Effect.gen(function* () {
        const { batches } = yield* informer.subscribe
        yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(batches), Queue.offer(dirty, undefined))))
      }),
    { discard: true },
  )

export interface DeployedObjects {
  readonly deployments: InformerShape<ObservedDeployment>
  readonly services: InformerShape<OrchService>
  readonly observed: Observed
}

/** The Deployments and Services informers (in `watchNamespace`, "" = all) and lookups on them. */
export const deployedObjects = (informers: InformersShape, watchNamespace: string): Effect.Effect<DeployedObjects> =>
  Effect.gen(function* () {
    const deployments = yield* informers.informer<ObservedDeployment>(DeploymentResource, namespaced(watchNamespace))
    // The same options as the service registry's informer, so that it is shared.
    const services = yield* informers.informer<OrchService>(Resources.services, namespaced(watchNamespace))
    return {
      deployments,
      services,
      observed: {
        deployment: (namespace, name) => deployments.get(namespace, name),
        service: (namespace, name) => services.get(namespace, name),
      },
    }
  })

/**
 * The config store's informer of a Gateway-API kind (`Gateway`, `GatewayClass`) when the store
 * watches it; undefined otherwise (no CRD installed).
 */
export const gatewayApiInformer = <T extends OrchObject>(
  informers: InformersShape,
  watched: ReadonlyArray<WatchedKind>,
  kind: "Gateway" | "GatewayClass",
  watchNamespace: string,
): Effect.Effect<InformerShape<T> | undefined> => {
  const w = watched.find((k) => k.group === GATEWAY_API_GROUP && k.kind === kind)
  if (w === undefined) return Effect.sync(() => undefined)
  const ref: ResourceRef = {
    group: w.group,
    version: w.version,
    plural: kind === "Gateway" ? "gateways" : "gatewayclasses",
    kind,
    namespaced: kind === "Gateway",
  }
  return informers.informer<T>(ref, kind === "Gateway" ? namespaced(watchNamespace) : {})
}
