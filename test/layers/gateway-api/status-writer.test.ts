/**
 * The Gateway-API status writer against the in-process orchestrator API server, with the real
 * orchestrator config store and the Mock registry: a GatewayClass of ours, a Gateway with two
 * listeners and an HTTPRoute with a missing backend get their status; a quiet round writes
 * nothing; a condition whose status holds keeps its time while the one that flips takes a new
 * one; another controller's parent entry on the route survives every write; a route that stops
 * referencing our Gateway loses our entry only.
 */
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOrchestratorConfigStore } from "../../../src/layers/config-store/orchestrator-store.js"
import { runGatewayApiStatus } from "../../../src/layers/gateway-api/status-writer.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { GATEWAY_API_GROUP } from "../../../src/services/config-model/kinds.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { layerMock, MockRegistry, mockService } from "../../../src/services/registry/mock.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"
import { gatewayApiCustomResources } from "../../support/orchestrator/mesh-crds.js"

const CONTROLLER = "mesh.io/gateway-controller"
const OTHER = "example.com/other-controller"
const API = `${GATEWAY_API_GROUP}/v1`

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ customResources: gatewayApiCustomResources() })
})
afterAll(() => server.close())

interface Condition {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly lastTransitionTime: string
}
interface ParentStatus {
  readonly parentRef: { readonly name: string }
  readonly controllerName: string
  readonly conditions: ReadonlyArray<Condition>
}
interface Status {
  readonly conditions?: ReadonlyArray<Condition>
  readonly listeners?: ReadonlyArray<{ readonly name: string; readonly attachedRoutes: number }>
  readonly parents?: ReadonlyArray<ParentStatus>
}

const statusOf = (kind: string, namespace: string | undefined, name: string) =>
  (server.get(API, kind, namespace, name) as { status?: Status } | undefined)?.status
const conditionOf = (conditions: ReadonlyArray<Condition> | undefined, type: string) =>
  conditions?.find((c) => c.type === type)
const routeParents = () => statusOf("HTTPRoute", "default", "web")?.parents ?? []
const ourParent = () => routeParents().find((p) => p.controllerName === CONTROLLER)
const foreignParent: ParentStatus = {
  parentRef: { name: "other-gw" },
  controllerName: OTHER,
  conditions: [{ type: "Accepted", status: "True", reason: "Accepted", lastTransitionTime: "2023-01-01T00:00:00Z" }],
}

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 8000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

const routeSpec = (parentRefs: ReadonlyArray<{ readonly name: string }>) => ({
  parentRefs,
  hostnames: ["web.example.com"],
  rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
})

