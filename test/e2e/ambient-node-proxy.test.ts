/**
 * Issue 40 item 1 on the real orchestrator API server: an ambient namespace (labelled
 * `mesh.io/dataplane-mode: ambient`) with two pods on two nodes and their Service, and an
 * AuthorizationPolicy, reach a stand-in node proxy through the built mesh-discovery
 * (PILOT_ENABLE_AMBIENT): our own client over grpc-js, on delta ADS, as the node proxy on node-1
 * (`ztunnel~…` node id). It subscribes to `mesh.workload.Address` and
 * `mesh.security.Authorization` (wildcard) and decodes what it gets with the project's protos;
 * then on demand by address. Its certificates: with a real bound token of its ServiceAccount
 * (`mesh-system/node-proxy`, CA_TRUSTED_NODE_ACCOUNTS) it gets one for the identity of the pod on
 * its node, and is refused one for the pod on node-2 (as the reference: UNAUTHENTICATED with an
 * opaque message, the reason logged, meshca_server_authentication_failure_count counted).
 */
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../src/layers/xds/protos.js"
import { meshCrds } from "../../src/services/install/crds.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { createCertificateCall, makeCsr } from "../layers/ca/helpers.js"
import { discoveryArgs } from "../support/discovery.js"
import { until } from "../support/dns-mesh.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const skip = real.skip

const protos = loadXdsProtos()
const AdsClient = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")
const NODE_ID = "ztunnel~10.0.0.5~node-proxy-1.mesh-system~mesh-system.svc.cluster.local"

let meshd: Daemon | undefined
let ns = ""
let securePort = 0
let monitoring = ""
let rootPem = ""
let vip = ""

// biome-ignore lint/suspicious/noExplicitAny: decoded protos, read field by field
type Decoded = any

interface DeltaResponse {
  readonly type_url: string
  readonly nonce: string
  readonly resources?: ReadonlyArray<{ name: string; resource: { value: Buffer } }>
  readonly removed_resources?: ReadonlyArray<string>
}

/** The stand-in node proxy: one delta ADS stream, every response kept and acknowledged. */
/** A delta ADS client as `nodeId` (the stand-in node proxy by default, or a sidecar). */
const nodeProxy = (address: string, nodeId = NODE_ID) => {
  const client = new AdsClient(address, grpc.credentials.createInsecure())
  const stream = (
    client as unknown as Record<string, () => grpc.ClientDuplexStream<object, DeltaResponse>>
  ).DeltaAggregatedResources!.call(client)
  const responses: Array<DeltaResponse> = []
  let error: grpc.ServiceError | undefined
  stream.on("data", (response: DeltaResponse) => {
    responses.push(response)
    stream.write({ type_url: response.type_url, response_nonce: response.nonce })
  })
  stream.on("error", (e: grpc.ServiceError) => {
    error = e
  })
  let first = true
  return {
    responses,
    error: () => error,
    subscribe: (typeUrl: string, names: ReadonlyArray<string> = []) => {
      stream.write({
        ...(first ? { node: { id: nodeId } } : {}),
        type_url: typeUrl,
        resource_names_subscribe: names,
      })
      first = false
    },
    /** What the client holds of a type after every response so far: name → decoded resource. */
    held: (typeUrl: string): Map<string, Decoded> => {
      const out = new Map<string, Decoded>()
      for (const r of responses.filter((x) => x.type_url === typeUrl)) {
        for (const name of r.removed_resources ?? []) out.delete(name)
        for (const entry of r.resources ?? []) out.set(entry.name, protos.codec.decode(typeUrl, entry.resource.value))
      }
      return out
    },
    bytes: (typeUrl: string) =>
      responses
        .filter((x) => x.type_url === typeUrl)
        .flatMap((x) => x.resources ?? [])
        .reduce((n, e) => n + e.resource.value.length, 0),
    close: () => {
      stream.cancel()
      client.close()
    },
  }
}

const pod = async (name: string, node: string, serviceAccount: string, ip: string, labels: Record<string, string>) => {
  const orch = real.get()
  const namespace = name.startsWith("node-proxy") ? "mesh-system" : ns
  const created = await orch.ok("POST", `/api/v1/namespaces/${namespace}/pods`, {
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        labels,
        // What the CNI writes once the pod's traffic goes to the node proxy.
        ...(namespace === ns ? { annotations: { "ambient.mesh.io/redirection": "enabled" } } : {}),
      },
      spec: { nodeName: node, serviceAccountName: serviceAccount, containers: [{ name: "c", image: "example/c:1" }] },
    },
  })
  // A Pod's status is the kubelet's to write: through the status subresource.
  return orch.ok("PUT", `/api/v1/namespaces/${namespace}/pods/${name}/status`, {
    body: {
      ...created,
      status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
    },
  })
}

