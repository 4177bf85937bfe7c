import { join } from "node:path"
import protobuf from "protobufjs"
import { describe, expect, it } from "vitest"
import type { Endpoint, Service } from "../../../../../src/services/registry/model.js"
import {
  generateNameTable,
  NAME_TABLE_TYPE,
  NDS_PROTO_FILE,
} from "../../../../../src/services/xds/proxygen/nds/index.js"
import { ROOT } from "../../../../support/processes.js"
import { problems, pushOf, router, sidecar } from "../telemetry/support.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const svc = (hostname: string, parts: Partial<Service> = {}): Service => ({
  hostname,
  namespace: "default",
  ports: [{ name: "http", port: 80, protocol: "HTTP" }],
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "ServiceEntry",
  clusterId: "c1",
  ...parts,
})

const ep = (hostname: string, address: string, parts: Partial<Endpoint> = {}): Endpoint => ({
  hostname,
  namespace: "default",
  servicePortName: "http",
  address,
  port: 8080,
  labels: {},
  serviceAccount: "default",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "c1",
  ...parts,
})

const capture = (metadata: Record<string, unknown> = {}, namespace = "default") =>
  sidecar(namespace, {}, { DNS_CAPTURE: "true", CLUSTER_ID: "c1", NETWORK: "n1", ...metadata })

const REVIEWS = "reviews.default.svc.cluster.local"
const DB = "db.default.svc.cluster.local"

const services = [
  svc(REVIEWS, { addresses: ["10.96.0.10"], registry: "Orchestrator", source: "Service/default/reviews" }),
  svc(DB, { resolution: "NONE", registry: "Orchestrator", source: "Service/default/db" }),
  svc("api.example.com", { addresses: ["240.0.0.1", "192.168.0.0/16"] }),
  svc("auto.example.com", { resolution: "DNS", autoAllocatedAddresses: ["240.240.0.7"] }),
  svc("*.wild.example.com", { resolution: "NONE", addresses: ["240.0.0.9"] }),
  svc("private.team.svc.cluster.local", { namespace: "team", addresses: ["10.96.0.99"], exportTo: ["."] }),
]
const endpoints = [
  ep(DB, "10.1.0.1", { network: "n1" }),
  ep(DB, "10.2.0.1", { clusterId: "c2", network: "n1" }),
  ep(DB, "10.3.0.1", { clusterId: "c3", network: "n2" }),
  ep(DB, "10.1.0.2", { healthStatus: "UNHEALTHY" }),
  ep(DB, "10.1.0.3", { servicePortName: "metrics" }),
  ep(DB, "10.1.0.1", { servicePortName: "http", port: 9090 }),
]
const push = pushOf({ services, endpoints })

const table = (p = push, proxy = capture()) => {
  const generated = generateNameTable(p, proxy)
  expect(generated.resources.map((r) => r.name)).toEqual([""])
  return (generated.resources[0]!.build() as J).table
}

