/**
 * Issue 36 groups 2 and 9 end to end: the built `mesh-discovery` on the in-process orchestrator
 * (Gateway-API CRDs installed, ListenerSet among them), no `--configDir`.
 * - A ListenerSet attached to a Gateway that allows it is watched, served (its generated Gateway
 *   on `/debug/gateway-api`, a route naming it bound to that Gateway) and given its status by
 *   the leader; the parent counts it (`attachedListenerSets`).
 * - A ListenerSet whose parent does not allow it gets NotAllowed.
 * - The parent, served by a LoadBalancer Service, reports the load balancer's address; while the
 *   load balancer has none it is Programmed False with AddressNotAssigned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startOrchestratorDiscovery } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { gatewayApiCustomResources, meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import type { Daemon } from "../support/processes.js"

const NS = "edge"
const APPS = "shop"
let server: Orchestrator
let discovery: Daemon
let httpAddr = ""

interface Generated {
  readonly metadata: { readonly namespace: string; readonly name: string }
  readonly sources: ReadonlyArray<string>
  readonly spec: { readonly gateways?: ReadonlyArray<string>; readonly hosts?: ReadonlyArray<string> }
}
interface GatewayApiPage {
  readonly gateways: ReadonlyArray<Generated>
  readonly virtualServices: ReadonlyArray<Generated>
}
type Condition = { type: string; status: string; reason: string; message: string }
interface Status {
  readonly conditions?: ReadonlyArray<Condition>
  readonly addresses?: ReadonlyArray<{ type: string; value: string }>
  readonly attachedListenerSets?: number
  readonly listeners?: ReadonlyArray<{ name: string; attachedRoutes: number; conditions: ReadonlyArray<Condition> }>
}

const page = async (): Promise<GatewayApiPage> => {
  const response = await fetch(`http://${httpAddr}/debug/gateway-api`)
  expect(response.status).toBe(200)
  return (await response.json()) as GatewayApiPage
}

const until = async <T>(what: string, read: () => T | Promise<T>, check: (t: T) => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  let last: T | undefined
  while (Date.now() < deadline) {
    last = await read()
    if (check(last)) return last
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}\n${discovery.output().slice(-3000)}`)
}

const statusOf = (kind: string, namespace: string, name: string): Status | undefined =>
  (server.get("gateway.networking.k8s.io/v1", kind, namespace, name) as { status?: Status } | undefined)?.status
const condition = (status: Status | undefined, type: string) => status?.conditions?.find((c) => c.type === type)

const proxyService = (ingress: ReadonlyArray<{ ip: string }>) =>
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "front-proxy", namespace: NS },
    spec: {
      type: "LoadBalancer",
      clusterIP: "10.96.0.40",
      selector: { app: "front-proxy" },
      ports: [
        { name: "http", port: 80 },
        { name: "shop", port: 8080 },
      ],
    },
    status: { loadBalancer: { ingress } },
  })

beforeAll(async () => {
  server = await startOrchestrator({ customResources: [...meshCustomResources(), ...gatewayApiCustomResources()] })
  for (const name of ["mesh-system", NS, APPS]) server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "shop", namespace: APPS },
    spec: { clusterIP: "10.96.0.20", selector: { app: "shop" }, ports: [{ name: "http", port: 8080 }] },
  })
  proxyService([])
  // Served by a proxy the user runs (its Service named by a Hostname address), taking ListenerSets from anywhere.
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "front", namespace: NS },
    spec: {
      gatewayClassName: "mesh",
      addresses: [{ type: "Hostname", value: "front-proxy" }],
      allowedListeners: { namespaces: { from: "All" } },
      listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
    },
  })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "closed", namespace: NS },
    spec: {
      gatewayClassName: "mesh",
      addresses: [{ type: "Hostname", value: "front-proxy" }],
      listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
    },
  })
  for (const [name, parent] of [
    ["shop-listeners", "front"],
    ["refused", "closed"],
  ] as const)
    server.put({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "ListenerSet",
      metadata: { name, namespace: APPS },
      spec: {
        parentRef: { name: parent, namespace: NS },
        listeners: [{ name: "shop", port: 8080, protocol: "HTTP", hostname: "shop.example.com" }],
      },
    })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "shop", namespace: APPS },
    spec: {
      parentRefs: [{ group: "gateway.networking.k8s.io", kind: "ListenerSet", name: "shop-listeners" }],
      hostnames: ["shop.example.com"],
      rules: [{ backendRefs: [{ name: "shop", port: 8080 }] }],
    },
  })
  ;({ daemon: discovery, httpAddr } = await startOrchestratorDiscovery(server.kubeconfig(), "meshd-ls"))
}, 180_000)

afterAll(async () => {
  await discovery?.stop()
  await server?.close()
})

describe("ListenerSets on the orchestrator, through the built mesh-discovery", () => {
  it("serves an attached ListenerSet's listeners and binds a route naming it", async () => {
    const generated = `${APPS}/shop-listeners-listenerset-mesh-autogenerated-k8s-gateway`
    const p = await until("the ListenerSet's generated Gateway and the route on it", page, (q) =>
      q.virtualServices.some((v) => (v.spec.gateways ?? []).includes(generated)),
    )
    expect(
      p.gateways
        .filter((g) => g.sources.some((s) => s.startsWith("ListenerSet/")))
        .map((g) => [g.metadata.namespace, g.metadata.name, g.sources]),
    ).toEqual([
      [APPS, "shop-listeners-listenerset-mesh-autogenerated-k8s-gateway", [`ListenerSet/${APPS}/shop-listeners`]],
    ])
    expect(p.virtualServices.find((v) => (v.spec.gateways ?? []).includes(generated))?.spec.hosts).toEqual([
      "shop.example.com",
    ])
    // The refused one generates nothing.
    expect(p.gateways.some((g) => g.metadata.name.startsWith("refused-"))).toBe(false)
  })

  it("writes the ListenerSets' status and the parent's count", async () => {
    const accepted = await until(
      "the ListenerSet's status",
      () => statusOf("ListenerSet", APPS, "shop-listeners"),
      (s) => (s?.listeners?.[0]?.attachedRoutes ?? 0) === 1,
    )
    expect(condition(accepted, "Accepted")).toMatchObject({ status: "True", reason: "Accepted" })
    expect(accepted?.listeners?.[0]?.conditions.find((c) => c.type === "Programmed")?.status).toBe("True")
    const refused = await until(
      "NotAllowed",
      () => statusOf("ListenerSet", APPS, "refused"),
      (s) => condition(s, "Accepted")?.reason === "NotAllowed",
    )
    expect(condition(refused, "Programmed")).toMatchObject({ status: "False", reason: "NotAllowed" })
    expect(refused?.listeners).toBeUndefined()
    const parent = await until(
      "the parent's ListenerSet count",
      () => statusOf("Gateway", NS, "front"),
      (s) => s?.attachedListenerSets === 1,
    )
    expect(parent?.attachedListenerSets).toBe(1)
  })

  it("reports the load balancer's address once it has one (AddressNotAssigned before)", async () => {
    const pending = await until(
      "AddressNotAssigned",
      () => statusOf("Gateway", NS, "front"),
      (s) => condition(s, "Programmed")?.reason === "AddressNotAssigned",
    )
    expect(condition(pending, "Programmed")?.message).toContain(
      `address pending for hostname "front-proxy.${NS}.svc.cluster.local"`,
    )
    proxyService([{ ip: "203.0.113.7" }])
    const ready = await until(
      "the load balancer's address",
      () => statusOf("Gateway", NS, "front"),
      (s) => condition(s, "Programmed")?.status === "True",
    )
    expect(ready?.addresses).toEqual([{ type: "IPAddress", value: "203.0.113.7" }])
  })
})
