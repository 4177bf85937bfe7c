/**
 * The CA's `PodLocator` on the orchestrator: answers node authorization
 * (`CA_TRUSTED_NODE_ACCOUNTS`) from the shared Pod informer — the caller's pod by name (checked
 * against the token's pod uid and service account), and a node → service-account index kept
 * current from the informer's batches.
 */
import { Duration, Effect, Option, Queue } from "effect"
import type { PodLocator } from "../../../services/ca/identity.js"
import { PodNodeIndex } from "../../../services/ca/pod-node-index.js"
import { Informers } from "../../../services/orchestrator/informer.js"
import type { OrchPod } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"

export interface PodLocatorOptions {
  /** `MESH_WATCH_NAMESPACE`: only pods of this namespace are known; "" or absent = every namespace. */
  readonly namespace?: string
  /** How long a question waits for the first list of pods before answering from what is known. Default 5 s. */
  readonly syncTimeout?: Duration.Duration
}

/** A PodLocator backed by the Pod informer; the index follows the informer for the scope's lifetime. */
export const makePodLocator = (options: PodLocatorOptions = {}) =>
  Effect.gen(function* () {
    const informers = yield* Informers
    const pods = yield* informers.informer<OrchPod>(
      Resources.pods,
      options.namespace !== undefined && options.namespace !== "" ? { namespace: options.namespace } : {},
    )
    const index = new PodNodeIndex()
    const { objects, batches } = yield* pods.subscribe
    for (const pod of objects) index.add(pod)
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.map(Queue.take(batches), (batch) => {
          for (const e of batch.events) index.apply(e.type, e.object, e.previous)
        }),
      ),
    )
    // Before the first list nothing is known and every impersonation would be refused: wait a
    // little for it (the agent retries anyway), then answer.
    const ready = Effect.ignore(Effect.timeout(pods.synced, options.syncTimeout ?? Duration.seconds(5)))
    const locator: PodLocator = {
      nodeOfPod: (namespace, podName, expected) =>
        Effect.map(ready, () => {
          const pod = pods.get(namespace, podName)
          if (pod === undefined) return Option.none()
          if (expected?.uid !== undefined && pod.metadata.uid !== expected.uid) return Option.none()
          if (expected?.serviceAccount !== undefined && pod.spec?.serviceAccountName !== expected.serviceAccount) {
            return Option.none()
          }
          const node = pod.spec?.nodeName
          return node === undefined || node === "" ? Option.none() : Option.some(node)
        }),
      hasPodOnNode: (nodeName, namespace, serviceAccount) =>
        Effect.map(ready, () => index.has(nodeName, namespace, serviceAccount)),
    }
    return locator
  })
