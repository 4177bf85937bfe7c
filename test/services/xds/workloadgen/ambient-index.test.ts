/**
 * The ambient index and the workload API generator: workloads and services from pods, Services
 * and waypoints, on-demand lookups by address, and the encoded resources decoded again with the
 * project's own protos.
 */
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import type { AmbientInput, AmbientPod } from "../../../../src/services/ambient/input.js"
import type { Endpoint, Service } from "../../../../src/services/registry/model.js"
import { makeResourceCache } from "../../../../src/services/xds/cache/resource-cache.js"
import { emptyPushContextInput, makePushContext } from "../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { buildAmbientIndex } from "../../../../src/services/xds/workloadgen/ambient-index.js"
import { generateWorkloadApi } from "../../../../src/services/xds/workloadgen/generator.js"
import { makeAmbientIndexMemo } from "../../../../src/services/xds/workloadgen/index-memo.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages, read field by field
type Decoded = any

const pod = (name: string, over: Partial<AmbientPod> = {}): AmbientPod => ({
  uid: `uid-${name}`,
  name,
  namespace: "app",
  labels: { app: "web" },
  annotations: { "ambient.mesh.io/redirection": "enabled" },
  serviceAccount: "web",
  node: "node-1",
  addresses: ["10.1.0.1"],
  hostNetwork: false,
  ready: true,
  locality: "",
  namedPorts: { http: 8080 },
  ...over,
})

const service: Service = {
  hostname: "web.app.svc.cluster.local",
  namespace: "app",
  ports: [{ name: "http", port: 80, protocol: "HTTP" }],
  addresses: ["10.96.0.10"],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Orchestrator",
  clusterId: "c1",
  selector: { app: "web" },
  source: "Service/app/web",
}

const endpoint: Endpoint = {
  hostname: service.hostname,
  namespace: "app",
  servicePortName: "http",
  address: "10.1.0.1",
  port: 8080,
  labels: {},
  serviceAccount: "",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "c1",
}

const waypointGateway = (name: string, labels: Record<string, string> = {}) => ({
  group: "gateway.networking.k8s.io",
  version: "v1",
  kind: "KubernetesGateway",
  meta: { name, namespace: "app", labels, annotations: {} },
  spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
})

const ambient = (over: Partial<AmbientInput> = {}): AmbientInput => ({
  settings: { clusterId: "c1", autoAllowWaypointPolicy: true, systemNamespace: "mesh-system" },
  pods: [pod("web-1"), pod("web-2", { addresses: ["10.1.0.2"], node: "node-2", ready: false, annotations: {} })],
  namespaceLabels: new Map([
    ["app", { "mesh.io/dataplane-mode": "ambient", "mesh.io/use-waypoint": "wp" }],
    ["mesh-system", { "topology.mesh.io/network": "net-a" }],
  ]),
  gateways: [waypointGateway("wp", { "mesh.io/waypoint-for": "all" })] as never,
  gatewayClasses: [],
  workloadEntries: [],
  ...over,
})

const build = (input: AmbientInput) =>
  buildAmbientIndex({
    ambient: input,
    services: [service],
    endpointsByHost: new Map([[service.hostname, [endpoint]]]),
    authorizationPolicies: [],
    trustDomain: "cluster.local",
    domainSuffix: "cluster.local",
    rootNamespace: "mesh-system",
  })

