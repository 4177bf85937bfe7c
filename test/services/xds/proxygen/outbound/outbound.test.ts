import { describe, expect, it } from "@effect/vitest"
import type { Protocol, Service } from "../../../../../src/services/registry/model.js"
import { asProtoData, type ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultProxyGenOptions,
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type ProxyGenOptions,
  type PushContextInput,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import {
  generateOutboundListeners,
  generateOutboundRoutes,
  outboundListenerConflicts,
} from "../../../../../src/services/xds/proxygen/outbound/index.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { input, resource, virtualService } from "../../../../fixtures/xds/mesh.js"
import { checkResource, expectConformant } from "../../../../support/proxygen/check.js"
import { listenerNamed, outboundHttp, outboundTcp } from "../../../../support/proxygen/evaluator.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const svc = (
  hostname: string,
  ports: ReadonlyArray<readonly [number, Protocol]>,
  options: { addresses?: ReadonlyArray<string>; namespace?: string; resolution?: Service["resolution"] } = {},
): Service => ({
  hostname,
  namespace: options.namespace ?? "default",
  ports: ports.map(([port, protocol]) => ({ name: `p-${port}`, port, protocol })),
  addresses: options.addresses ?? [],
  autoAllocatedAddresses: [],
  resolution: options.resolution ?? "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Mock",
  clusterId: "Orchestrator",
})

const REVIEWS = "reviews.default.svc.cluster.local"
const RATINGS = "ratings.default.svc.cluster.local"
const MYSQL = "mysql.default.svc.cluster.local"
const AUTO = "auto.default.svc.cluster.local"
const PG = "pg.default.svc.cluster.local"
const API = "api.example.com"

const mesh: ReadonlyArray<Service> = [
  svc(REVIEWS, [[9080, "HTTP"]], { addresses: ["10.0.0.1"] }),
  svc(RATINGS, [[9080, "GRPC"]], { addresses: ["10.0.0.5"] }),
  svc(MYSQL, [[3306, "TCP"]], { addresses: ["10.0.0.2"] }),
  svc(AUTO, [[8000, "UNSUPPORTED"]], { addresses: ["10.0.0.3"] }),
  svc(PG, [[5432, "TCP"]], { resolution: "NONE" }),
  svc(API, [[443, "TLS"]], { resolution: "DNS" }),
]

