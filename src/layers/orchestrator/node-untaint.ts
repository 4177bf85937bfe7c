/**
 * The node untainter (`PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS`): removes the
 * `cni.mesh.io/not-ready` taint from each node once the CNI node agent's pod on it
 * (`k8s-app=mesh-cni-node` in the mesh namespace) is Ready. Follows Nodes and those pods with
 * informers and reconciles every tainted node on each change; the patch carries the node's
 * resourceVersion, so a conflicting edit is re-read rather than overwritten. A failed patch is
 * logged and retried after a delay. Meant to run under `LeaderElection.whileLeader`.
 */
import { Duration, Effect, Queue } from "effect"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import {
  CNI_POD_SELECTOR,
  NOT_READY_TAINT,
  nodesToUntaint,
  untaintPatch,
} from "../../services/orchestrator/node-untaint.js"
import type { OrchNode, OrchPod } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"

export interface NodeUntainterOptions {
  /** The namespace of the CNI node agent's pods (the mesh namespace). */
  readonly namespace: string
  /** Default `k8s-app=mesh-cni-node`. */
  readonly podLabelSelector?: string
  /** Default `cni.mesh.io/not-ready`. */
  readonly taint?: string
  /** Delay before retrying a failed patch; default 1 s. */
  readonly retryDelay?: Duration.DurationInput
}

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("untaint")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("untaint")),
}

type Outcome = "patched" | "stale" | "failed"

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runNodeUntainter = (
  options: NodeUntainterOptions,
): Effect.Effect<void, never, OrchestratorClient | Informers> =>
  Effect.scoped(
    Effect.gen(function* () {
      const client = yield* OrchestratorClient
      const informers = yield* Informers
      const taint = options.taint ?? NOT_READY_TAINT
      const retryDelay = Duration.decode(options.retryDelay ?? "1 second")
      const nodes = yield* informers.informer<OrchNode>(Resources.nodes)
      const pods = yield* informers.informer<OrchPod>(Resources.pods, {
        namespace: options.namespace,
        labelSelector: options.podLabelSelector ?? CNI_POD_SELECTOR,
      })
      const wake = yield* Queue.sliding<void>(1)
      const follow = <A>(batches: Queue.Dequeue<A>) =>
        Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(batches), Queue.offer(wake, undefined))))
      yield* follow((yield* nodes.subscribe).batches)
      yield* follow((yield* pods.subscribe).batches)
      yield* Effect.zipRight(nodes.synced, pods.synced)
      yield* log.info(
        `untainting nodes whose CNI pod (${options.namespace}, ${options.podLabelSelector ?? CNI_POD_SELECTOR}) is ready`,
      )

      // The version each node was patched from: until the informer has seen the patch, its copy
      // still carries the taint, and patching it again would only earn a conflict.
      const patchedFrom = new Map<string, string | undefined>()
      for (;;) {
        let failed = false
        for (const node of nodesToUntaint(nodes.list(), pods.list(options.namespace), taint)) {
          const name = node.metadata.name
          if (patchedFrom.has(name) && patchedFrom.get(name) === node.metadata.resourceVersion) continue
          const done = yield* client.mergePatch(Resources.nodes, undefined, name, untaintPatch(node, taint)).pipe(
            Effect.as<Outcome>("patched"),
            Effect.catchAll((e) =>
              // Changed or gone since read: the informer brings the news and a new round.
              e.conflict || e.notFound
                ? Effect.succeed<Outcome>("stale")
                : Effect.as(
                    log.warn(`removing taint ${taint} from Node ${name} failed: ${e.message} (HTTP ${e.status})`),
                    "failed" as Outcome,
                  ),
            ),
          )
          if (done === "patched") {
            patchedFrom.set(name, node.metadata.resourceVersion)
            yield* log.info(`removed taint ${taint} from Node ${name}: its CNI pod is ready`)
          } else if (done === "failed") failed = true
        }
        for (const name of patchedFrom.keys()) {
          const now = nodes.get(undefined, name)
          if (now === undefined || now.metadata.resourceVersion !== patchedFrom.get(name)) patchedFrom.delete(name)
        }
        const woken = Queue.take(wake)
        yield* failed ? Effect.raceFirst(woken, Effect.sleep(retryDelay)) : woken
      }
    }),
  )
