/**
 * The pods the ambient index reads, from the shared Pod informer (the registry and the CA's pod
 * locator read the same one): the list again after each batch that changed some pod's facts.
 * An unchanged pod keeps its object, so the index's inputs compare cheaply.
 */
import { Effect, Layer, Option, Stream } from "effect"
import { type AmbientPod, AmbientPods, type AmbientSettings, ambientPod } from "../../services/ambient/input.js"
import { deepEqual } from "../../services/config-store/snapshot.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchPod } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

const podKey = (pod: { readonly namespace: string; readonly name: string }) => `${pod.namespace}/${pod.name}`

export const layer = (settings: AmbientSettings) =>
  Layer.effect(
    AmbientPods,
    Effect.gen(function* () {
      const informers = yield* Informers
      const informer = yield* informers.informer<OrchPod>(Resources.pods)
      return {
        settings,
        changes: Stream.unwrapScoped(
          Effect.map(informer.subscribe, ({ objects, batches }) => {
            const pods = new Map<string, AmbientPod>()
            const put = (pod: OrchPod) => {
              const facts = ambientPod(pod)
              if (facts === undefined) return false
              const key = podKey(facts)
              const before = pods.get(key)
              if (before !== undefined && deepEqual(before, facts)) return false
              pods.set(key, facts)
              return true
            }
            for (const pod of objects) put(pod)
            const list = (): ReadonlyArray<AmbientPod> =>
              [...pods.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, pod]) => pod)
            const changed = Stream.fromQueue(batches).pipe(
              Stream.filterMap((batch) => {
                let any = false
                for (const event of batch.events) {
                  if (event.type === "deleted") {
                    const facts = ambientPod(event.object)
                    if (facts !== undefined) any = pods.delete(podKey(facts)) || any
                  } else any = put(event.object) || any
                }
                return any ? Option.some(list()) : Option.none()
              }),
            )
            return Stream.concat(Stream.sync(list), changed)
          }),
        ),
      }
    }),
  )
