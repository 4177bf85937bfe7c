/**
 * The mesh's orchestrator client and informers for a started test API server, as a layer.
 */
import { Layer } from "effect"
import { layer as clientLayer } from "../../../src/layers/orchestrator/client.js"
import { type InformerSettings, layerWith as informersLayerWith } from "../../../src/layers/orchestrator/informer.js"
import type { OrchestratorClient } from "../../../src/services/orchestrator/client.js"
import type { Informers } from "../../../src/services/orchestrator/informer.js"
import type { Orchestrator } from "./index.js"

export interface OrchestratorLayerOptions {
  readonly clusterId?: string
  /** Default: no throttling. */
  readonly qps?: number
  readonly burst?: number
  /** Default: fast retries (50 ms up to 1 s) so tests of failures finish quickly. */
  readonly informers?: InformerSettings
}

export const orchestratorLayer = (
  server: Orchestrator,
  options: OrchestratorLayerOptions = {},
): Layer.Layer<OrchestratorClient | Informers> => {
  const client = clientLayer({
    source: { _tag: "file", path: server.kubeconfig() },
    clusterId: options.clusterId ?? "Orchestrator",
    qps: options.qps ?? 0,
    burst: options.burst ?? 0,
  }).pipe(Layer.orDie)
  const informers = informersLayerWith(options.informers ?? { minBackoff: "50 millis", maxBackoff: "1 second" })
  return Layer.provideMerge(informers, client)
}
