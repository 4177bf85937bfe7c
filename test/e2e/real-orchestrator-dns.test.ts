/**
 * Issue 46 point 3 on the real orchestrator API server: Services created through kube-apiserver
 * (cluster IPs allocated by it; a headless Service with Pods and an EndpointSlice) reach the built
 * mesh-agent's DNS proxy through the built mesh-discovery, and the real `dig` gets them under
 * `name.` (own namespace only), `name.ns.`, `name.ns.svc.` and the FQDN. The agent's token is a
 * real ServiceAccount token (TokenRequest, audience mesh-ca) that meshd's CA reviews with the API
 * server. The agent's resolv.conf names the stand-in upstream (127.0.0.153:53), never the machine's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs } from "../support/discovery.js"
import {
  type Agent,
  POD_RESOLV_CONF,
  startAgent,
  startUpstream,
  type Upstream,
  until,
  upstreamUnavailable,
} from "../support/dns-mesh.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const unavailable = real.skip ? undefined : await upstreamUnavailable()
const skip = real.skip || (unavailable !== undefined && process.env.CI !== "true")
if (unavailable !== undefined && skip) console.warn(`skipping the DNS tests on the real API server: ${unavailable}`)

let meshd: Daemon | undefined
let agent: Agent | undefined
let upstream: Upstream | undefined
let other = ""
const clusterIps: Record<string, string> = {}

const service = (name: string, clusterIP?: string) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name },
  spec: {
    ...(clusterIP !== undefined ? { clusterIP } : {}),
    selector: { app: name },
    ports: [{ name: "http", port: 9080, targetPort: 9080 }],
  },
})

beforeAll(async () => {
  if (skip) return
  if (unavailable !== undefined) throw new Error(unavailable)
  const orch = real.get()
  upstream = await startUpstream({ "ok.example.org": "198.51.100.7" })
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } },
  })
  // `default` exists on a real server; its accounts are the controller-manager's to make (not run here).
  for (const name of ["default", "app", "db"])
    await orch.ok("POST", "/api/v1/namespaces/default/serviceaccounts", {
      body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name } },
    })
  other = await orch.namespace("other")
  clusterIps.reviews = (
    await orch.ok("POST", "/api/v1/namespaces/default/services", { body: service("reviews") })
  ).spec.clusterIP
  clusterIps.ratings = (
    await orch.ok("POST", `/api/v1/namespaces/${other}/services`, { body: service("ratings") })
  ).spec.clusterIP
  const headless = await orch.ok("POST", "/api/v1/namespaces/default/services", { body: service("db", "None") })
  expect(headless.spec.clusterIP).toBe("None")
  for (const [name, ip] of [
    ["db-0", "10.1.0.1"],
    ["db-1", "10.1.0.2"],
  ] as const) {
    const created = await orch.ok("POST", "/api/v1/namespaces/default/pods", {
      body: {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, labels: { app: "db" } },
        spec: { nodeName: "node-1", serviceAccountName: "db", containers: [{ name: "db", image: "example/db:1" }] },
      },
    })
    // A Pod's status is the kubelet's to write: through the status subresource.
    await orch.ok("PUT", `/api/v1/namespaces/default/pods/${name}/status`, {
      body: {
        ...created,
        status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
      },
    })
  }
  await orch.ok("POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", {
    body: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "db-a", labels: { "kubernetes.io/service-name": "db" } },
      addressType: "IPv4",
      endpoints: ["db-0", "db-1"].map((pod, i) => ({
        addresses: [`10.1.0.${i + 1}`],
        conditions: { ready: true },
        targetRef: { kind: "Pod", namespace: "default", name: pod },
      })),
      ports: [{ name: "http", port: 9080, protocol: "TCP" }],
    },
  })

  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orch.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  meshd = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-dns",
    POD_NAMESPACE: "mesh-system",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "200ms",
  })
  const ads = (await meshd.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000))[1]!
  const securePort = Number((await meshd.waitFor(/secure gRPC listener on [\d.]+:(\d+)/, 30_000))[1])
  agent = await startAgent(
    {
      ads,
      securePort,
      rootCert: async () => {
        const map = await orch.api("GET", "/api/v1/namespaces/default/configmaps/mesh-ca-root-cert")
        return map.status === 200 ? (map.body.data?.["root-cert.pem"] as string | undefined) : undefined
      },
      // A real bound token of default/app for meshd's CA, reviewed by the API server.
      appToken: async () =>
        (
          await orch.ok("POST", "/api/v1/namespaces/default/serviceaccounts/app/token", {
            body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences: ["mesh-ca"] } },
          })
        ).status.token as string,
    },
    { resolvConf: POD_RESOLV_CONF },
  )
  await until(
    "the name table",
    async () => ((await agent!.dig("reviews.default.svc.cluster.local")).answers.length > 0 ? true : undefined),
    30_000,
  )
}, 120_000)

afterAll(async () => {
  await agent?.close()
  await meshd?.stop("SIGKILL")
  await upstream?.close()
})

/** dig over UDP and TCP; both must give the same answer. */
const both = async (name: string) => {
  const [udp, tcp] = await Promise.all([agent!.dig(name, "A"), agent!.dig("+tcp", name, "A")])
  expect([...tcp!.answers].sort()).toEqual([...udp!.answers].sort())
  expect(tcp!.status).toBe(udp!.status)
  return udp!
}

describe.skipIf(skip)("the agent's DNS proxy with Services from the real orchestrator API server", () => {
  it("answers ClusterIP Services under name. (own namespace), name.ns., name.ns.svc. and the FQDN", async () => {
    const reviews = clusterIps.reviews!
    expect(reviews).toMatch(/^10\.96\./)
    for (const name of ["reviews.", "reviews.default.", "reviews.default.svc.", "reviews.default.svc.cluster.local."]) {
      const answer = await both(name)
      expect(answer.flags).toContain("aa")
      expect(answer.answers).toEqual([`${name} A ${reviews}`])
    }
    for (const name of [`ratings.${other}.`, `ratings.${other}.svc.`, `ratings.${other}.svc.cluster.local.`])
      expect((await both(name)).answers).toEqual([`${name} A ${clusterIps.ratings}`])
    // Another namespace's bare name is not the mesh's: forwarded to the stand-in, which knows nothing.
    const from = upstream!.seen.length
    expect((await both("ratings.")).status).toBe("NXDOMAIN")
    expect(upstream!.seen.slice(from).some((s) => s.name === "ratings")).toBe(true)
  })

  it("answers a headless Service with its ready endpoints under every form", async () => {
    for (const name of ["db.", "db.default.", "db.default.svc.", "db.default.svc.cluster.local."]) {
      const answer = await both(name)
      expect([...answer.answers].sort()).toEqual([`${name} A 10.1.0.1`, `${name} A 10.1.0.2`])
    }
  })

  it("follows a Service created later and forgets a deleted one", async () => {
    const orch = real.get()
    const late = await orch.ok("POST", "/api/v1/namespaces/default/services", { body: service("late") })
    await until("the new Service in the name table", async () =>
      (await agent!.dig("late.default.")).answers.includes(`late.default. A ${late.spec.clusterIP}`) ? true : undefined,
    )
    await orch.ok("DELETE", "/api/v1/namespaces/default/services/late")
    await until("the deleted Service out of the name table", async () =>
      (await agent!.dig("late.default.")).answers.length === 0 ? true : undefined,
    )
  })
})
