/**
 * Issue 36 group 2 end to end: the built `mesh-discovery` on the in-process orchestrator with
 * the Gateway-API CRDs (experimental kinds too, PILOT_ENABLE_ALPHA_GATEWAY_API on).
 * - A BackendTLSPolicy on a Service with a ConfigMap CA: the served cluster of that Service
 *   originates TLS with the policy's SNI and the ConfigMap's CA (`configmap://ns/name`), and
 *   `/debug/gateway-api` lists the generated DestinationRule with its source.
 * - The leader writes the policy's ancestors: the Service (mesh controller) and the Gateway whose
 *   route reaches it; a policy whose CA ConfigMap is missing is NoValidCACertificate until the
 *   ConfigMap is written, then Accepted.
 * - An XBackendTrafficPolicy's retry budget reaches the generated DestinationRule.
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../src/layers/xds/protos.js"
import { startOrchestratorDiscovery } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { gatewayApiCustomResources, meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import type { Daemon } from "../support/processes.js"

const NS = "edge"
const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
const CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBdummy\n-----END CERTIFICATE-----\n"
let server: Orchestrator
let discovery: Daemon
let httpAddr = ""
let xdsAddr = ""

const service = (name: string, port: number) =>
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: NS },
    spec: { clusterIP: `10.96.0.${port % 200}`, selector: { app: name }, ports: [{ name: "https", port }] },
  })
const tlsPolicy = (name: string, target: string, configMap: string) =>
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name, namespace: NS },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: target }],
      validation: {
        hostname: `${target}.internal`,
        caCertificateRefs: [{ group: "", kind: "ConfigMap", name: configMap }],
      },
    },
  })
const configMap = (name: string) =>
  server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: NS }, data: { "ca.crt": CA_PEM } })

interface Generated {
  readonly metadata: { readonly name: string }
  readonly sources: ReadonlyArray<string>
  readonly spec: { readonly trafficPolicy?: Record<string, unknown> }
}

const destinationRules = async (): Promise<ReadonlyArray<Generated>> => {
  const response = await fetch(`http://${httpAddr}/debug/gateway-api`)
  expect(response.status).toBe(200)
  return ((await response.json()) as { destinationRules?: ReadonlyArray<Generated> }).destinationRules ?? []
}

const until = async <T>(what: string, read: () => Promise<T> | T, check: (value: T) => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  let last: T | undefined
  while (Date.now() < deadline) {
    last = await read()
    if (check(last)) return last
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}\n${discovery.output().slice(-3000)}`)
}

const protos = loadXdsProtos()
const AdsClient = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")

/** The clusters served to a sidecar of `edge`, each as the text of its serialized bytes. */
const clusters = (): Promise<ReadonlyArray<string>> => {
  const client = new AdsClient(xdsAddr, grpc.credentials.createInsecure())
  const stream = (
    client as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, unknown>>
  ).StreamAggregatedResources!.call(client)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(() => reject(new Error("no CDS answer within 10s"))), 10_000)
    const finish = (done: () => void) => {
      clearTimeout(timer)
      stream.removeAllListeners()
      stream.on("error", () => {})
      stream.cancel()
      client.close()
      done()
    }
    stream.on("data", (response: { resources?: Array<{ value?: Uint8Array }> }) =>
      finish(() => resolve((response.resources ?? []).map((r) => Buffer.from(r.value ?? []).toString("latin1")))),
    )
    stream.on("error", (e: Error) => finish(() => reject(e)))
    stream.write({ node: { id: `sidecar~10.1.0.9~client-1.${NS}~${NS}.svc.cluster.local` }, type_url: CLUSTER })
  })
}

type Ancestor = {
  ancestorRef: Record<string, string>
  controllerName: string
  conditions: Array<{ type: string; status: string; reason: string }>
}
const ancestors = (kind: string, name: string, version = "v1", group = "gateway.networking.k8s.io") =>
  ((server.get(`${group}/${version}`, kind, NS, name) as { status?: { ancestors?: Array<Ancestor> } } | undefined)
    ?.status?.ancestors ?? []) as Array<Ancestor>
const summary = (list: ReadonlyArray<Ancestor>) =>
  list.map((a) => [
    `${a.ancestorRef.kind}/${a.ancestorRef.name}`,
    a.controllerName,
    a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
  ])

beforeAll(async () => {
  server = await startOrchestrator({ customResources: [...meshCustomResources(), ...gatewayApiCustomResources()] })
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } })
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } })
  service("shop", 443)
  service("ledger", 8443)
  configMap("shop-ca")
  tlsPolicy("shop-tls", "shop", "shop-ca")
  tlsPolicy("ledger-tls", "ledger", "ledger-ca")
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "front", namespace: NS },
    spec: { gatewayClassName: "mesh", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "shop", namespace: NS },
    spec: { parentRefs: [{ name: "front" }], rules: [{ backendRefs: [{ name: "shop", port: 443 }] }] },
  })
  server.put({
    apiVersion: "gateway.networking.x-k8s.io/v1alpha1",
    kind: "XBackendTrafficPolicy",
    metadata: { name: "ledger-retry", namespace: NS },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: "ledger" }],
      retryConstraint: { budget: { percent: 30 }, minRetryRate: { count: 5 } },
    },
  })
  ;({ daemon: discovery, httpAddr } = await startOrchestratorDiscovery(
    server.kubeconfig(),
    "meshd-policies",
    {},
    120_000,
    { PILOT_ENABLE_ALPHA_GATEWAY_API: "true" },
  ))
  xdsAddr = (await discovery.waitFor(/ADS server listening on ([\d.]+:\d+)/, 90_000))[1]!
}, 200_000)

