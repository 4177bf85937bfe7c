/**
 * What needs the real orchestrator's controllers and storage, on the real API server with
 * kube-controller-manager (garbage collector, namespace deletion) and without its watch cache
 * (watches served by etcd, so compaction is felt): the built mesh-discovery (admin kubeconfig,
 * through a relay the test can cut) deploys a Gateway of its class, the real garbage collector
 * removes the Deployment, Service and ServiceAccount when the Gateway is deleted, and the namespace
 * then really goes; and etcd compacted under meshd's watches, the watches cut: meshd's resumed watches
 * get 410 Gone and relist, a change made then reaches an xDS client, nothing is lost and the
 * relist pushes no storm (counted by meshd's own pilot_xds_pushes).
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { type CutProxy, startCutProxy } from "../support/cut-proxy.js"
import { discoveryArgs } from "../support/discovery.js"
import { gatewayApiCrds } from "../support/gateway-api-crds.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll }, { controllerManager: true, watchCache: false })
const GATEWAYS = "/apis/gateway.networking.k8s.io/v1"

let meshd: Daemon | undefined
let relay: CutProxy | undefined

const until = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMillis = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMillis
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}\n--- meshd ---\n${meshd?.output().slice(-4_000) ?? ""}\n${real.get().logs().slice(-4_000)}`,
      )
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** meshd's pilot_xds_pushes for `type` (summed over its labels), from its monitoring endpoint. */
const pushes = async (monitoring: string, type: string): Promise<number> => {
  const text = await (await fetch(`http://${monitoring}/metrics`)).text()
  return text
    .split("\n")
    .filter((l) => l.startsWith("pilot_xds_pushes{") && l.includes(`type="${type}"`))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)
}

beforeAll(async () => {
  if (real.skip) return
  const orch = real.get()
  for (const crd of gatewayApiCrds())
    await orch.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd })
  for (const crd of gatewayApiCrds())
    await until(`${crd.metadata.name} established`, async () => {
      const got = await orch.ok("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
      return got.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === "Established" && c.status === "True",
      )
        ? true
        : undefined
    })
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } },
  })
  relay = await startCutProxy(orch.port)
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": orch.kubeconfigVia(`https://127.0.0.1:${relay.port}`),
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  meshd = startDaemon("mesh-discovery", args, { POD_NAME: "meshd-test", POD_NAMESPACE: "mesh-system" })
  await meshd.waitFor(/ADS server listening on/, 60_000)
}, 120_000)

afterAll(async () => {
  await meshd?.stop()
  await relay?.close()
})

