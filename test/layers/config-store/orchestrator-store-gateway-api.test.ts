/**
 * The orchestrator config store reads the Gateway-API kinds through the real client and
 * informers: objects served as `kind: Gateway` become the mesh's `KubernetesGateway`, the
 * cluster-scoped GatewayClass is read whole under a namespace-limited watch, and TCPRoute (v1 since
 * Gateway API v1.6) is watched by default, at the alpha version an older install serves.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger } from "effect"
import {
  makeOrchestratorConfigStore,
  type OrchestratorStoreOptions,
} from "../../../src/layers/config-store/orchestrator-store.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { type CustomResource, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const GROUP = "gateway.networking.k8s.io"

const CRDS: ReadonlyArray<CustomResource> = [
  { group: GROUP, versions: ["v1", "v1beta1"], kind: "GatewayClass", plural: "gatewayclasses", namespaced: false },
  { group: GROUP, versions: ["v1", "v1beta1"], kind: "Gateway", plural: "gateways" },
  { group: GROUP, versions: ["v1alpha2"], kind: "TCPRoute", plural: "tcproutes" },
]

const gateway = (name: string, namespace: string, listeners: ReadonlyArray<unknown>) => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Gateway",
  metadata: { name, namespace },
  spec: { gatewayClassName: "mesh", listeners },
  status: { conditions: [] },
})

/** A store over a fresh server holding the objects, once synced: its snapshot and watched kinds. */
const syncedStore = (options: OrchestratorStoreOptions) =>
  Effect.gen(function* () {
    const server = yield* Effect.acquireRelease(
      Effect.promise(() => startOrchestrator({ tls: false, customResources: CRDS, namespaces: ["apps", "other"] })),
      (s) => Effect.promise(() => s.close()),
    )
    const http = [{ name: "http", port: 80, protocol: "HTTP" }]
    server.put(gateway("edge", "apps", http))
    server.put(gateway("elsewhere", "other", http))
    // Two listeners of one name (a Gateway without listeners is served, as the reference does).
    server.put(gateway("broken", "apps", [...http, { name: "http", port: 8080, protocol: "HTTP" }]))
    server.put({
      apiVersion: `${GROUP}/v1`,
      kind: "GatewayClass",
      metadata: { name: "mesh" },
      spec: { controllerName: "mesh.io/gateway-controller" },
    })
    server.put({
      apiVersion: `${GROUP}/v1alpha2`,
      kind: "TCPRoute",
      metadata: { name: "db", namespace: "apps" },
      spec: { rules: [{ backendRefs: [{ name: "db", port: 5432 }] }] },
    })
    return yield* Effect.gen(function* () {
      const store = yield* makeOrchestratorConfigStore(options)
      yield* Effect.timeout(store.store.awaitSynced, Duration.seconds(10))
      return { snapshot: yield* store.store.snapshot, watched: yield* store.watched }
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          orchestratorLayer(server),
          metricsLayer("test"),
          Logger.replace(Logger.defaultLogger, Logger.none),
        ),
      ),
    )
  })

const names = (resources: ReadonlyArray<{ readonly meta: { readonly namespace: string; readonly name: string } }>) =>
  resources.map((r) => `${r.meta.namespace}/${r.meta.name}`)

describe("orchestrator config store: Gateway-API kinds", () => {
  it.scopedLive("reads Gateway as KubernetesGateway and the cluster-scoped GatewayClass under a namespace watch", () =>
    Effect.gen(function* () {
      const { snapshot, watched } = yield* syncedStore({ watchNamespace: "apps" })
      expect(watched).toEqual([
        { group: GROUP, kind: "Gateway", version: "v1" },
        { group: GROUP, kind: "GatewayClass", version: "v1" },
        { group: GROUP, kind: "TCPRoute", version: "v1alpha2" },
      ])
      expect(names(snapshot.list("KubernetesGateway"))).toEqual(["apps/edge"])
      expect(snapshot.get("KubernetesGateway", "apps", "edge")?.source?.file).toBe(
        `orchestrator:${GROUP}/Gateway/apps/edge`,
      )
      expect(snapshot.list("Gateway")).toEqual([])
      expect(names(snapshot.list("GatewayClass"))).toEqual(["/mesh"])
      // TCPRoute has a v1 now: watched by default, here at the only version this cluster serves.
      expect(names(snapshot.list("TCPRoute"))).toEqual(["apps/db"])
      const broken = snapshot.issues.filter((i) => i.name === "broken")
      expect(broken.map((i) => `${i.kind} ${i.path}: ${i.message}`)).toEqual([
        'Gateway spec.listeners[1].name: duplicate listener name "http"',
      ])
    }),
  )

  it.scopedLive("the alpha switch changes nothing for these kinds, and none when the Gateway API is left out", () =>
    Effect.gen(function* () {
      const alpha = yield* syncedStore({ crdSources: { alphaGatewayApi: true } })
      expect(alpha.watched.map((w) => w.kind)).toEqual(["Gateway", "GatewayClass", "TCPRoute"])
      expect(names(alpha.snapshot.list("TCPRoute"))).toEqual(["apps/db"])
      expect(names(alpha.snapshot.list("KubernetesGateway"))).toEqual(["apps/edge", "other/elsewhere"])
      const none = yield* syncedStore({ crdSources: { gatewayApi: false } })
      expect(none.watched).toEqual([])
      expect(none.snapshot.size).toBe(0)
    }),
  )
})