afterAll(async () => {
  await discovery?.stop()
  await server?.close()
})

describe("backend policies through the built mesh-discovery", () => {
  it("a BackendTLSPolicy makes the Service's cluster originate TLS with its SNI and the ConfigMap's CA", async () => {
    const rules = await until("the generated DestinationRules", destinationRules, (list) =>
      list.some((r) => r.metadata.name === "shop-mesh-autogenerated-k8s-gateway"),
    )
    const shop = rules.find((r) => r.metadata.name === "shop-mesh-autogenerated-k8s-gateway")!
    expect(shop.sources).toEqual([`BackendTLSPolicy/${NS}/shop-tls`])
    expect(shop.spec.trafficPolicy).toEqual({
      tls: { mode: "SIMPLE", credentialName: `configmap://${NS}/shop-ca`, sni: "shop.internal" },
    })
    const served = await until("the shop cluster with TLS", clusters, (list) =>
      list.some((c) => c.includes(`outbound|443||shop.${NS}.svc.cluster.local`) && c.includes("shop.internal")),
    )
    const cluster = served.find((c) => c.includes(`outbound|443||shop.${NS}.svc.cluster.local`))!
    expect(cluster).toContain("envoy.transport_sockets.tls")
    expect(cluster).toContain(`configmap://${NS}/shop-ca-cacert`)
  })

  it("an XBackendTrafficPolicy's retry budget reaches the generated rule", async () => {
    const rules = await until("the ledger rule with a retry budget", destinationRules, (list) =>
      list.some(
        (r) =>
          r.metadata.name === "ledger-mesh-autogenerated-k8s-gateway" &&
          r.spec.trafficPolicy?.retryBudget !== undefined,
      ),
    )
    const ledger = rules.find((r) => r.metadata.name === "ledger-mesh-autogenerated-k8s-gateway")!
    // Oldest first, then by name (whether both were created within one second varies).
    expect([...ledger.sources].sort()).toEqual([
      `BackendTLSPolicy/${NS}/ledger-tls`,
      `XBackendTrafficPolicy/${NS}/ledger-retry`,
    ])
    expect(ledger.spec.trafficPolicy?.retryBudget).toEqual({
      percent: { value: 30 },
      budgetInterval: "10s",
      minRetryConcurrency: 5,
    })
    // The missing CA makes the TLS fail rather than go out unverified.
    expect(ledger.spec.trafficPolicy?.tls).toMatchObject({ credentialName: "invalid://" })
  })

  it("the leader writes the ancestors; a missing CA ConfigMap is NoValidCACertificate until it is written", async () => {
    const ok = ["Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"]
    await until(
      "shop-tls ancestors",
      () => summary(ancestors("BackendTLSPolicy", "shop-tls")),
      (s) => s.length === 2,
    )
    expect(summary(ancestors("BackendTLSPolicy", "shop-tls"))).toEqual([
      ["Service/shop", "mesh.io/mesh-controller", ok],
      ["Gateway/front", "mesh.io/gateway-controller", ok],
    ])
    await until(
      "ledger-tls NoValidCACertificate",
      () => summary(ancestors("BackendTLSPolicy", "ledger-tls")),
      (s) => s.length === 1,
    )
    expect(summary(ancestors("BackendTLSPolicy", "ledger-tls"))).toEqual([
      [
        "Service/ledger",
        "mesh.io/mesh-controller",
        ["Accepted=False/NoValidCACertificate", "ResolvedRefs=False/InvalidCACertificateRef"],
      ],
    ])
    // Each policy kind's status is its own write: wait for this one too.
    expect(
      await until(
        "ledger-retry ancestors",
        () => summary(ancestors("XBackendTrafficPolicy", "ledger-retry", "v1alpha1", "gateway.networking.x-k8s.io")),
        (s) => s.length === 1,
      ),
    ).toEqual([["Service/ledger", "mesh.io/mesh-controller", ["Accepted=True/Accepted"]]])
    configMap("ledger-ca")
    await until(
      "ledger-tls Accepted",
      () => summary(ancestors("BackendTLSPolicy", "ledger-tls")),
      (s) => JSON.stringify(s).includes("Accepted=True"),
    )
    expect(summary(ancestors("BackendTLSPolicy", "ledger-tls"))[0]![2]).toEqual(ok)
    const rules = await until("the ledger rule with its CA", destinationRules, (list) =>
      list.some((r) => JSON.stringify(r.spec).includes(`configmap://${NS}/ledger-ca`)),
    )
    expect(rules.length).toBe(2)
  })
})