const counter = async (name: string): Promise<number> => {
  const text = await (await fetch(`http://${monitoring}/metrics`)).text()
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name} `) || l.startsWith(name.includes("{") ? name : `${name}{`))
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1))
}

beforeAll(async () => {
  if (skip) return
  const orch = real.get()
  for (const crd of meshCrds({}).filter((c) => (c.spec as Decoded)?.names?.kind === "AuthorizationPolicy"))
    await orch.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd })
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } },
  })
  await orch.ok("POST", "/api/v1/namespaces/mesh-system/serviceaccounts", {
    body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "node-proxy" } },
  })
  ns = await orch.namespace("ambient", { "mesh.io/dataplane-mode": "ambient" })
  for (const name of ["alpha", "beta"])
    await orch.ok("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
    })
  // The node proxy of node-1, and one pod of the namespace on each node.
  await pod("node-proxy-1", "node-1", "node-proxy", "10.0.0.5", { app: "node-proxy" })
  await pod("web-1", "node-1", "alpha", "10.2.0.1", { app: "web" })
  await pod("web-2", "node-2", "beta", "10.2.0.2", { app: "web" })
  vip = (
    await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web" },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
      },
    })
  ).spec.clusterIP
  await orch.ok("POST", `/apis/security.mesh.io/v1/namespaces/${ns}/authorizationpolicies`, {
    body: {
      apiVersion: "security.mesh.io/v1",
      kind: "AuthorizationPolicy",
      metadata: { name: "allow-alpha" },
      spec: {
        selector: { matchLabels: { app: "web" } },
        action: "ALLOW",
        rules: [
          {
            from: [{ source: { principals: [`cluster.local/ns/${ns}/sa/alpha`] } }],
            to: [{ operation: { ports: ["8080"] } }],
          },
        ],
      },
    },
  })

  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orch.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  meshd = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-ambient",
    POD_NAMESPACE: "mesh-system",
    PILOT_ENABLE_AMBIENT: "true",
    CA_TRUSTED_NODE_ACCOUNTS: "mesh-system/node-proxy",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "200ms",
  })
  await meshd.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000)
  securePort = Number((await meshd.waitFor(/secure gRPC listener on [\d.]+:(\d+)/, 30_000))[1])
  monitoring = (await meshd.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
  rootPem = await until(
    "the root certificate ConfigMap",
    async () => {
      const map = await orch.api("GET", `/api/v1/namespaces/${ns}/configmaps/mesh-ca-root-cert`)
      return map.status === 200 ? (map.body.data?.["root-cert.pem"] as string | undefined) : undefined
    },
    30_000,
  )
}, 120_000)

afterAll(async () => {
  await meshd?.stop("SIGKILL")
})

describe.skipIf(skip)("the node proxy's workload API and certificates on the real orchestrator API server", () => {
  it("a stand-in node proxy gets both pods' workloads, their Service and the L4 policy over delta ADS", async () => {
    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    const proxy = nodeProxy(ads)
    try {
      proxy.subscribe(TypeUrl.Address)
      proxy.subscribe(TypeUrl.Authorization)
      const web1 = `Orchestrator//Pod/${ns}/web-1`
      const web2 = `Orchestrator//Pod/${ns}/web-2`
      const svc = `${ns}/web.${ns}.svc.cluster.local`
      await until(
        "both workloads, the Service and the policy",
        async () => {
          if (proxy.error() !== undefined) throw proxy.error()
          const held = proxy.held(TypeUrl.Address)
          return held.has(web1) && held.has(web2) && held.has(svc) && proxy.held(TypeUrl.Authorization).size > 0
            ? true
            : undefined
        },
        30_000,
      )
      const held = proxy.held(TypeUrl.Address)
      const w1 = held.get(web1).workload
      expect(w1).toMatchObject({
        uid: web1,
        name: "web-1",
        namespace: ns,
        node: "node-1",
        service_account: "alpha",
        tunnel_protocol: "HBONE",
        cluster_id: "Orchestrator",
        authorization_policies: [`${ns}/allow-alpha`],
      })
      // Addresses travel as bytes (base64 in the decoded JSON form).
      expect(Buffer.from(w1.addresses[0], "base64")).toEqual(Buffer.from([10, 2, 0, 1]))
      expect(w1.services[`${ns}/web.${ns}.svc.cluster.local`]).toEqual({
        ports: [{ service_port: 80, target_port: 8080 }],
      })
      expect(held.get(web2).workload).toMatchObject({ node: "node-2", service_account: "beta" })
      const service = held.get(svc).service
      expect(service).toMatchObject({ name: "web", namespace: ns, hostname: `web.${ns}.svc.cluster.local` })
      expect(Buffer.from(service.addresses[0].address, "base64").join(".")).toBe(vip)
      const policy = proxy.held(TypeUrl.Authorization).get(`${ns}/allow-alpha`)
      expect(policy).toMatchObject({ name: "allow-alpha", namespace: ns, scope: "WORKLOAD_SELECTOR" })
      expect(policy.groups[0].rules[0].matches[0].destination_ports).toEqual([8080])
      expect(policy.groups[0].rules[1].matches[0].principals).toMatchObject([
        { exact: `cluster.local/ns/${ns}/sa/alpha` },
      ])
      const addressResponses = proxy.responses.filter((r) => r.type_url === TypeUrl.Address)
      console.info(
        `node proxy received: ${held.size} addresses (${proxy.bytes(TypeUrl.Address)} bytes in ${addressResponses.length} responses), ` +
          `${proxy.held(TypeUrl.Authorization).size} authorizations (${proxy.bytes(TypeUrl.Authorization)} bytes)`,
      )

      // A pod that goes away is removed from the node proxy, and the push is the node proxy's
      // alone: a sidecar connected meanwhile is not pushed (each push observes the convergence
      // time once per connection it reaches, and the debounce time once).
      const sidecar = nodeProxy(ads, `sidecar~10.2.0.1~web-1.${ns}~${ns}.svc.cluster.local`)
      sidecar.subscribe(TypeUrl.Cluster)
      await until(
        "the sidecar's clusters",
        async () => (sidecar.held(TypeUrl.Cluster).size > 0 ? true : undefined),
        30_000,
      )
      const pushes = async () => ({
        pushes: await counter("pilot_debounce_time_count"),
        reached: await counter("pilot_proxy_convergence_time_count"),
      })
      const before = await pushes()
      await real.get().ok("DELETE", `/api/v1/namespaces/${ns}/pods/web-2?gracePeriodSeconds=0`)
      await until("web-2 removed", async () => (proxy.held(TypeUrl.Address).has(web2) ? undefined : true), 30_000)
      expect(proxy.responses.some((r) => (r.removed_resources ?? []).includes(web2))).toBe(true)
      const after = await until(
        "the pushes' convergence observed",
        async () => {
          const now = await pushes()
          return now.reached - before.reached >= now.pushes - before.pushes ? now : undefined
        },
        10_000,
      )
      expect(after.pushes - before.pushes).toBeGreaterThanOrEqual(1)
      expect(after.reached - before.reached).toBe(after.pushes - before.pushes)
      sidecar.close()
    } finally {
      proxy.close()
    }
  })

  it("on demand: a second node proxy asking for an address gets that workload alone", async () => {
    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    const proxy = nodeProxy(ads)
    try {
      proxy.subscribe(TypeUrl.Address, ["/10.2.0.1", `/${vip}`])
      await until("the two addresses", async () => (proxy.held(TypeUrl.Address).size === 2 ? true : undefined), 30_000)
      const held = proxy.held(TypeUrl.Address)
      expect(held.get("/10.2.0.1").workload.name).toBe("web-1")
      expect(held.get(`/${vip}`).service.name).toBe("web")
    } finally {
      proxy.close()
    }
  })

  it("the node proxy gets a certificate for the pod on its node and is refused one for the pod on node-2", async () => {
    const orch = real.get()
    const nodeProxyPod = await orch.ok("GET", "/api/v1/namespaces/mesh-system/pods/node-proxy-1")
    // A real bound token of mesh-system/node-proxy, bound to its pod on node-1.
    const token = (
      await orch.ok("POST", "/api/v1/namespaces/mesh-system/serviceaccounts/node-proxy/token", {
        body: {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: {
            audiences: ["mesh-ca"],
            boundObjectRef: { kind: "Pod", apiVersion: "v1", name: "node-proxy-1", uid: nodeProxyPod.metadata.uid },
          },
        },
      })
    ).status.token as string
    const alpha = `spiffe://cluster.local/ns/${ns}/sa/alpha`
    const beta = `spiffe://cluster.local/ns/${ns}/sa/beta`
    const granted = await createCertificateCall(
      securePort,
      rootPem,
      { csr: (await makeCsr([alpha])).csrPem, metadata: { ImpersonatedIdentity: alpha } },
      { token },
    )
    expect(granted.error).toBeUndefined()
    expect(granted.chain!.length).toBeGreaterThan(0)

    const failuresBefore = await counter("meshca_server_authentication_failure_count")
    const refused = await createCertificateCall(
      securePort,
      rootPem,
      { csr: (await makeCsr([beta])).csrPem, metadata: { ImpersonatedIdentity: beta } },
      { token },
    )
    expect(refused.error?.code).toBe(grpc.status.UNAUTHENTICATED)
    expect(refused.error?.details).toBe("request impersonation authentication failure")
    await meshd!.waitFor(
      new RegExp(`impersonation of ${beta.replaceAll("/", "\\/")} refused: no pod of ${ns}/beta runs on node node-1`),
    )
    expect(await counter("meshca_server_authentication_failure_count")).toBe(failuresBefore + 1)
    expect(await counter('meshca_server_node_authorization_refused_count{reason="not_on_node"}')).toBe(1)
    // Its own identity needs no impersonation; another node proxy's token cannot ask for alpha.
    const own = await createCertificateCall(
      securePort,
      rootPem,
      { csr: (await makeCsr(["spiffe://cluster.local/ns/mesh-system/sa/node-proxy"])).csrPem },
      { token },
    )
    expect(own.error).toBeUndefined()
  })
})
