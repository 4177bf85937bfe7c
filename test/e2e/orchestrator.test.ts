/**
 * End to end on the orchestrator: the built `mesh-discovery` with `--orchconfig` pointing at the
 * in-process orchestrator API server, no `--configDir`. A real proxyless gRPC client
 * (@grpc/grpc-js-xds) reaches backends found through Services, EndpointSlices and Pods, follows
 * a pod becoming ready, and a VirtualService custom resource; the mesh ConfigMap, TokenReview-
 * authenticated CSRs, root-cert ConfigMaps, webhook caBundle patching and leader election are
 * observed through the API server. grpc-js-xds reads its bootstrap once per process, so this file
 * owns the process's bootstrap (vitest forks per file).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import * as xds from "@grpc/grpc-js-xds"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { callEcho, type EchoBackend, EchoClient, startEchoBackend } from "../fixtures/xds/echo-backend.js"
import { createCertificateCall, makeCsr } from "../layers/ca/helpers.js"
import { discoveryArgs, proxylessBootstrap } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { StandInType, startStandInProxy } from "../support/proxygen/stand-in-proxy.js"

const NS = "shop"
const HOST = `echo.${NS}.svc.cluster.local`

let server: Orchestrator
/** A second cluster, added through a remote-cluster Secret. */
let remote: Orchestrator
let v3: EchoBackend
let discovery: Daemon
let ads = ""
let monitoring = ""
let httpAddr = ""
let v1: EchoBackend
let v2: EchoBackend
const clients: Array<grpc.Client> = []

const until = async (what: string, check: () => boolean | Promise<boolean>, timeoutMillis = 15_000) => {
  const deadline = Date.now() + timeoutMillis
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const pod = (name: string, ip: string, version: string, ready: boolean) =>
  server.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS, labels: { app: "echo", version } },
    spec: { nodeName: "node-1", serviceAccountName: "echo", containers: [{ name: "echo" }] },
    status: {
      phase: "Running",
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
    },
  })

/** One EndpointSlice per backend: each listens on its own loopback address and port, and a slice's ports apply to all its endpoints. */
const slice = (name: string, podName: string, ip: string, port: number, ready: boolean) =>
  server.put({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace: NS, labels: { "kubernetes.io/service-name": "echo" } },
    addressType: "IPv4",
    endpoints: [{ addresses: [ip], conditions: { ready }, targetRef: { kind: "Pod", namespace: NS, name: podName } }],
    ports: [{ name: "grpc", port, protocol: "TCP" }],
  })

const debug = (path: string) => fetch(`http://${httpAddr}${path}`).then((r) => r.text())
const metric = async (name: string): Promise<number> => {
  const text = await fetch(`http://${monitoring}/metrics`).then((r) => r.text())
  let total = 0
  for (const line of text.split("\n")) if (line.startsWith(name)) total += Number(line.split(" ").pop())
  return total
}

/** Backends answering `count` calls. */
const answers = async (c: grpc.Client, count: number) => {
  const seen = new Set<string>()
  for (let i = 0; i < count; i++) seen.add((await callEcho(c)).backend ?? "error")
  return [...seen].sort()
}

beforeAll(async () => {
  v1 = await startEchoBackend("v1")
  v2 = await startEchoBackend("v2", "127.0.0.2")
  server = await startOrchestrator({ customResources: meshCustomResources(), token: "meshd-token" })
  remote = await startOrchestrator({ token: "remote-token" })
  v3 = await startEchoBackend("v3", "127.0.0.3")
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } })
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } })
  server.put({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "node-1",
      labels: { "topology.kubernetes.io/region": "region1", "topology.kubernetes.io/zone": "zone1" },
    },
  })
  server.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "trustDomain: orch.example\n" },
  })
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "echo", namespace: NS },
    spec: {
      clusterIP: "10.96.0.10",
      selector: { app: "echo" },
      ports: [{ name: "grpc", port: 7070, targetPort: v1.port }],
    },
  })
  pod("echo-v1", "127.0.0.1", "v1", true)
  slice("echo-v1", "echo-v1", "127.0.0.1", v1.port, true)
  pod("echo-v2", "127.0.0.2", "v2", false)
  slice("echo-v2", "echo-v2", "127.0.0.2", v2.port, false)

  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": server.kubeconfig() }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  discovery = startDaemon("mesh-discovery", args, { POD_NAME: "meshd-a", PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: "1s" })
  ads = (await discovery.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
  monitoring = (await discovery.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
  httpAddr = `127.0.0.1:${(await discovery.waitFor(/http listening on [\d.]+:(\d+)/, 30_000))[1]!}`
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = proxylessBootstrap(
    `${ads}`,
    "sidecar~127.0.0.1~client.shop~shop.svc.cluster.local",
  )
  xds.register()
}, 60_000)