describe("buildAmbientIndex", () => {
  it("a workload per pod: uid, addresses, node, identity, health, HBONE once redirected, services, waypoint", () => {
    const index = build(ambient())
    expect(index.addresses.map((e) => e.name)).toEqual([
      "app/web.app.svc.cluster.local",
      "c1//Pod/app/web-1",
      "c1//Pod/app/web-2",
    ])
    const w1 = (index.byName.get("c1//Pod/app/web-1")!.message as Decoded).workload
    expect(w1).toMatchObject({
      uid: "c1//Pod/app/web-1",
      namespace: "app",
      network: "net-a",
      node: "node-1",
      service_account: "web",
      status: "HEALTHY",
      tunnel_protocol: "HBONE",
      cluster_id: "c1",
      workload_type: "POD",
      waypoint: { hostname: { namespace: "app", hostname: "wp.app.svc.cluster.local" }, hbone_mtls_port: 15008 },
      services: { "app/web.app.svc.cluster.local": { ports: [{ service_port: 80, target_port: 8080 }] } },
    })
    expect(w1.trust_domain).toBeUndefined()
    expect([...w1.addresses[0]]).toEqual([10, 1, 0, 1])
    const w2 = (index.byName.get("c1//Pod/app/web-2")!.message as Decoded).workload
    expect(w2.status).toBe("UNHEALTHY")
    expect(w2.tunnel_protocol).toBeUndefined()
    expect(w2.node).toBe("node-2")
  })

  it("a service with its VIP on the cluster network, ports and waypoint", () => {
    const svc = (build(ambient()).byName.get("app/web.app.svc.cluster.local")!.message as Decoded).service
    expect(svc).toMatchObject({
      name: "web",
      namespace: "app",
      hostname: "web.app.svc.cluster.local",
      ports: [{ service_port: 80, target_port: 0 }],
      waypoint: { hostname: { namespace: "app", hostname: "wp.app.svc.cluster.local" } },
    })
    expect(svc.addresses[0].network).toBe("net-a")
    expect([...svc.addresses[0].address]).toEqual([10, 96, 0, 10])
  })

  it("the waypoint's own pods get no waypoint; their identity makes the allow policy the bound workloads name", () => {
    const index = build(
      ambient({
        pods: [
          pod("web-1"),
          pod("wp-1", {
            labels: { "gateway.networking.k8s.io/gateway-name": "wp" },
            serviceAccount: "wp",
            addresses: ["10.1.0.9"],
          }),
        ],
      }),
    )
    expect((index.byName.get("c1//Pod/app/wp-1")!.message as Decoded).workload.waypoint).toBeUndefined()
    const web = (index.byName.get("c1//Pod/app/web-1")!.message as Decoded).workload
    expect(web.authorization_policies).toEqual(["app/mesh_allow_waypoint_app_wp"])
    expect(index.authorizations.map((a) => a.name)).toEqual(["app/mesh_allow_waypoint_app_wp"])
  })

  it("a service-only waypoint is not the workloads' when inherited from the namespace; a missing one is a notice", () => {
    const serviceOnly = build(ambient({ gateways: [waypointGateway("wp")] as never }))
    expect((serviceOnly.byName.get("c1//Pod/app/web-1")!.message as Decoded).workload.waypoint).toBeUndefined()
    expect((serviceOnly.byName.get("app/web.app.svc.cluster.local")!.message as Decoded).service.waypoint).toBeDefined()
    const missing = build(ambient({ gateways: [] }))
    expect(missing.notices.some((n) => n.includes("waypoint app/wp is not ready"))).toBe(true)
  })

  it("host-network pods and pods without an address are left out", () => {
    const index = build(ambient({ pods: [pod("h", { hostNetwork: true }), pod("n", { addresses: [] })] }))
    expect(index.addresses.map((e) => e.name)).toEqual(["app/web.app.svc.cluster.local"])
  })
})

describe("generateWorkloadApi", () => {
  const codec = loadXdsProtos().codec
  const push = makePushContext({
    ...emptyPushContextInput,
    services: [service],
    endpoints: [endpoint],
    ambient: ambient(),
  })

  it("wildcard: every address, encoded and decoded with the workload API protos", () => {
    const cache = makeResourceCache(codec)
    const generated = generateWorkloadApi(push, cache, TypeUrl.Address, { wildcard: true, names: [] })
    const encoded = cache.resolve(TypeUrl.Address, generated.resources)
    expect(encoded).toHaveLength(3)
    const decoded = codec.decode(TypeUrl.Address, encoded[1]!.resource.value) as Decoded
    expect(decoded.workload.uid).toBe("c1//Pod/app/web-1")
    expect(decoded.workload.tunnel_protocol).toBe("HBONE")
  })

  it("on demand: a uid, a service name, or an address `network/ip` under the name asked for", () => {
    const cache = makeResourceCache(codec)
    const names = ["net-a/10.1.0.2", "net-a/10.96.0.10", "c1//Pod/app/web-1", "net-a/10.9.9.9"]
    const generated = generateWorkloadApi(push, cache, TypeUrl.Address, { wildcard: false, names })
    expect(generated.resources.map((r) => r.name)).toEqual(names.slice(0, 3))
    const [byPodIp, byVip] = cache.resolve(TypeUrl.Address, generated.resources)
    expect((codec.decode(TypeUrl.Address, byPodIp!.resource.value) as Decoded).workload.name).toBe("web-2")
    expect((codec.decode(TypeUrl.Address, byVip!.resource.value) as Decoded).service.name).toBe("web")
  })

  it("one index per push, shared by every node proxy; nothing without ambient", () => {
    const cache = makeResourceCache(codec)
    const a = generateWorkloadApi(push, cache, TypeUrl.Address, { wildcard: true, names: [] })
    const b = generateWorkloadApi(push, cache, TypeUrl.Address, { wildcard: true, names: [] })
    expect(a.resources.map((r) => r.key)).toEqual(b.resources.map((r) => r.key))
    cache.resolve(TypeUrl.Address, a.resources)
    cache.resolve(TypeUrl.Address, b.resources)
    expect(cache.stats().misses).toBe(3)
    const off = makePushContext({ ...emptyPushContextInput, services: [service] })
    expect(generateWorkloadApi(off, cache, TypeUrl.Address, { wildcard: true, names: [] }).resources).toEqual([])
  })
})

