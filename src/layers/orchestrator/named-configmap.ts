/**
 * One named ConfigMap followed through its own informer (a field selector on its name): its
 * state once the first list is in, and the batches after it. A first list slower than 10 s is
 * warned about once, naming what waits for it. Shared by the mesh-config and injector sources.
 */
import { Effect, Fiber, type Queue, type Scope } from "effect"
import { type InformerBatch, Informers } from "../../services/orchestrator/informer.js"
import type { OrchConfigMap } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

const SYNC_WARNING_AFTER = "10 seconds"

export interface NamedConfigMap {
  /** The ConfigMap as first listed; undefined when it does not exist. */
  readonly initial: OrchConfigMap | undefined
  readonly batches: Queue.Dequeue<InformerBatch<OrchConfigMap>>
  /** The ConfigMap after a batch, from what it was before. */
  readonly next: (current: OrchConfigMap | undefined, batch: InformerBatch<OrchConfigMap>) => OrchConfigMap | undefined
}

export const followNamedConfigMap = (
  namespace: string,
  name: string,
  purpose: string,
): Effect.Effect<NamedConfigMap, never, Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const informers = yield* Informers
    const informer = yield* informers.informer<OrchConfigMap>(Resources.configMaps, {
      namespace,
      fieldSelector: `metadata.name=${name}`,
    })
    const warn = yield* Effect.forkScoped(
      Effect.sleep(SYNC_WARNING_AFTER).pipe(
        Effect.zipRight(
          Effect.logWarning(`still waiting for the first list of ConfigMap ${namespace}/${name} (${purpose})`),
        ),
      ),
    )
    yield* informer.synced
    yield* Fiber.interrupt(warn)
    const { objects, batches } = yield* informer.subscribe
    // The field selector already narrows the list to this name; checking again costs nothing.
    const ours = (cm: OrchConfigMap) => cm.metadata.name === name && (cm.metadata.namespace ?? namespace) === namespace
    return {
      initial: objects.find(ours),
      batches,
      next: (current, batch) => {
        let after = current
        for (const event of batch.events)
          if (ours(event.object)) after = event.type === "deleted" ? undefined : event.object
        return after
      },
    }
  })