afterAll(async () => {
  for (const c of clients) c.close()
  await discovery?.stop()
  await server?.close()
  await remote?.close()
  await v3?.close()
  await v1?.close()
  await v2?.close()
})

const client = () => {
  const c = new EchoClient(`xds:///${HOST}:7070`, grpc.credentials.createInsecure())
  clients.push(c)
  return c
}

describe("mesh-discovery on the orchestrator", () => {
  it("routes a proxyless client to ready pods only, and follows a pod becoming ready", async () => {
    const c = client()
    expect(await answers(c, 6)).toEqual(["v1"])
    const started = Date.now()
    pod("echo-v2", "127.0.0.2", "v2", true)
    slice("echo-v2", "echo-v2", "127.0.0.2", v2.port, true)
    await until("v2 to answer", async () => (await answers(c, 4)).includes("v2"))
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("applies VirtualService and DestinationRule custom resources", async () => {
    server.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "DestinationRule",
      metadata: { name: "echo", namespace: NS },
      spec: {
        host: HOST,
        subsets: [
          { name: "v1", labels: { version: "v1" } },
          { name: "v2", labels: { version: "v2" } },
        ],
      },
    })
    server.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "VirtualService",
      metadata: { name: "echo", namespace: NS },
      spec: { hosts: [HOST], http: [{ route: [{ destination: { host: HOST, subset: "v2" } }] }] },
    })
    const c = client()
    await until("every call to reach v2", async () => (await answers(c, 6)).join() === "v2")
  })

  it("skips an invalid custom resource with a metric and keeps serving the valid ones", async () => {
    const before = await metric("mesh_validation_failed")
    server.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "VirtualService",
      metadata: { name: "broken", namespace: NS },
      spec: { hosts: [HOST], http: [{ route: [{ destination: { host: HOST }, weight: "heavy" }] }] },
    })
    await until("mesh_validation_failed to count it", async () => (await metric("mesh_validation_failed")) > before)
    expect(discovery.output()).toMatch(/VirtualService.*shop\/broken/)
    expect(await answers(client(), 4)).toEqual(["v2"])
  })

  it("reads the mesh ConfigMap and follows its changes", async () => {
    expect(await debug("/debug/mesh")).toContain("orch.example")
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh", namespace: "mesh-system" },
      data: { mesh: "trustDomain: changed.example\n" },
    })
    await until("the new trust domain", async () => (await debug("/debug/mesh")).includes("changed.example"))
    // Back to the trust domain the CA started with: the CA's identities do not follow a change
    // (see the CSR test below).
    server.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "mesh", namespace: "mesh-system" },
      data: { mesh: "trustDomain: orch.example\n" },
    })
    await until("the first trust domain", async () => (await debug("/debug/mesh")).includes("orch.example"))
  })

  it("leads, and as leader keeps mesh-ca-root-cert in every namespace", async () => {
    await until(
      "the Lease",
      () => server.get("coordination.k8s.io/v1", "Lease", "mesh-system", "mesh-leader") !== undefined,
    )
    const lease = server.get("coordination.k8s.io/v1", "Lease", "mesh-system", "mesh-leader") as {
      spec?: { holderIdentity?: string }
    }
    expect(lease.spec?.holderIdentity).toBe("meshd-a")
    const rootCert = () =>
      (server.get("v1", "ConfigMap", NS, "mesh-ca-root-cert") as { data?: Record<string, string> } | undefined)?.data?.[
        "root-cert.pem"
      ]
    await until("the root certificate ConfigMap", () => rootCert()?.includes("BEGIN CERTIFICATE") === true)
    server.remove("v1", "ConfigMap", NS, "mesh-ca-root-cert")
    await until("it to be recreated", () => rootCert()?.includes("BEGIN CERTIFICATE") === true)
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "late" } })
    await until(
      "a ConfigMap in a new namespace",
      () => server.get("v1", "ConfigMap", "late", "mesh-ca-root-cert") !== undefined,
    )
  })

  it("adds a remote cluster from a Secret, and drops it when the Secret goes", async () => {
    remote.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: NS } })
    remote.put({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "echo", namespace: NS },
      spec: { clusterIP: "10.97.0.10", selector: { app: "echo" }, ports: [{ name: "grpc", port: 7070 }] },
    })
    remote.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "echo-v3", namespace: NS, labels: { app: "echo", version: "v3" } },
      spec: { serviceAccountName: "echo", containers: [{ name: "echo" }] },
      status: { phase: "Running", podIP: "127.0.0.3", conditions: [{ type: "Ready", status: "True" }] },
    })
    remote.put({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "echo-v3", namespace: NS, labels: { "kubernetes.io/service-name": "echo" } },
      addressType: "IPv4",
      endpoints: [
        {
          addresses: ["127.0.0.3"],
          conditions: { ready: true },
          targetRef: { kind: "Pod", namespace: NS, name: "echo-v3" },
        },
      ],
      ports: [{ name: "grpc", port: v3.port, protocol: "TCP" }],
    })
    const kubeconfig = readFileSync(remote.kubeconfig(), "utf8")
    server.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "mesh-remote-secret-west", namespace: "mesh-system", labels: { "mesh/multiCluster": "true" } },
      data: { west: Buffer.from(kubeconfig).toString("base64") },
    })
    await until(
      "two managed clusters",
      async () => (await metric('meshd_managed_clusters{cluster_type="remote"}')) === 1,
    )
    // The remote cluster's endpoint joins the local service: without routing rules, calls reach it.
    server.remove("networking.mesh.io/v1", "VirtualService", NS, "echo")
    const c = client()
    await until("the remote backend to answer", async () => (await answers(c, 8)).includes("v3"))
    server.remove("v1", "Secret", "mesh-system", "mesh-remote-secret-west")
    await until("no remote cluster", async () => (await metric('meshd_managed_clusters{cluster_type="remote"}')) === 0)
    await until("the remote backend to be gone", async () => !(await answers(c, 8)).includes("v3"))
  })

  it("issues a certificate to a service-account token the API server reviews, and refuses others", async () => {
    const secure = Number((await discovery.waitFor(/secure gRPC listener on [\d.]+:(\d+)/))[1])
    const rootPem = (
      server.get("v1", "ConfigMap", NS, "mesh-ca-root-cert") as unknown as { data: Record<string, string> }
    ).data["root-cert.pem"]!
    server.addToken(
      "echo-token",
      { username: `system:serviceaccount:${NS}:echo`, groups: ["system:serviceaccounts"] },
      ["mesh-ca"],
    )
    server.addToken(
      "other-audience",
      { username: `system:serviceaccount:${NS}:echo`, groups: ["system:serviceaccounts"] },
      ["elsewhere"],
    )
    const trustDomain = JSON.parse(await debug("/debug/mesh")).trustDomain as string
    const { csrPem } = await makeCsr([`spiffe://${trustDomain}/ns/${NS}/sa/echo`])
    const issued = await createCertificateCall(secure, rootPem, { csr: csrPem }, { token: "echo-token" })
    expect(issued.error).toBeUndefined()
    expect(issued.chain?.[0]).toContain("BEGIN CERTIFICATE")
    const refused = await createCertificateCall(secure, rootPem, { csr: csrPem }, { token: "other-audience" })
    expect(refused.error?.code).toBe(grpc.status.UNAUTHENTICATED)
    expect(server.requestCount({ path: /tokenreviews/ })).toBeGreaterThanOrEqual(2)
  })

  it("registers a WorkloadEntry for a proxy of a WorkloadGroup, follows its health reports, and removes it after the grace period", async () => {
    server.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "WorkloadGroup",
      metadata: { name: "vm", namespace: NS, uid: "wg-uid-1" },
      spec: {
        metadata: { labels: { app: "vm" } },
        template: { serviceAccount: "vm-sa", ports: { grpc: 7070 } },
        probe: { httpGet: { port: 8080, path: "/ready" } },
      },
    })
    const scope = Effect.runSync(Scope.make())
    const entry = () =>
      server.get("networking.mesh.io/v1", "WorkloadEntry", NS, "vm-10.9.8.7") as unknown as
        | {
            metadata: { annotations?: Record<string, string> }
            spec: { address?: string; serviceAccount?: string }
            status?: { conditions?: Array<{ type: string; status: string }> }
          }
        | undefined
    const healthy = () => entry()?.status?.conditions?.find((c) => c.type === "Healthy")?.status
    try {
      const proxy = await Effect.runPromise(
        makeAdsClient({
          address: ads,
          mode: "sotw",
          node: {
            id: `sidecar~10.9.8.7~vm-1.${NS}~${NS}.svc.cluster.local`,
            metadata: plainToStruct({
              GENERATOR: "grpc",
              AUTO_REGISTER_GROUP: "vm",
              INSTANCE_IPS: "10.9.8.7",
              NAMESPACE: NS,
            }),
          },
        }).pipe(Scope.extend(scope)),
      )
      await Effect.runPromise(proxy.subscribe(TypeUrl.Cluster, []))
      await until("the WorkloadEntry", () => entry() !== undefined)
      expect(entry()?.spec).toMatchObject({ address: "10.9.8.7", serviceAccount: "vm-sa" })
      // The agent's health reports (an error detail = unhealthy) set the entry's Healthy condition.
      await Effect.runPromise(proxy.sendRaw({ type_url: "mesh.io/health" }))
      await until("Healthy=True", () => healthy() === "True")
      await Effect.runPromise(
        proxy.sendRaw({ type_url: "mesh.io/health", error_detail: { code: 13, message: "probe failed" } }),
      )
      await until("Healthy=False", () => healthy() === "False")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
    await until("the disconnect mark", () =>
      Object.keys(entry()?.metadata.annotations ?? {}).some((k) => k.includes("disconnectedAt")),
    )
    // PILOT_WORKLOAD_ENTRY_GRACE_PERIOD=1s for this daemon.
    await until("the entry to be removed", () => entry() === undefined)
    expect(await metric("auto_registration_success_total")).toBeGreaterThanOrEqual(1)
  })

  it("patches the validating webhook configuration's caBundle", async () => {
    server.put({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "mesh-mesh-system" },
      webhooks: [
        {
          name: "validation.mesh.io",
          clientConfig: { service: { name: "meshd", namespace: "mesh-system", path: "/validate" } },
          admissionReviewVersions: ["v1"],
          sideEffects: "None",
        },
      ],
    })
    const bundle = () =>
      (
        server.get(
          "admissionregistration.k8s.io/v1",
          "ValidatingWebhookConfiguration",
          undefined,
          "mesh-mesh-system",
        ) as {
          webhooks?: Array<{ clientConfig?: { caBundle?: string } }>
        }
      )?.webhooks?.[0]?.clientConfig?.caBundle
    await until("the caBundle", () => (bundle() ?? "") !== "")
    expect(Buffer.from(bundle()!, "base64").toString()).toContain("BEGIN CERTIFICATE")
    expect(await metric("mesh_validation_config_updates")).toBeGreaterThan(0)
  })

  it("serves a gateway's credential over SDS from its TLS Secret, and pushes the rotated one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gateway-cert-"))
    const certificate = (cn: string) => {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          `/CN=${cn}`,
        ],
        { stdio: "ignore" },
      )
      return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") }
    }
    const putTls = (pair: { cert: string; key: string }) =>
      server.put({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "shop-cert", namespace: NS },
        type: "kubernetes.io/tls",
        data: {
          "tls.crt": Buffer.from(pair.cert).toString("base64"),
          "tls.key": Buffer.from(pair.key).toString("base64"),
        },
      })
    const first = certificate("shop.example.com")
    putTls(first)
    server.put({
      apiVersion: "networking.mesh.io/v1",
      kind: "Gateway",
      metadata: { name: "shop-gateway", namespace: NS },
      spec: {
        selector: { app: "shop-gateway" },
        servers: [
          {
            port: { number: 8443, name: "https", protocol: "HTTPS" },
            hosts: ["shop.example.com"],
            tls: { mode: "SIMPLE", credentialName: "shop-cert" },
          },
        ],
      },
    })
    const proxy = startStandInProxy({
      address: ads,
      node: {
        id: `router~10.1.0.7~shop-gateway-1.${NS}~${NS}.svc.cluster.local`,
        metadata: { NAMESPACE: NS, LABELS: { app: "shop-gateway" } },
      },
    })
    const chain = () => {
      const secret = proxy.resources(StandInType.secret).find((r) => r.name === "kubernetes://shop-cert") as
        | { tls_certificate?: { certificate_chain?: { inline_bytes?: string } } }
        | undefined
      // Decoded as proto JSON: bytes are base64.
      const bytes = secret?.tls_certificate?.certificate_chain?.inline_bytes
      return bytes === undefined ? "" : Buffer.from(bytes, "base64").toString()
    }
    try {
      await proxy.waitFor(() => chain() !== "", 15_000)
      expect(chain()).toBe(first.cert)
      expect(proxy.nacks).toEqual([])
      const rotated = certificate("shop.example.com")
      putTls(rotated)
      await proxy.waitFor(() => chain() === rotated.cert, 15_000)
      // The debug dump shows the secret, its private key redacted.
      const dump = await debug(
        `/debug/config_dump?proxyID=router~10.1.0.7~shop-gateway-1.${NS}~${NS}.svc.cluster.local`,
      )
      expect(dump).toContain("SecretsConfigDump")
      expect(dump).toContain("[redacted]")
      expect(dump).not.toContain(rotated.key.split("\n")[1]!)
    } finally {
      proxy.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
