/**
 * Issue 45 point 6 on the real orchestrator API server: an IngressClass of the mesh's controller and
 * an Ingress (host, path, backend Service port by name) created through kube-apiserver reach the
 * ingress gateway's router through the built mesh-discovery (admin kubeconfig, Orchestrator
 * registry) as the listener `0.0.0.0_80` whose route `http.80` sends the host and path to the
 * backend's cluster; and meshd, as leader, writes the gateway Service's load-balancer address
 * (set through its status subresource, as a cloud controller would) into the Ingress's
 * `status.loadBalancer`, and follows it when the address changes. The same Ingress from
 * `--configDir` is file-orchestrator-objects.test.ts.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const NETWORKING = "/apis/networking.k8s.io/v1"
const GATEWAY_SERVICE = "/api/v1/namespaces/mesh-system/services/mesh-ingressgateway"

let meshd: Daemon | undefined
let ads = ""

const until = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMillis = 20_000): Promise<A> => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n--- meshd ---\n${meshd?.output().slice(-4_000) ?? ""}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The backend Service and an Ingress of class `mesh` sending `host` + `/api` to its port `http`, in `ns`. */
const createIngress = async (ns: string, host: string) => {
  const orch = real.get()
  await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
    body: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "ratings" },
      spec: { selector: { app: "ratings" }, ports: [{ name: "http", port: 9080, targetPort: 8080 }] },
    },
  })
  await orch.ok("POST", `${NETWORKING}/namespaces/${ns}/ingresses`, {
    body: {
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name: "ratings" },
      spec: {
        ingressClassName: "mesh",
        rules: [
          {
            host,
            http: {
              paths: [
                { path: "/api", pathType: "Prefix", backend: { service: { name: "ratings", port: { name: "http" } } } },
              ],
            },
          },
        ],
      },
    },
  })
}

beforeAll(async () => {
  if (real.skip) return
  const orch = real.get()
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } },
  })
  // The mesh config's ingressService (default `mesh-ingressgateway`) in meshd's namespace.
  await orch.ok("POST", "/api/v1/namespaces/mesh-system/services", {
    body: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "mesh-ingressgateway", labels: { mesh: "ingressgateway" } },
      spec: {
        type: "LoadBalancer",
        selector: { mesh: "ingressgateway" },
        ports: [{ name: "http2", port: 80, targetPort: 8080 }],
      },
    },
  })
  await orch.ok("POST", `${NETWORKING}/ingressclasses`, {
    body: {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "mesh" },
      spec: { controller: "mesh.io/ingress-controller" },
    },
  })
  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orch.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  meshd = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-ingress",
    POD_NAMESPACE: "mesh-system",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "200ms",
  })
  ads = (await meshd.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000))[1]!
}, 120_000)

afterAll(async () => {
  await meshd?.stop()
})

interface RouteConfig {
  readonly virtual_hosts?: ReadonlyArray<{
    readonly domains?: ReadonlyArray<string>
    readonly routes?: ReadonlyArray<{
      readonly match?: { readonly prefix?: string; readonly path?: string; readonly path_separated_prefix?: string }
      readonly route?: { readonly cluster?: string }
    }>
  }>
}

/** The router's listener names and the `http.80` route once it holds a virtual host for `host`. */
const routerView = (host: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const client = yield* makeAdsClient({
          address: ads,
          mode: "sotw",
          node: {
            id: "router~10.1.0.9~mesh-ingressgateway-abc.mesh-system~mesh-system.svc.cluster.local",
            metadata: plainToStruct({ NAMESPACE: "mesh-system", LABELS: { mesh: "ingressgateway" } }),
          },
        })
        yield* client.subscribe(TypeUrl.Listener)
        yield* client.subscribe(TypeUrl.Route, ["http.80"])
        const routeOf = (s: {
          types: ReadonlyMap<string, { resources: ReadonlyMap<string, { resource?: unknown }> }>
        }) => s.types.get(TypeUrl.Route)?.resources.get("http.80")?.resource as RouteConfig | undefined
        const snapshot = yield* client.waitFor(
          (s) =>
            (s.types.get(TypeUrl.Listener)?.resources.size ?? 0) > 0 &&
            routeOf(s)?.virtual_hosts?.some((v) => v.domains?.includes(host)) === true,
          "20 seconds",
        )
        return {
          listeners: [...(snapshot.types.get(TypeUrl.Listener)?.resources.keys() ?? [])],
          route: routeOf(snapshot)!,
        }
      }),
    ),
  )

describe.skipIf(real.skip)("Ingress on the real orchestrator API server under mesh-discovery", () => {
  it("routes the Ingress's host and path on the ingress gateway's router to the backend's cluster", async () => {
    const ns = await real.get().namespace("ing-route")
    await createIngress(ns, "ratings.example.com")
    const { listeners, route } = await routerView("ratings.example.com")
    expect(listeners).toContain("0.0.0.0_80")
    const host = route.virtual_hosts?.find((v) => v.domains?.includes("ratings.example.com"))
    const api = host?.routes?.find((r) => r.route?.cluster === `outbound|9080||ratings.${ns}.svc.cluster.local`)
    expect(api, JSON.stringify(host)).toBeDefined()
    expect(api?.match?.prefix ?? api?.match?.path_separated_prefix).toBe("/api")
  }, 30_000)

  it("writes the gateway Service's load-balancer address into the Ingress status, as leader, and follows it", async () => {
    const orch = real.get()
    const ns = await orch.namespace("ing-status")
    await createIngress(ns, "status.example.com")
    const path = `${NETWORKING}/namespaces/${ns}/ingresses/ratings`
    const statusOf = async () => (await orch.ok("GET", path)).status?.loadBalancer?.ingress ?? []
    // No address on the gateway Service yet (no cloud controller here): nothing to write.
    expect(await statusOf()).toEqual([])
    const setAddress = (ingress: ReadonlyArray<{ ip?: string; hostname?: string }>) =>
      orch.ok("PATCH", `${GATEWAY_SERVICE}/status`, {
        contentType: "application/merge-patch+json",
        body: { status: { loadBalancer: { ingress } } },
      })
    await setAddress([{ ip: "203.0.113.10" }])
    const written = Date.now()
    await until("the Ingress status", async () => {
      const got = await statusOf()
      return got.length > 0 ? got : undefined
    }).then((got) => expect(got).toEqual([{ ip: "203.0.113.10" }]))
    console.info(`gateway address set → Ingress status written: ${Date.now() - written} ms`)
    const lease = await orch.ok("GET", "/apis/coordination.k8s.io/v1/namespaces/mesh-system/leases/mesh-leader")
    expect(lease.spec.holderIdentity).toContain("meshd-ingress")

    await setAddress([{ hostname: "lb.example.net" }, { ip: "203.0.113.11" }])
    await until("the Ingress status to follow the gateway", async () =>
      JSON.stringify(await statusOf()) === JSON.stringify([{ ip: "203.0.113.11" }, { hostname: "lb.example.net" }])
        ? true
        : undefined,
    )
  }, 30_000)
})