describe.skipIf(real.skip)("the real orchestrator's controllers and storage under mesh-discovery", () => {
  it("garbage-collects a deleted Gateway's Deployment, Service and ServiceAccount; the namespace then goes", async () => {
    const orch = real.get()
    const ns = await orch.namespace("gc")
    const gateway = await orch.ok("POST", `${GATEWAYS}/namespaces/${ns}/gateways`, {
      body: {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: "gw" },
        spec: { gatewayClassName: "mesh", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
      },
    })
    const owned = [
      `/apis/apps/v1/namespaces/${ns}/deployments/gw-mesh`,
      `/api/v1/namespaces/${ns}/services/gw-mesh`,
      `/api/v1/namespaces/${ns}/serviceaccounts/gw-mesh`,
    ]
    const objects = await until("meshd to deploy the Gateway", async () => {
      const answers = await Promise.all(owned.map((path) => orch.api("GET", path)))
      return answers.every((a) => a.status === 200) ? answers.map((a) => a.body) : undefined
    })
    for (const o of objects)
      expect(o.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: "Gateway", name: "gw", uid: gateway.metadata.uid }),
      ])

    // Deleted with the default (background) propagation: the garbage collector removes the rest.
    const deleted = Date.now()
    await orch.ok("DELETE", `${GATEWAYS}/namespaces/${ns}/gateways/gw`)
    await until("the garbage collector to remove the Gateway's objects", async () => {
      const answers = await Promise.all(owned.map((path) => orch.api("GET", path)))
      return answers.every((a) => a.status === 404) ? true : undefined
    })
    console.info(`Gateway deleted → Deployment, Service, ServiceAccount collected: ${Date.now() - deleted} ms`)
    // meshd does not bring them back for a Gateway that is gone (its Service repair would).
    await new Promise((r) => setTimeout(r, 2_000))
    for (const path of owned) expect((await orch.api("GET", path)).status).toBe(404)

    // The namespace controller empties and removes a deleted namespace (without it: Terminating for good).
    await orch.ok("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "left" }, data: { a: "b" } },
    })
    const deleting = Date.now()
    await orch.ok("DELETE", `/api/v1/namespaces/${ns}`)
    await until("the namespace to be removed", async () =>
      (await orch.api("GET", `/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined,
    )
    console.info(`namespace deleted → removed: ${Date.now() - deleting} ms`)
  }, 90_000)

  it("relists after etcd compaction (410 Gone on its resumed watches): the change arrives, no push storm", async () => {
    const orch = real.get()
    const ns = await orch.namespace("compact")
    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    const monitoring = (await meshd!.waitFor(/monitoring listening on ([\d.]+:\d+)/))[1]!
    // No selector: the EndpointSlice controller leaves its slices to the test.
    await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "echo" },
        spec: { ports: [{ name: "grpc", port: 7070 }] },
      },
    })
    const slice = (name: string, ip: string) => ({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, labels: { "kubernetes.io/service-name": "echo" } },
      addressType: "IPv4",
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: "grpc", port: 7070, protocol: "TCP" }],
    })
    const slices = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`
    await orch.ok("POST", slices, { body: slice("a", "10.3.0.1") })
    const cluster = `outbound|7070||echo.${ns}.svc.cluster.local`
    type Snap = {
      types: ReadonlyMap<string, { responses: number; resources: ReadonlyMap<string, { resource?: unknown }> }>
    }
    const endpointsOf = (snap: Snap) =>
      JSON.stringify(snap.types.get(TypeUrl.Endpoint)?.resources.get(cluster)?.resource ?? {})
    const scope = Effect.runSync(Scope.make())
    try {
      const client = await Effect.runPromise(
        makeAdsClient({
          address: ads,
          mode: "sotw",
          node: { id: `sidecar~10.3.0.9~client.${ns}~${ns}.svc.cluster.local` },
        }).pipe(Scope.extend(scope)),
      )
      await Effect.runPromise(client.subscribe(TypeUrl.Endpoint, [cluster]))
      await Effect.runPromise(client.waitFor((snap) => endpointsOf(snap).includes("10.3.0.1"), "20 seconds"))
      const before = (await Effect.runPromise(client.snapshot)).types.get(TypeUrl.Endpoint)!.responses
      const edsBefore = await pushes(monitoring, "eds")
      const allBefore = (await Promise.all(["eds", "cds", "lds", "rds"].map((t) => pushes(monitoring, t)))).reduce(
        (a, b) => a + b,
        0,
      )
      const relistsBefore = (meshd!.output().match(/expired; listing again/g) ?? []).length

      // Writes after meshd's last seen versions, then the history compacted away beneath them.
      await orch.ok("POST", `/api/v1/namespaces/${ns}/configmaps`, {
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bump" } },
      })
      const revision = await orch.compactEtcd()
      // Cut meshd's connections: every watch resumes from a version etcd no longer has.
      const cut = relay!.cut()
      console.info(`etcd compacted at revision ${revision}; ${cut} meshd connection(s) cut`)
      await orch.ok("POST", slices, { body: slice("b", "10.3.0.2") })
      const after = await Effect.runPromise(
        client.waitFor(
          (snap) => endpointsOf(snap).includes("10.3.0.2") && endpointsOf(snap).includes("10.3.0.1"),
          "60 seconds",
        ),
      )
      // The relists have settled once meshd has said so, or after a quiet moment.
      await new Promise((r) => setTimeout(r, 3_000))
      const clientPushes = after.types.get(TypeUrl.Endpoint)!.responses - before
      const edsPushes = (await pushes(monitoring, "eds")) - edsBefore
      const allPushes =
        (await Promise.all(["eds", "cds", "lds", "rds"].map((t) => pushes(monitoring, t)))).reduce((a, b) => a + b, 0) -
        allBefore
      const relists = (meshd!.output().match(/expired; listing again/g) ?? []).length - relistsBefore
      console.info(
        `after compaction: client EDS responses ${clientPushes}, meshd pushes eds ${edsPushes} / all ${allPushes}, expired-version relists ${relists}`,
      )
      // One for the new endpoint; a relist that changed nothing may push the same assignment once more.
      // The fault happened: meshd's resumed watches were refused with 410 and it listed again.
      expect(relists).toBeGreaterThan(0)
      expect(clientPushes).toBeLessThanOrEqual(3)
      expect(edsPushes).toBeLessThanOrEqual(3)
      expect(allPushes).toBeLessThanOrEqual(8)
      // Nothing lost: the Service and both endpoints are still there after the relists.
      const final = await Effect.runPromise(client.snapshot)
      expect(endpointsOf(final)).toContain("10.3.0.1")
      expect(endpointsOf(final)).toContain("10.3.0.2")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)
})
