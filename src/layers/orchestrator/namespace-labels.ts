/**
 * Namespace labels from the orchestrator: the shared Namespace informer (the registry reads the
 * same one), each batch giving the whole map again when some labels changed.
 */
import { Effect, Layer, Stream } from "effect"
import { Informers } from "../../services/orchestrator/informer.js"
import { type NamespaceLabelMap, NamespaceLabels } from "../../services/orchestrator/namespace-labels.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

const sameLabels = (a: NamespaceLabelMap, b: NamespaceLabelMap): boolean =>
  JSON.stringify([...a]) === JSON.stringify([...b])

export const layer = Layer.effect(
  NamespaceLabels,
  Effect.gen(function* () {
    const informers = yield* Informers
    const informer = yield* informers.informer<OrchObject>(Resources.namespaces)
    const snapshot = (): NamespaceLabelMap =>
      new Map(
        informer
          .list()
          .map((ns) => [ns.metadata.name ?? "", { ...(ns.metadata.labels ?? {}) }] as const)
          .filter(([name]) => name !== "")
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      )
    return {
      changes: Stream.unwrapScoped(
        Effect.map(informer.subscribe, ({ batches }) =>
          Stream.concat(Stream.sync(snapshot), Stream.fromQueue(batches).pipe(Stream.map(() => snapshot()))).pipe(
            Stream.changesWith(sameLabels),
          ),
        ),
      ),
    }
  }),
)
