/**
 * The race repair controller: follows the pods of this node through an informer (field selector
 * `spec.nodeName=<node>`; every node runs its own, so there is no leader election) and labels or
 * deletes each pod the CNI plugin missed, as src/services/cni/repair-decision.ts decides.
 * Counted in `mesh_cni_repair_pods_repaired_total{type,result}`.
 */
import { Effect, Queue, Schedule } from "effect"
import {
  REPAIR_METRIC,
  type RepairPod,
  type RepairSettings,
  repairActionFor,
  repairSelectors,
} from "../../services/cni/repair-decision.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient, type OrchestratorError } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { Resources, resourcePath } from "../../services/orchestrator/resources.js"

type Pod = RepairPod & OrchObject

/** A failed request is tried again a few times (a conflict or a blip), then left to the pod's next change. */
const retryPolicy = Schedule.exponential("100 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

export const runRepairController = (settings: RepairSettings) =>
  Effect.gen(function* () {
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const metrics = yield* Metrics
    const repaired = metrics.counter(REPAIR_METRIC, "Total number of pods repaired by repair controller", [
      "type",
      "result",
    ])
    const selectors = repairSelectors(settings)
    const pods = yield* informers.informer<Pod>(Resources.pods, {
      ...(selectors.fieldSelector !== "" ? { fieldSelector: selectors.fieldSelector } : {}),
      ...(selectors.labelSelector !== "" ? { labelSelector: selectors.labelSelector } : {}),
    })
    const nameOf = (pod: Pod) => `${pod.metadata.namespace ?? ""}/${pod.metadata.name}`

    const outcome =
      (type: "delete" | "label", what: string, pod: Pod) => (effect: Effect.Effect<unknown, OrchestratorError>) =>
        effect.pipe(
          Effect.retry(retryPolicy.pipe(Schedule.whileInput((e: OrchestratorError) => !e.notFound))),
          Effect.matchEffect({
            onSuccess: () =>
              Effect.zipRight(
                Effect.sync(() => repaired.inc({ type, result: "success" })),
                Effect.logInfo(`pod ${nameOf(pod)} detected as broken by the CNI race: ${what}`),
              ),
            onFailure: (error) =>
              Effect.zipRight(
                Effect.sync(() => repaired.inc({ type, result: "fail" })),
                // Gone (or changed, for a delete with preconditions) in the meantime: nothing left to repair.
                error.notFound || error.conflict
                  ? Effect.logInfo(`pod ${nameOf(pod)} changed before it could be repaired (${error.reason})`)
                  : Effect.logError(
                      `pod ${nameOf(pod)} detected as broken, but could not be repaired: ${error.message}`,
                    ),
              ),
          }),
        )

    const reconcile = (pod: Pod) => {
      const action = repairActionFor(pod, settings)
      const namespace = pod.metadata.namespace ?? ""
      switch (action._tag) {
        case "None":
          return Effect.void
        case "AlreadyLabelled":
          return Effect.sync(() => repaired.inc({ type: "label", result: "skip" }))
        case "Label":
          return client
            .mergePatch(Resources.pods, namespace, pod.metadata.name, action.patch)
            .pipe(outcome("label", `labelled ${settings.labelKey}=${settings.labelValue}`, pod))
        case "Delete":
          return client
            .request({
              method: "DELETE",
              path: resourcePath(Resources.pods, namespace, pod.metadata.name),
              body: {
                kind: "DeleteOptions",
                apiVersion: "v1",
                preconditions: {
                  ...(action.uid !== undefined ? { uid: action.uid } : {}),
                  ...(action.resourceVersion !== undefined ? { resourceVersion: action.resourceVersion } : {}),
                },
              },
            })
            .pipe(outcome("delete", "deleted", pod))
      }
    }

    yield* Effect.logInfo(
      `repairing pods broken by the CNI race (${settings.deletePods ? "delete" : "label"}; ${selectors.fieldSelector || "all nodes"})`,
    )
    const { objects, batches } = yield* pods.subscribe
    yield* Effect.forEach(objects, reconcile, { discard: true })
    while (true) {
      const batch = yield* Queue.take(batches)
      for (const event of batch.events) if (event.type !== "deleted") yield* reconcile(event.object)
    }
  }).pipe(Effect.scoped, withScope("controllers"))
