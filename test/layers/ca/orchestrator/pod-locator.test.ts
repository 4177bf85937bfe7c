/**
 * Node authorization (`CA_TRUSTED_NODE_ACCOUNTS`) answered from the Pod informer: a trusted node
 * agent may ask for the identity of a pod on its own node, not for one elsewhere, not with a
 * stale pod uid; a pod scheduled later is seen through the watch.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { afterAll, beforeAll } from "vitest"
import { makePodLocator } from "../../../../src/layers/ca/orchestrator/pod-locator.js"
import { makeNodeAuthorizer, type OrchestratorInfo } from "../../../../src/services/ca/identity.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../../support/orchestrator/layers.js"
import { eventually } from "./helpers.js"

let server: Orchestrator
const pod = (namespace: string, name: string, node: string, sa: string, uid: string) =>
  server.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, uid },
    spec: { nodeName: node, serviceAccountName: sa, containers: [{ name: "app", image: "app" }] },
  })
beforeAll(async () => {
  server = await startOrchestrator({ namespaces: ["default", "mesh-system", "apps"] })
  pod("mesh-system", "ztunnel-a", "node-1", "ztunnel", "uid-a")
  pod("default", "sleep-1", "node-1", "sleep", "uid-s")
  pod("apps", "db-1", "node-2", "db", "uid-d")
})
afterAll(() => server.close())

const agent: OrchestratorInfo = {
  namespace: "mesh-system",
  serviceAccount: "ztunnel",
  podName: "ztunnel-a",
  podUid: "uid-a",
}
const ID = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`

describe("pod locator", () => {
  it.scopedLive("allows a pod on the agent's node, refuses others, follows new pods", () =>
    Effect.gen(function* () {
      const locator = yield* makePodLocator()
      const authorizer = makeNodeAuthorizer(
        [{ namespace: "mesh-system", serviceAccount: "ztunnel" }],
        locator,
        "cluster.local",
      )
      const check = (caller: OrchestratorInfo, identity: string) =>
        Effect.either(authorizer.authorize(caller, identity))

      expect(yield* check(agent, ID("default", "sleep"))).toEqual(Either.right(undefined))
      expect(yield* check(agent, ID("apps", "db"))).toEqual(
        Either.left({ kind: "not_on_node", message: "no pod of apps/db runs on node node-1" }),
      )
      // A token of a previous pod with the same name: its uid is no longer the pod's.
      expect(Either.isLeft(yield* check({ ...agent, podUid: "old-uid" }, ID("default", "sleep")))).toBe(true)
      // An untrusted account.
      expect(Either.isLeft(yield* check({ ...agent, serviceAccount: "sleep" }, ID("default", "sleep")))).toBe(true)

      expect(yield* locator.hasPodOnNode("node-1", "apps", "db")).toBe(false)
      pod("apps", "db-2", "node-1", "db", "uid-d2")
      yield* eventually(locator.hasPodOnNode("node-1", "apps", "db"), "db-2 on node-1")
      expect(yield* check(agent, ID("apps", "db"))).toEqual(Either.right(undefined))
      server.remove("v1", "Pod", "apps", "db-2")
      yield* eventually(
        Effect.map(locator.hasPodOnNode("node-1", "apps", "db"), (b) => !b),
        "db-2 gone",
      )
    }).pipe(Effect.provide(orchestratorLayer(server))),
  )
})
