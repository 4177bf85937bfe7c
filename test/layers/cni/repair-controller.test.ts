/**
 * Race repair against the in-process orchestrator API server through the real client library and
 * informers: on its node, a pod whose validation init container last failed with exit code 126
 * is labelled (label mode) or deleted (delete mode), and counted; a healthy pod, a pod without the
 * sidecar annotation and a broken pod of another node are left alone.
 */
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRepairController } from "../../../src/layers/cni/repair-controller.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { RepairSettings } from "../../../src/services/cni/repair-decision.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator()
})
afterAll(() => server.close())

const settings: RepairSettings = {
  deletePods: false,
  labelPods: true,
  labelKey: "cni.mesh.io/uninitialized",
  labelValue: "true",
  sidecarAnnotation: "sidecar.mesh.io/status",
  initContainerName: "mesh-validation",
  initContainerExitCode: 126,
  initContainerTerminationMessage: "",
  nodeName: "node-1",
  fieldSelectors: "",
  labelSelectors: "",
}

const putPod = (
  namespace: string,
  name: string,
  options: { node?: string; exitCode?: number; annotated?: boolean } = {},
) =>
  server.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      ...(options.annotated === false ? {} : { annotations: { "sidecar.mesh.io/status": "{}" } }),
    },
    spec: { nodeName: options.node ?? "node-1", containers: [{ name: "app", image: "app" }] },
    status: {
      phase: "Pending",
      initContainerStatuses: [
        {
          name: "mesh-validation",
          state: { waiting: { reason: "CrashLoopBackOff" } },
          lastState: { terminated: { exitCode: options.exitCode ?? 126, reason: "Error" } },
        },
      ],
    },
  })

const podOf = (namespace: string, name: string) =>
  server.get("v1", "Pod", namespace, name) as
    | (KubeObject & { metadata: { labels?: Record<string, string> } })
    | undefined

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, what: string, within = 5000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error(`not in time: ${what}`))
      yield* realSleep(20)
    }
  })

/** The counter is bumped once the server has answered, a moment after the change is visible there. */
const eventuallyCounted = (metrics: () => Promise<string>, pattern: RegExp) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 5000
    while (!pattern.test(yield* Effect.promise(metrics))) {
      if (Date.now() > deadline)
        return yield* Effect.die(new Error(`metric not in time: ${pattern}\n${yield* Effect.promise(metrics)}`))
      yield* realSleep(20)
    }
  })

const withController = <A>(repair: RepairSettings, body: (metrics: () => Promise<string>) => Effect.Effect<A>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const fiber = yield* Effect.fork(runRepairController(repair))
      const result = yield* body(() => metrics.registry.metrics())
      yield* Fiber.interrupt(fiber)
      return result
    }).pipe(Effect.provide(Layer.merge(orchestratorLayer(server), metricsLayer("test")))),
  )

describe("race repair controller", () => {
  it("labels the broken pods of its node, and only those", async () => {
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "label-mode" } })
    putPod("label-mode", "broken-early")
    await withController(settings, (metrics) =>
      Effect.gen(function* () {
        putPod("label-mode", "broken-later")
        putPod("label-mode", "healthy", { exitCode: 1 })
        putPod("label-mode", "no-sidecar", { annotated: false })
        putPod("label-mode", "other-node", { node: "node-2" })
        const labelled = (name: string) => podOf("label-mode", name)?.metadata.labels?.["cni.mesh.io/uninitialized"]
        yield* eventually(() => labelled("broken-early") === "true", "pod on the node at start labelled")
        yield* eventually(() => labelled("broken-later") === "true", "pod added later labelled")
        // The later pods were written after broken-later; give their events the same chance.
        putPod("label-mode", "marker")
        yield* eventually(() => labelled("marker") === "true", "marker labelled")
        for (const name of ["healthy", "no-sidecar", "other-node"]) expect(labelled(name), name).toBeUndefined()
        yield* eventuallyCounted(metrics, /mesh_cni_repair_pods_repaired_total\{type="label",result="success"\} 3\n/)
      }),
    )
  })

  it("deletes broken pods in delete mode", async () => {
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "delete-mode" } })
    // A node of its own: the broken pods the label test left on node-1 are not this test's.
    putPod("delete-mode", "broken", { node: "node-3" })
    putPod("delete-mode", "healthy", { exitCode: 0, node: "node-3" })
    await withController({ ...settings, deletePods: true, labelPods: false, nodeName: "node-3" }, (metrics) =>
      Effect.gen(function* () {
        yield* eventually(() => podOf("delete-mode", "broken") === undefined, "broken pod deleted")
        putPod("delete-mode", "broken-later", { node: "node-3" })
        yield* eventually(() => podOf("delete-mode", "broken-later") === undefined, "later broken pod deleted")
        expect(podOf("delete-mode", "healthy")).toBeDefined()
        yield* eventuallyCounted(metrics, /mesh_cni_repair_pods_repaired_total\{type="delete",result="success"\} 2\n/)
      }),
    )
  })
})