describe("the index across pushes (issue 40)", () => {
  const codec = loadXdsProtos().codec
  const pods = [pod("web-1"), pod("web-2", { addresses: ["10.1.0.2"] })]
  const inputOf = (list: ReadonlyArray<AmbientPod>, endpoints: ReadonlyArray<Endpoint>) => ({
    ...emptyPushContextInput,
    services: [service],
    endpoints,
    ambient: ambient({ pods: list }),
  })
  const second = { ...endpoint, address: "10.1.0.2" }

  it("a readiness flip builds and encodes one message; the others stay the same objects", () => {
    const cache = makeResourceCache(codec)
    const before = makePushContext(inputOf(pods, [endpoint, second]))
    const first = generateWorkloadApi(before, cache, TypeUrl.Address, { wildcard: true, names: [] })
    cache.resolve(TypeUrl.Address, first.resources)
    const flipped = [pods[0]!, { ...pods[1]!, ready: false }]
    const after = makePushContext(inputOf(flipped, [endpoint]), undefined, "2", before)
    const next = generateWorkloadApi(after, cache, TypeUrl.Address, { wildcard: true, names: [] })
    const misses = cache.stats().misses
    const encoded = cache.resolve(TypeUrl.Address, next.resources)
    expect(cache.stats().misses - misses).toBe(1)
    const changed = next.resources.filter((r, i) => r.key !== first.resources[i]!.key).map((r) => r.name)
    expect(changed).toEqual(["c1//Pod/app/web-2"])
    expect((codec.decode(TypeUrl.Address, encoded[2]!.resource.value) as Decoded).workload.status).toBe("UNHEALTHY")
    // Flipped back: web-1 still has the key it was first encoded under; web-2 is healthy again.
    const back = makePushContext(inputOf(pods, [endpoint, second]), undefined, "3", after)
    const again = generateWorkloadApi(back, cache, TypeUrl.Address, { wildcard: true, names: [] })
    expect(again.resources[1]!.key).toBe(first.resources[1]!.key)
    const decoded = codec.decode(TypeUrl.Address, cache.resolve(TypeUrl.Address, again.resources)[2]!.resource.value)
    expect((decoded as Decoded).workload.status).toBe("HEALTHY")
  })

  it("a change a message reads (a namespace label, a service) rebuilds what reads it, equal to a build from scratch", () => {
    const memo = makeAmbientIndexMemo()
    const sources = (over: Partial<AmbientInput>, services: ReadonlyArray<Service>) => ({
      ambient: ambient(over),
      services,
      endpointsByHost: new Map([[service.hostname, [endpoint]]]),
      authorizationPolicies: [],
      trustDomain: "cluster.local",
      domainSuffix: "cluster.local",
      rootNamespace: "mesh-system",
    })
    const plain = (index: ReturnType<typeof buildAmbientIndex>) =>
      index.addresses.map((e) => codec.encode(TypeUrl.Address, e.message))
    const first = buildAmbientIndex(sources({ pods }, [service]), memo)
    // The namespace no longer names a waypoint: every workload loses it.
    const noWaypoint = sources({ pods, namespaceLabels: new Map([["app", { "mesh.io/dataplane-mode": "ambient" }]]) }, [
      service,
    ])
    const second = buildAmbientIndex(noWaypoint, memo)
    expect(plain(second)).toEqual(plain(buildAmbientIndex(noWaypoint)))
    expect((second.byName.get("c1//Pod/app/web-1")!.message as Decoded).workload.waypoint).toBeUndefined()
    expect(second.byName.get("c1//Pod/app/web-1")).not.toBe(first.byName.get("c1//Pod/app/web-1"))
    // A second service selecting the pods: their services change, the first service's message does not.
    const other: Service = {
      ...service,
      hostname: "api.app.svc.cluster.local",
      addresses: ["10.96.0.11"],
      source: "Service/app/api",
    }
    const more = sources({ pods, namespaceLabels: noWaypoint.ambient.namespaceLabels }, [service, other])
    const third = buildAmbientIndex(more, memo)
    expect(plain(third)).toEqual(plain(buildAmbientIndex(more)))
    expect(Object.keys((third.byName.get("c1//Pod/app/web-2")!.message as Decoded).workload.services)).toEqual([
      "app/web.app.svc.cluster.local",
      "app/api.app.svc.cluster.local",
    ])
    expect(third.byName.get("app/web.app.svc.cluster.local")).toBe(second.byName.get("app/web.app.svc.cluster.local"))
  })
})
