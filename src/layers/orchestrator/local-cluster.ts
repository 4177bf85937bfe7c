/**
 * The LocalCluster of mesh-discovery: `--orchconfig` (with `--context`), else in-cluster
 * credentials when `ORCHESTRATOR_SERVICE_HOST` is set, else none. Requests are throttled per
 * `--orchestratorApiQPS` / `--orchestratorApiBurst`.
 */
import { type Context, Effect, Layer, Option } from "effect"
import { withScope } from "../../services/logging/logging.js"
import { LocalCluster, noCluster } from "../../services/orchestrator/local-cluster.js"
import { makeOrchestratorClient, type OrchestratorConfigError, type OrchestratorSource } from "./client.js"
import { makeInformers } from "./informer.js"

export interface LocalClusterOptions {
  /** Whether `--registries` includes Orchestrator. */
  readonly enabled: boolean
  /** `--orchconfig` ("" = none). */
  readonly orchconfig: string
  /** `ORCHESTRATOR_SERVICE_HOST` ("" = not in a cluster). */
  readonly serviceHost: string
  /** `ORCHESTRATOR_SERVICE_PORT`; default 443. */
  readonly servicePort?: string
  readonly clusterId: string
  readonly qps: number
  readonly burst: number
}

export const localClusterSource = (options: LocalClusterOptions): OrchestratorSource | undefined => {
  if (!options.enabled) return undefined
  if (options.orchconfig !== "") return { _tag: "file", path: options.orchconfig }
  if (options.serviceHost !== "")
    return { _tag: "inCluster", host: options.serviceHost, port: options.servicePort || "443" }
  return undefined
}

export const layer = (options: LocalClusterOptions): Layer.Layer<LocalCluster, OrchestratorConfigError> =>
  Layer.scoped(
    LocalCluster,
    Effect.gen(function* () {
      const source = localClusterSource(options)
      if (source === undefined) return noCluster
      const client = yield* makeOrchestratorClient({
        source,
        clusterId: options.clusterId,
        qps: options.qps,
        burst: options.burst,
      })
      const informers = yield* makeInformers(client)
      yield* Effect.logInfo(`orchestrator ${client.server} (cluster ${options.clusterId})`).pipe(withScope("kube"))
      return Option.some({ client, informers })
    }),
  )

/** A fixed LocalCluster (tests and embedders). */
export const layerValue = (cluster: Context.Tag.Service<LocalCluster>): Layer.Layer<LocalCluster> =>
  Layer.succeed(LocalCluster, cluster)
