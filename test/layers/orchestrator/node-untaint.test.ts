/**
 * The node untainter against the in-process orchestrator API server through the real client and
 * informers: a tainted node keeps the taint while its CNI pod is not ready and loses it (other
 * taints kept) once the pod is Ready; a pod of another namespace or label changes nothing; a node
 * tainted later is untainted too.
 */
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runNodeUntainter } from "../../../src/layers/orchestrator/node-untaint.js"
import { NOT_READY_TAINT } from "../../../src/services/orchestrator/node-untaint.js"
import type { OrchNode } from "../../../src/services/orchestrator/objects.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["default", "mesh-system"] })
})
afterAll(() => server.close())

const putNode = (name: string, taints: Array<string>) =>
  server.put({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name },
    spec: { taints: taints.map((key) => ({ key, effect: "NoSchedule" })) },
  })
const putCniPod = (name: string, nodeName: string, ready: boolean, namespace = "mesh-system", app = "mesh-cni-node") =>
  server.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { "k8s-app": app } },
    spec: { nodeName, containers: [{ name: "install-cni", image: "cni" }] },
    status: { phase: "Running", conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  })
const taintsOf = (name: string) =>
  ((server.get("v1", "Node", undefined, name) as OrchNode | undefined)?.spec?.taints ?? []).map((t) => t.key)

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 5000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

describe("node untainter", () => {
  it("removes the taint once the node's CNI pod is ready, and only then", async () => {
    putNode("n1", ["other", NOT_READY_TAINT])
    putNode("n2", [NOT_READY_TAINT])
    putCniPod("cni-n1", "n1", false)
    putCniPod("impostor-n2", "n2", true, "default")
    putCniPod("app-n2", "n2", true, "mesh-system", "something-else")
    await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(runNodeUntainter({ namespace: "mesh-system" }))
        yield* realSleep(400)
        expect(taintsOf("n1")).toEqual(["other", NOT_READY_TAINT])
        expect(taintsOf("n2")).toEqual([NOT_READY_TAINT])

        putCniPod("cni-n1", "n1", true)
        yield* eventually(() => !taintsOf("n1").includes(NOT_READY_TAINT))
        expect(taintsOf("n1")).toEqual(["other"])
        expect(taintsOf("n2")).toEqual([NOT_READY_TAINT])

        putCniPod("cni-n2", "n2", true)
        yield* eventually(() => taintsOf("n2").length === 0)

        // A node tainted again (rebooted) is untainted again.
        putNode("n2", [NOT_READY_TAINT])
        yield* eventually(() => taintsOf("n2").length === 0)
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(orchestratorLayer(server)), Effect.scoped),
    )
  })
})