describe("NDS name table", () => {
  it("VIPs, headless endpoints from every cluster of the proxy's network, orchestrator short forms", () => {
    expect(table()).toEqual({
      [REVIEWS]: {
        ips: ["10.96.0.10"],
        registry: "Orchestrator",
        shortname: "reviews",
        namespace: "default",
      },
      [DB]: {
        ips: ["10.1.0.1", "10.2.0.1"],
        registry: "Orchestrator",
        shortname: "db",
        namespace: "default",
      },
      "api.example.com": { ips: ["240.0.0.1"], registry: "ServiceEntry" },
      "*.wild.example.com": { ips: ["240.0.0.9"], registry: "ServiceEntry" },
    })
  })

  it("a multi-cluster host of the orchestrator gets no short forms (they would clash with the cluster-local service's)", () => {
    const mcs = pushOf({
      services: [
        svc("echo.default.svc.clusterset.local", {
          addresses: ["10.97.0.1"],
          registry: "Orchestrator",
          source: "Service/default/echo",
        }),
      ],
      endpoints: [],
    })
    expect(table(mcs)).toEqual({
      "echo.default.svc.clusterset.local": { ips: ["10.97.0.1"], registry: "Orchestrator" },
    })
  })

  it("headless: healthy endpoints of every service port, each address once; draining ones left out", () => {
    const headless = pushOf({
      services: [
        svc(DB, {
          resolution: "NONE",
          registry: "Orchestrator",
          source: "Service/default/db",
          ports: [
            { name: "http", port: 80, protocol: "HTTP" },
            { name: "metrics", port: 9090, protocol: "HTTP" },
          ],
        }),
      ],
      endpoints: [
        ep(DB, "10.1.0.1", { network: "n1" }),
        ep(DB, "10.1.0.1", { network: "n1", servicePortName: "metrics" }),
        ep(DB, "10.1.0.4", { network: "n1", servicePortName: "metrics" }),
        ep(DB, "10.1.0.5", { network: "n1", healthStatus: "DRAINING" }),
        ep(DB, "10.1.0.6", { network: "n1", servicePortName: "admin" }),
      ],
    })
    expect(table(headless)[DB].ips).toEqual(["10.1.0.1", "10.1.0.4"])
  })

  it("wildcard hosts: kept under their own key with the addresses their entry gives, never allocated ones", () => {
    const wild = pushOf({
      services: [
        svc("*.vip.example.com", { resolution: "NONE", addresses: ["240.0.0.20", "2001:db8::20"] }),
        svc("*.bare.example.com", { resolution: "NONE" }),
        // the registry puts the allocated address into `addresses` as well
        svc("*.auto.example.com", {
          resolution: "DNS",
          addresses: ["240.240.0.8"],
          autoAllocatedAddresses: ["240.240.0.8"],
        }),
        svc("*", { resolution: "NONE", addresses: ["240.0.0.21"] }),
        svc("*.headless.example.com", { resolution: "NONE" }),
      ],
      endpoints: [ep("*.headless.example.com", "10.1.0.7", { network: "n1" })],
    })
    for (const proxy of [capture(), capture({ DNS_AUTO_ALLOCATE: "true" })]) {
      expect(table(wild, proxy)).toEqual({
        "*.vip.example.com": { ips: ["240.0.0.20", "2001:db8::20"], registry: "ServiceEntry" },
        // resolution NONE without a VIP: its endpoints' addresses, as any headless host
        "*.headless.example.com": { ips: ["10.1.0.7"], registry: "ServiceEntry" },
      })
    }
  })

  it("auto-allocated VIPs only for proxies asking for them", () => {
    expect(table(push, capture({ DNS_AUTO_ALLOCATE: "true" }))["auto.example.com"]).toEqual({
      ips: ["240.240.0.7"],
      registry: "ServiceEntry",
    })
    expect(table()["auto.example.com"]).toBeUndefined()
  })

  it("the proxy's scope: hosts not exported to its namespace are left out", () => {
    expect(table(push, capture({}, "team"))["private.team.svc.cluster.local"]).toEqual({
      ips: ["10.96.0.99"],
      registry: "ServiceEntry",
    })
    expect(table()["private.team.svc.cluster.local"]).toBeUndefined()
  })

  it("a host defined in several clusters resolves to the proxy's cluster's VIP", () => {
    const multi = pushOf({
      services: [
        svc(REVIEWS, { addresses: ["10.96.0.10"], clusterId: "c1" }),
        svc(REVIEWS, { addresses: ["10.97.0.10"], clusterId: "c2" }),
      ],
    })
    expect(table(multi, capture())[REVIEWS].ips).toEqual(["10.96.0.10"])
    expect(table(multi, capture({ CLUSTER_ID: "c2" }))[REVIEWS].ips).toEqual(["10.97.0.10"])
  })

  it("only for sidecars capturing DNS", () => {
    expect(generateNameTable(push, sidecar("default")).resources).toEqual([])
    expect(generateNameTable(push, router("default")).resources).toEqual([])
  })

  it("keys: shared by proxies with equal tables, changed by a headless service's endpoints", () => {
    const key = (p: ReturnType<typeof pushOf>, proxy = capture()) => generateNameTable(p, proxy).resources[0]!.key
    expect(key(push, capture({ LABELS: { app: "other" } }))).toBe(key(push))
    expect(key(push, capture({ DNS_AUTO_ALLOCATE: "true" }))).not.toBe(key(push))
    const moved = pushOf({ services, endpoints: [...endpoints.slice(1), ep(DB, "10.1.0.50", { network: "n1" })] })
    expect(key(moved)).not.toBe(key(push))
  })

  it("encodes with protobufjs from proto/mesh/networking/nds/v1/nds.proto, and passes the conformance check", () => {
    const resource = generateNameTable(push, capture()).resources[0]!.build()
    const root = new protobuf.Root().loadSync(join(ROOT, "proto", NDS_PROTO_FILE), { keepCase: true })
    const type = root.lookupType(NAME_TABLE_TYPE.slice(NAME_TABLE_TYPE.lastIndexOf("/") + 1))
    expect(type.verify(resource)).toBeNull()
    const bytes = type.encode(type.fromObject(resource)).finish()
    expect(type.toObject(type.decode(bytes))).toEqual(resource)
    // the wire form: field 1 (table) map entries, each value a NameInfo with alt_hosts as field 5
    const info = root.lookupType("mesh.networking.nds.v1.NameTable.NameInfo")
    const one = info.encode(info.fromObject({ alt_hosts: ["x"] })).finish()
    expect([...one]).toEqual([(5 << 3) | 2, 1, "x".charCodeAt(0)])
    expect(problems(NAME_TABLE_TYPE, resource)).toEqual([])
  })
})
