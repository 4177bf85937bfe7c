/**
 * Issue 46 end to end: the built mesh-agent's DNS proxy, fed by the built mesh-discovery on the
 * in-process orchestrator (the real API server is not in the tests yet), answers the real `dig`
 * as the reference's DNS proxy does, over UDP and TCP:
 * 1. a fully qualified name with the first search domain appended again goes upstream (it is
 *    not the mesh's), while a short form with it appended is a CNAME to the short form;
 * 2. below a wildcard ServiceEntry's search expansion: a CNAME to `*.<domain>` and the addresses
 *    under `*.<domain>`; below the wildcard itself, the addresses under the asked name;
 * 3. orchestrator Services answer under `name.` (own namespace only), `name.ns.`, `name.ns.svc.`
 *    and their FQDN; a headless Service with its ready endpoints. (Multi-cluster
 *    `name.ns.svc.clusterset.local` hosts need ServiceExport/ServiceImport in the registry, which
 *    it does not read yet: the agent's side is covered by the unit tests of the lookup table.)
 * 4. the resolv.conf the proxy reads is the one DNS_PROXY_RESOLV_CONF names: its search domain
 *    and its nameserver (the stand-in upstream on 127.0.0.153:53).
 * Types other than A and AAAA are forwarded, as the reference forwards them. The deliberate
 * difference (an oversized UDP reply is truncated with TC, not turned into SERVFAIL) is covered
 * in test/layers/agent/dns/dns-proxy.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type Agent,
  type ControlPlane,
  POD_RESOLV_CONF,
  startAgent,
  startControlPlane,
  startUpstream,
  type Upstream,
  until,
  upstreamUnavailable,
} from "../support/dns-mesh.js"

const unavailable = await upstreamUnavailable()
const skip = unavailable !== undefined && process.env.CI !== "true"
if (skip) console.warn(`skipping the DNS proxy end-to-end tests: ${unavailable}`)

const service = (name: string, namespace: string, clusterIP: string) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace },
  spec: { clusterIP, selector: { app: name }, ports: [{ name: "http", port: 9080, targetPort: 9080 }] },
})

const pod = (name: string, ip: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", labels: { app: "db" } },
  spec: { nodeName: "node-1", serviceAccountName: "db", containers: [{ name: "db" }] },
  status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
})

const objects = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } },
  service("reviews", "default", "10.96.0.10"),
  service("ratings", "other", "10.96.0.20"),
  // headless: the agent answers with the endpoints' addresses
  service("db", "default", "None"),
  pod("db-0", "10.1.0.1"),
  pod("db-1", "10.1.0.2"),
  {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "db-a", namespace: "default", labels: { "kubernetes.io/service-name": "db" } },
    addressType: "IPv4",
    endpoints: [
      {
        addresses: ["10.1.0.1"],
        conditions: { ready: true },
        targetRef: { kind: "Pod", namespace: "default", name: "db-0" },
      },
      {
        addresses: ["10.1.0.2"],
        conditions: { ready: true },
        targetRef: { kind: "Pod", namespace: "default", name: "db-1" },
      },
    ],
    ports: [{ name: "http", port: 9080, protocol: "TCP" }],
  },
  {
    apiVersion: "networking.mesh.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "wild", namespace: "default" },
    spec: {
      hosts: ["*.wild.example.com"],
      addresses: ["240.0.0.9"],
      location: "MESH_EXTERNAL",
      resolution: "NONE",
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    },
  },
  {
    apiVersion: "networking.mesh.io/v1",
    kind: "ServiceEntry",
    metadata: { name: "api", namespace: "default" },
    spec: {
      hosts: ["api.example.com"],
      addresses: ["240.0.0.1"],
      location: "MESH_EXTERNAL",
      resolution: "STATIC",
      endpoints: [{ address: "192.0.2.1" }],
      ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    },
  },
]

let cp: ControlPlane | undefined
let agent: Agent | undefined
let upstream: Upstream | undefined

beforeAll(async () => {
  if (skip) return
  if (unavailable !== undefined) throw new Error(unavailable)
  upstream = await startUpstream({ "ok.example.org": "198.51.100.7" })
  cp = await startControlPlane(objects)
  agent = await startAgent(cp, { resolvConf: POD_RESOLV_CONF })
  // the table has arrived once the mesh's names answer
  await until("the name table", async () =>
    (await agent!.dig("reviews.default.svc.cluster.local")).answers.length > 0 ? true : undefined,
  )
}, 90_000)

afterAll(async () => {
  await agent?.close()
  await cp?.close()
  await upstream?.close()
})

const TRANSPORTS = [[], ["+tcp"]] as const

/** dig over UDP and TCP; both must give the same answer. */
const both = async (name: string, type = "A") => {
  const [udp, tcp] = await Promise.all(TRANSPORTS.map((t) => agent!.dig(...t, name, type)))
  // addresses rotate from one query to the next
  expect([...tcp!.answers].sort()).toEqual([...udp!.answers].sort())
  expect(tcp!.status).toBe(udp!.status)
  return udp!
}