describe("Gateway-API status writer", () => {
  it("writes class, Gateway and route status; writes nothing when quiet; keeps times and foreign entries", async () => {
    server.put({
      apiVersion: API,
      kind: "GatewayClass",
      metadata: { name: "ours" },
      spec: { controllerName: CONTROLLER },
    })
    // Another controller's class and Gateway: the route's second parent is theirs to answer for.
    server.put({
      apiVersion: API,
      kind: "GatewayClass",
      metadata: { name: "theirs" },
      spec: { controllerName: OTHER },
    })
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "other-gw", namespace: "default" },
      spec: { gatewayClassName: "theirs", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    })
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "gw", namespace: "default" },
      spec: {
        gatewayClassName: "ours",
        listeners: [
          { name: "http", port: 80, protocol: "HTTP" },
          { name: "alt", port: 8080, protocol: "HTTP" },
        ],
      },
    })
    server.put({
      apiVersion: API,
      kind: "HTTPRoute",
      metadata: { name: "web", namespace: "default" },
      spec: routeSpec([{ name: "gw" }, { name: "other-gw" }]),
      status: { parents: [foreignParent] },
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, watched } = yield* makeOrchestratorConfigStore()
        const fiber = yield* Effect.fork(
          runGatewayApiStatus({ controllerName: CONTROLLER, interval: "150 millis", watched }).pipe(
            Effect.provideService(ConfigStore, store),
          ),
        )
        yield* eventually(() => ourParent() !== undefined && statusOf("Gateway", "default", "gw") !== undefined)

        const classStatus = statusOf("GatewayClass", undefined, "ours")
        expect(conditionOf(classStatus?.conditions, "Accepted")?.status).toBe("True")
        // The other controller's objects are not ours to write.
        expect(statusOf("GatewayClass", undefined, "theirs")).toBeUndefined()
        expect(statusOf("Gateway", "default", "other-gw")).toBeUndefined()
        const gatewayStatus = statusOf("Gateway", "default", "gw")
        expect(conditionOf(gatewayStatus?.conditions, "Accepted")?.status).toBe("True")
        expect(gatewayStatus?.listeners?.map((l) => [l.name, l.attachedRoutes])).toEqual([
          ["http", 1],
          ["alt", 1],
        ])
        const first = ourParent()
        expect(first?.parentRef).toEqual({ name: "gw" })
        expect(conditionOf(first?.conditions, "Accepted")?.status).toBe("True")
        expect(conditionOf(first?.conditions, "ResolvedRefs")).toMatchObject({
          status: "False",
          reason: "BackendNotFound",
        })
        // "other-gw" is of another class: no entry of ours for it, and the other controller's entry stays.
        expect(routeParents()).toContainEqual(foreignParent)
        expect(routeParents()).toHaveLength(2)

        // Quiet rounds (several intervals) write nothing.
        const patches = () => server.requestCount({ verb: "patch" })
        const before = patches()
        yield* realSleep(600)
        expect(patches()).toBe(before)

        // Times are whole seconds: let the clock move on before the backend appears.
        yield* realSleep(1100)
        const mock = yield* MockRegistry
        yield* mock.addService(
          mockService("backend.default.svc.cluster.local", "default", {
            ports: [{ name: "http", port: 8080, protocol: "HTTP" }],
          }),
        )
        yield* eventually(() => conditionOf(ourParent()?.conditions, "ResolvedRefs")?.status === "True")
        const second = ourParent()
        const accepted = (p: ParentStatus | undefined) => conditionOf(p?.conditions, "Accepted")?.lastTransitionTime
        const resolved = (p: ParentStatus | undefined) => conditionOf(p?.conditions, "ResolvedRefs")?.lastTransitionTime
        expect(accepted(second)).toBe(accepted(first))
        expect(resolved(second)).not.toBe(resolved(first))
        expect(Date.parse(resolved(second) ?? "")).toBeGreaterThan(Date.parse(resolved(first) ?? ""))
        expect(routeParents()).toContainEqual(foreignParent)

        // The route leaves our Gateway: our entry goes, the other controller's stays, and the
        // listeners count no route any more.
        const current = server.get(API, "HTTPRoute", "default", "web")
        if (current === undefined) throw new Error("route vanished")
        server.put({ ...current, spec: routeSpec([{ name: "other-gw" }]) })
        yield* eventually(() => ourParent() === undefined)
        expect(routeParents()).toEqual([foreignParent])
        yield* eventually(
          () => statusOf("Gateway", "default", "gw")?.listeners?.every((l) => l.attachedRoutes === 0) === true,
        )

        yield* Fiber.interrupt(fiber)
      }).pipe(
        Effect.provide(Layer.mergeAll(orchestratorLayer(server), metricsLayer("test"), layerMock())),
        Effect.scoped,
      ),
    )
  }, 30_000)

  it("checks the certificate Secret a listener references, and follows changes to it", async () => {
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "tls-gw", namespace: "default" },
      spec: {
        gatewayClassName: "ours",
        listeners: [
          {
            name: "https",
            port: 443,
            protocol: "HTTPS",
            tls: { mode: "Terminate", certificateRefs: [{ name: "site-cert" }] },
          },
        ],
      },
    })
    const resolvedRefs = () => {
      const listeners = statusOf("Gateway", "default", "tls-gw")?.listeners as
        | ReadonlyArray<{ readonly conditions?: ReadonlyArray<Condition> }>
        | undefined
      return conditionOf(listeners?.[0]?.conditions, "ResolvedRefs")
    }
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, watched } = yield* makeOrchestratorConfigStore()
        const fiber = yield* Effect.fork(
          runGatewayApiStatus({ controllerName: CONTROLLER, interval: "150 millis", watched }).pipe(
            Effect.provideService(ConfigStore, store),
          ),
        )
        yield* eventually(() => resolvedRefs()?.reason === "InvalidCertificateRef")
        expect((resolvedRefs() as { message?: string } | undefined)?.message).toBe(
          "invalid certificate reference Secret default/site-cert, secret default/site-cert not found",
        )
        // The Secret appears but holds no usable certificate: the status follows it.
        server.put({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "site-cert", namespace: "default" },
          type: "kubernetes.io/tls",
          data: {
            "tls.crt": Buffer.from("junk").toString("base64"),
            "tls.key": Buffer.from("junk").toString("base64"),
          },
        })
        yield* eventually(() =>
          /the certificate is malformed/.test((resolvedRefs() as { message?: string } | undefined)?.message ?? ""),
        )
        yield* Fiber.interrupt(fiber)
      }).pipe(
        Effect.provide(Layer.mergeAll(orchestratorLayer(server), metricsLayer("test"), layerMock())),
        Effect.scoped,
      ),
    )
  }, 30_000)
})
