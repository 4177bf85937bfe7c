/**
 * The LocalCluster service: the orchestrator client and informers of the cluster mesh-discovery
 * runs in, when there is one (`--registries Orchestrator` with `--orchconfig` or in-cluster
 * credentials). Subsystems with an orchestrator side (config, mesh config, registry, CA,
 * controllers) take it from here and run without it otherwise.
 */
import { Context, Effect, Layer, Option } from "effect"
import { OrchestratorClient, type OrchestratorClientShape } from "./client.js"
import { Informers, type InformersShape } from "./informer.js"

export interface ClusterAccess {
  readonly client: OrchestratorClientShape
  readonly informers: InformersShape
}

export class LocalCluster extends Context.Tag("mesh/LocalCluster")<LocalCluster, Option.Option<ClusterAccess>>() {}

/** Runs `effect` with the cluster's client and informers provided. */
export const withCluster =
  (cluster: ClusterAccess) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<Exclude<R, OrchestratorClient>, Informers>> =>
    effect.pipe(
      Effect.provideService(OrchestratorClient, cluster.client),
      Effect.provideService(Informers, cluster.informers),
    )

/** No orchestrator. */
export const noCluster: Option.Option<ClusterAccess> = Option.none()

/** The cluster's client and informers as a layer. */
export const layerAccess = (cluster: ClusterAccess): Layer.Layer<OrchestratorClient | Informers> =>
  Layer.merge(Layer.succeed(OrchestratorClient, cluster.client), Layer.succeed(Informers, cluster.informers))