/** Whether the upstream was asked `name` since `from` (an index into `seen`). */
const asked = (name: string, from: number) => upstream!.seen.slice(from).some((s) => s.name === name)

describe.skipIf(skip)("the agent's DNS proxy answers as the reference's (dig, built agent and control plane)", () => {
  it("1: forwards a fully qualified name with the first search domain appended again; a short form with it is a CNAME", async () => {
    const from = upstream!.seen.length
    const double = "reviews.default.svc.cluster.local.default.svc.cluster.local"
    const forwarded = await both(double)
    expect(forwarded.status).toBe("NXDOMAIN")
    expect(forwarded.flags).not.toContain("aa")
    expect(asked(double, from)).toBe(true)

    const expanded = await both("reviews.default.default.svc.cluster.local")
    expect(expanded.flags).toContain("aa")
    expect(expanded.answers).toEqual([
      "reviews.default.default.svc.cluster.local. CNAME reviews.default.",
      "reviews.default. A 10.96.0.10",
    ])
    const external = await both("api.example.com.default.svc.cluster.local")
    expect(external.answers).toEqual([
      "api.example.com.default.svc.cluster.local. CNAME api.example.com.",
      "api.example.com. A 240.0.0.1",
    ])
    expect(asked("reviews.default.default.svc.cluster.local", from)).toBe(false)
  })

  it("2: below a wildcard's search expansion answers CNAME to the wildcard and the A record under it", async () => {
    const expanded = await both("foo.wild.example.com.default.svc.cluster.local")
    expect(expanded.status).toBe("NOERROR")
    expect(expanded.answers).toEqual([
      "foo.wild.example.com.default.svc.cluster.local. CNAME *.wild.example.com.",
      "*.wild.example.com. A 240.0.0.9",
    ])
    expect((await both("a.b.wild.example.com.default.svc.cluster.local")).answers).toEqual([
      "a.b.wild.example.com.default.svc.cluster.local. CNAME *.wild.example.com.",
      "*.wild.example.com. A 240.0.0.9",
    ])
    // below the wildcard itself: under the asked name
    expect((await both("foo.wild.example.com")).answers).toEqual(["foo.wild.example.com. A 240.0.0.9"])
    // a v4-only wildcard has no AAAA: an empty answer, not a lone CNAME
    const v6 = await both("foo.wild.example.com.default.svc.cluster.local", "AAAA")
    expect([v6.status, v6.answers]).toEqual(["NOERROR", []])
  })

  it("3: orchestrator Services answer under name. (own namespace), name.ns., name.ns.svc. and their FQDN", async () => {
    for (const name of ["reviews.", "reviews.default.", "reviews.default.svc.", "reviews.default.svc.cluster.local."]) {
      const answer = await both(name)
      expect(answer.flags).toContain("aa")
      expect(answer.answers).toEqual([`${name} A 10.96.0.10`])
    }
    for (const name of ["ratings.other.", "ratings.other.svc.", "ratings.other.svc.cluster.local."])
      expect((await both(name)).answers).toEqual([`${name} A 10.96.0.20`])
    // another namespace's bare name is not the mesh's
    const from = upstream!.seen.length
    expect((await both("ratings.")).status).toBe("NXDOMAIN")
    expect(asked("ratings", from)).toBe(true)
    // headless: every ready endpoint
    const db = await both("db.default.")
    expect([...db.answers].sort()).toEqual(["db.default. A 10.1.0.1", "db.default. A 10.1.0.2"])
  })

  it("4: reads the resolv.conf DNS_PROXY_RESOLV_CONF names: its nameserver and its search domains", async () => {
    expect(agent!.daemon.output()).toMatch(
      /DNS proxy listening on 127\.0\.0\.1 port \d+ \(udp, tcp\); upstream 127\.0\.0\.153:53; search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/,
    )
    const from = upstream!.seen.length
    expect((await agent!.dig("ok.example.org")).answers).toEqual(["ok.example.org. A 198.51.100.7"])
    expect((await agent!.dig("+tcp", "ok.example.org")).answers).toEqual(["ok.example.org. A 198.51.100.7"])
    expect(upstream!.seen.slice(from)).toEqual([
      { name: "ok.example.org", transport: "udp" },
      { name: "ok.example.org", transport: "tcp" },
    ])
  })

  it("forwards types other than A and AAAA, even of a mesh name", async () => {
    const from = upstream!.seen.length
    expect((await both("reviews.default.svc.cluster.local", "TXT")).status).toBe("NXDOMAIN")
    expect(asked("reviews.default.svc.cluster.local", from)).toBe(true)
  })
})