const sidecar = (name = "app-1", namespace = "default", extra: Record<string, unknown> = {}): ProxyView =>
  proxyView(`sidecar~10.1.0.${name.length}~${name}.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
    LABELS: { app: "productpage" },
    ...extra,
  })!

const pushOf = (parts: Partial<PushContextInput>, options: Partial<ProxyGenOptions> = {}) =>
  makePushContext(
    { ...input({ services: mesh, ...parts }), proxyConfig: parts.proxyConfig ?? emptyProxyConfigInput },
    { ...defaultPushContextOptions, proxy: { ...defaultProxyGenOptions, ...options } },
  )

const listenersOf = (push: ReturnType<typeof pushOf>, proxy = sidecar()) => {
  const built = generateOutboundListeners(push, proxy).resources.map((r) => asProtoData(r.build()))
  expectConformant(TypeUrl.Listener, built)
  return built as ReadonlyArray<J>
}

const routesOf = (push: ReturnType<typeof pushOf>, names: ReadonlyArray<string>, proxy = sidecar()) => {
  const built = generateOutboundRoutes(push, proxy, names).resources.map((r) => asProtoData(r.build()))
  const problems = built.flatMap((r) => checkResource(TypeUrl.Route, r).map((p) => `${String(r.name)}: ${p}`))
  expect(problems).toEqual([])
  return built as ReadonlyArray<J>
}

const names = (list: ReadonlyArray<ProtoObject>) => list.map((l) => l.name)

const sidecarResource = (spec: unknown) => resource("Sidecar", "default", spec)

describe("outbound listeners", () => {
  const push = pushOf({})
  const listeners = listenersOf(push)

  it("virtualOutbound hands connections to their original destination, unknown ones pass through", () => {
    const vo = listenerNamed(listeners, "virtualOutbound") as J
    expect(vo.address.socket_address).toEqual({ address: "0.0.0.0", port_value: 15001 })
    expect(vo.use_original_dst).toEqual({ value: true })
    expect(vo.traffic_direction).toBe("OUTBOUND")
    expect(outboundTcp({ listeners, vip: "192.168.1.1", port: 7777 })).toMatchObject({ cluster: "PassthroughCluster" })
    expect(outboundTcp({ listeners, vip: "10.1.0.1", port: 15001 })).toMatchObject({ cluster: "BlackHoleCluster" })
  })

  it("HTTP ports share 0.0.0.0_<port>: HCM over RDS, router last, not bound", () => {
    const l = listenerNamed(listeners, "0.0.0.0_9080") as J
    expect(l.bind_to_port).toEqual({ value: false })
    const hcm = l.filter_chains[0].filters[0].typed_config
    expect(hcm.rds).toMatchObject({ route_config_name: "9080", config_source: { ads: {}, resource_api_version: "V3" } })
    expect(hcm.http_filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.http.cors",
      "envoy.filters.http.fault",
      "envoy.filters.http.router",
    ])
    expect(hcm.use_remote_address).toEqual({ value: false })
    expect(names(listeners).filter((n) => String(n).endsWith("_9080"))).toEqual(["0.0.0.0_9080"])
    // non-HTTP bytes on an HTTP port pass through
    expect(l.default_filter_chain.filters[0].typed_config.cluster).toBe("PassthroughCluster")
    const routes = routesOf(push, ["9080"])
    const hit = outboundHttp({ listeners, routes, port: 9080, host: "reviews:9080", destinationIp: "10.0.0.1" })
    expect(hit).toMatchObject({ kind: "route", cluster: `outbound|9080||${REVIEWS}` })
  })

  it("TCP ports get a listener per VIP", () => {
    expect(listenerNamed(listeners, "10.0.0.2_3306")).toBeDefined()
    expect(outboundTcp({ listeners, vip: "10.0.0.2", port: 3306 })).toMatchObject({
      cluster: `outbound|3306||${MYSQL}`,
    })
  })

  it("headless TCP services listen on the wildcard address", () => {
    expect(outboundTcp({ listeners, vip: "10.9.9.9", port: 5432 })).toMatchObject({ cluster: `outbound|5432||${PG}` })
  })

  it("TLS ports without VIP: SNI chains, TLS inspector, the rest passes through", () => {
    const l = listenerNamed(listeners, "0.0.0.0_443") as J
    expect(l.listener_filters.map((f: J) => f.name)).toContain("envoy.filters.listener.tls_inspector")
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 443, sni: API })).toMatchObject({
      cluster: `outbound|443||${API}`,
    })
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 443, sni: "other.com" })).toMatchObject({
      cluster: "PassthroughCluster",
    })
  })

  it("ports of unknown protocol are sniffed: HTTP to the service's routes, the rest to its cluster", () => {
    const p = pushOf({}, { protocolDetectionTimeoutMs: 5000 })
    const ls = listenersOf(p)
    const l = listenerNamed(ls, "10.0.0.3_8000") as J
    expect(l.listener_filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.listener.tls_inspector",
      "envoy.filters.listener.http_inspector",
    ])
    expect(l.listener_filters_timeout).toEqual({ seconds: "5", nanos: 0 })
    expect(l.continue_on_listener_filters_timeout).toBe(true)
    expect(outboundTcp({ listeners: ls, vip: "10.0.0.3", port: 8000 })).toMatchObject({
      cluster: `outbound|8000||${AUTO}`,
    })
    const routes = routesOf(p, [`${AUTO}:8000`])
    expect(outboundHttp({ listeners: ls, routes, port: 8000, host: "auto", destinationIp: "10.0.0.3" })).toMatchObject({
      kind: "route",
      cluster: `outbound|8000||${AUTO}`,
    })
  })

  it("REGISTRY_ONLY: unknown destinations are black-holed (mesh config or Sidecar)", () => {
    const viaMesh = listenersOf(pushOf({}, { outboundTrafficPolicy: "REGISTRY_ONLY" }))
    const viaSidecar = listenersOf(
      pushOf({
        proxyConfig: {
          ...emptyProxyConfigInput,
          sidecars: [sidecarResource({ outboundTrafficPolicy: { mode: "REGISTRY_ONLY" } })],
        },
      }),
    )
    for (const ls of [viaMesh, viaSidecar]) {
      expect(outboundTcp({ listeners: ls, vip: "192.168.1.1", port: 7777 })).toMatchObject({
        cluster: "BlackHoleCluster",
      })
      expect((listenerNamed(ls, "0.0.0.0_9080") as J).default_filter_chain.filters[0].typed_config.cluster).toBe(
        "BlackHoleCluster",
      )
    }
  })

  it("Sidecar egress with a port: only that port; captureMode NONE binds real listeners", () => {
    const restricted = pushOf({
      proxyConfig: {
        ...emptyProxyConfigInput,
        sidecars: [sidecarResource({ egress: [{ port: { number: 9080, protocol: "HTTP" }, hosts: ["./*"] }] })],
      },
    })
    const ls = listenersOf(restricted)
    expect(names(ls)).toEqual(["virtualOutbound", "0.0.0.0_9080"])
    const bound = pushOf({
      proxyConfig: {
        ...emptyProxyConfigInput,
        sidecars: [
          sidecarResource({
            egress: [
              {
                port: { number: 9080, protocol: "HTTP" },
                captureMode: "NONE",
                hosts: ["./reviews.default.svc.cluster.local"],
              },
            ],
          }),
        ],
      },
    })
    const [l] = listenersOf(bound).filter((x) => x.name !== "virtualOutbound")
    expect(l.name).toBe("127.0.0.1_9080")
    expect(l.bind_to_port).toEqual({ value: true })
    const [rc] = routesOf(bound, ["9080"])
    expect(rc.virtual_hosts.map((v: J) => v.name)).toEqual([`${REVIEWS}:9080`, "allow_any"])
  })

  it("conflicts: the first TCP service keeps a shared listener; HTTP wins the wildcard listener", () => {
    const p = pushOf({
      services: [
        svc("a.default.svc.cluster.local", [[5432, "TCP"]], { resolution: "NONE" }),
        svc("b.default.svc.cluster.local", [[5432, "TCP"]], { resolution: "NONE" }),
        svc("c.default.svc.cluster.local", [[80, "TCP"]], { resolution: "NONE" }),
        svc("d.default.svc.cluster.local", [[80, "HTTP"]]),
        svc("e.default.svc.cluster.local", [[80, "TCP"]], { addresses: ["10.0.0.9"] }),
      ],
    })
    const ls = listenersOf(p)
    expect(outboundTcp({ listeners: ls, vip: "10.7.7.7", port: 5432 })).toMatchObject({
      cluster: "outbound|5432||a.default.svc.cluster.local",
    })
    expect(outboundTcp({ listeners: ls, vip: "10.0.0.9", port: 80 })).toMatchObject({
      cluster: "outbound|80||e.default.svc.cluster.local",
    })
    expect((listenerNamed(ls, "0.0.0.0_80") as J).filter_chains).toHaveLength(1)
    expect(outboundListenerConflicts(p, sidecar())).toEqual({ tcpOverCurrentTcp: 1, tcpOverCurrentHttp: 1 })
  })

  it("a VirtualService tcp route picks the target of a TCP listener", () => {
    const p = pushOf({
      virtualServices: [
        virtualService("mysql", {
          hosts: ["mysql"],
          tcp: [{ route: [{ destination: { host: "mysql", subset: "v2" } }] }],
        }),
      ],
    })
    expect(outboundTcp({ listeners: listenersOf(p), vip: "10.0.0.2", port: 3306 })).toMatchObject({
      cluster: `outbound|3306|v2|${MYSQL}`,
    })
  })

  it("proxies alike in a namespace share keys; the keys follow what the bytes read", () => {
    const keys = (p: ReturnType<typeof pushOf>, proxy: ProxyView) => [
      ...generateOutboundListeners(p, proxy).resources.map((r) => `${r.name}=${r.key}`),
      ...generateOutboundRoutes(p, proxy, ["9080"]).resources.map((r) => `${r.name}=${r.key}`),
    ]
    const a = keys(push, sidecar("app-1"))
    expect(keys(push, sidecar("other-pod-2", "default", { LABELS: { app: "reviews" } }))).toEqual(a)
    const changed = pushOf({
      services: mesh.map((s) => (s.hostname === MYSQL ? { ...s, addresses: ["10.0.0.22"] } : s)),
    })
    const b = keys(changed, sidecar("app-1"))
    expect(b.filter((k) => k.startsWith("0.0.0.0_9080="))).toEqual(a.filter((k) => k.startsWith("0.0.0.0_9080=")))
    expect(b.some((k) => k.startsWith("10.0.0.22_3306="))).toBe(true)
  })
})

describe("outbound routes", () => {
  it("without a VirtualService: a virtual host per service with its names and VIPs, then allow_any", () => {
    const [rc] = routesOf(pushOf({}), ["9080"])
    expect(rc.validate_clusters).toEqual({ value: false })
    expect(rc.virtual_hosts.map((v: J) => v.name)).toEqual([`${RATINGS}:9080`, `${REVIEWS}:9080`, "allow_any"])
    const reviews = rc.virtual_hosts[1]
    expect(reviews.domains).toEqual(
      expect.arrayContaining([REVIEWS, "reviews", "reviews:9080", "10.0.0.1", "10.0.0.1:9080"]),
    )
    expect(rc.virtual_hosts[2].routes[0].route.cluster).toBe("PassthroughCluster")
  })

  it("REGISTRY_ONLY answers unknown hosts with 502", () => {
    const [rc] = routesOf(pushOf({}, { outboundTrafficPolicy: "REGISTRY_ONLY" }), ["9080"])
    expect(rc.virtual_hosts.at(-1)).toMatchObject({ name: "block_all", domains: ["*"] })
    expect(rc.virtual_hosts.at(-1).routes[0].direct_response).toEqual({ status: 502 })
  })

  it("a VirtualService's routes; its wildcard host matching no service of the port has no virtual host there", () => {
    const p = pushOf({
      virtualServices: [
        virtualService("reviews", {
          hosts: ["reviews"],
          http: [
            {
              route: [
                { destination: { host: "reviews", subset: "v1" }, weight: 90 },
                { destination: { host: "reviews", subset: "v2" }, weight: 10 },
              ],
            },
          ],
        }),
        virtualService("wild", { hosts: ["*.example.org"], http: [{ route: [{ destination: { host: "ratings" } }] }] }),
      ],
    })
    const ls = listenersOf(p)
    const routes = routesOf(p, ["9080"])
    const hit = outboundHttp({ listeners: ls, routes, port: 9080, host: "reviews" }) as J
    expect(hit.weightedClusters.map((c: J) => c.name)).toEqual([
      `outbound|9080|v1|${REVIEWS}`,
      `outbound|9080|v2|${REVIEWS}`,
    ])
    // As the reference: such a host is served on port 80 only (scenarios/virtual-hosts.test.ts).
    expect(outboundHttp({ listeners: ls, routes, port: 9080, host: "x.example.org" })).toMatchObject({
      cluster: "PassthroughCluster",
    })
  })

  it("route collapse merges virtual hosts with identical routes, and only when enabled", () => {
    const vs = virtualService("both", {
      hosts: ["reviews", "ratings"],
      http: [{ route: [{ destination: { host: "reviews" } }] }],
    })
    const on = routesOf(pushOf({ virtualServices: [vs] }), ["9080"])[0]
    const off = routesOf(pushOf({ virtualServices: [vs] }, { enableRouteCollapse: false }), ["9080"])[0]
    expect(on.virtual_hosts).toHaveLength(2)
    expect(on.virtual_hosts[0].domains).toEqual(expect.arrayContaining(["reviews", "ratings"]))
    expect(off.virtual_hosts).toHaveLength(3)
  })

  it("a port no listener has still gets its catch-all; unknown names get nothing", () => {
    const generated = generateOutboundRoutes(pushOf({}), sidecar(), ["7070", "nope:1"])
    expect(generated.resources.map((r) => r.name)).toEqual(["7070"])
  })
})
