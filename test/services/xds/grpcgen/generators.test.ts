import { describe, expect, it } from "@effect/vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { makeResourceCache } from "../../../../src/services/xds/cache/resource-cache.js"
import { clusterName, generate, setDigest } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import {
  changedHosts,
  defaultPushContextOptions,
  makePushContext,
} from "../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { diffInputs } from "../../../../src/services/xds/push/updates.js"
import {
  destinationRule,
  ECHO,
  endpoint,
  input,
  peerAuthentication,
  service,
  virtualService,
  weightedMesh,
} from "../../../fixtures/xds/mesh.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely in assertions
type J = any

const codec = loadXdsProtos().codec
const all = { wildcard: true, names: [] }

const build = (push: ReturnType<typeof makePushContext>, typeUrl: string, names?: ReadonlyArray<string>) =>
  generate(push, typeUrl, names === undefined ? all : { wildcard: false, names }).resources.map((spec) => {
    const obj = spec.build()
    // every generated resource must survive the real protos
    const decoded = codec.decode(typeUrl, codec.encode(typeUrl, obj))
    return decoded as Record<string, J>
  })

describe("gRPC generators", () => {
  const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
  const push = makePushContext(mesh)

  it("CDS: outbound|port|subset|host EDS clusters for every subset", () => {
    const clusters = build(push, TypeUrl.Cluster)
    expect(clusters.map((c) => c.name)).toEqual([
      `outbound|80||${ECHO}`,
      `outbound|80|v1|${ECHO}`,
      `outbound|80|v2|${ECHO}`,
    ])
    expect(clusters[0]).toMatchObject({
      type: "EDS",
      lb_policy: "ROUND_ROBIN",
      eds_cluster_config: { service_name: `outbound|80||${ECHO}` },
    })
  })

  it("EDS: endpoints per subset with locality weights", () => {
    const [v1] = build(push, TypeUrl.Endpoint, [clusterName(ECHO, 80, "v1")])
    expect(v1!.endpoints).toHaveLength(1)
    expect(v1!.endpoints[0].load_balancing_weight.value).toBe(1)
    expect(v1!.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toMatchObject({
      address: "10.0.0.1",
      port_value: 8080,
    })
    const [all] = build(push, TypeUrl.Endpoint, [clusterName(ECHO, 80)])
    expect(all!.endpoints[0].lb_endpoints).toHaveLength(2)
  })

  it("EDS: draining label and unhealthy endpoints", () => {
    const p = makePushContext(
      input({
        services: [service(ECHO)],
        endpoints: [
          endpoint(ECHO, "10.0.0.1", 1, { labels: { "mesh.io/draining": "true" } }),
          endpoint(ECHO, "10.0.0.2", 2, { health: "UNHEALTHY" }),
        ],
      }),
    )
    const [cla] = build(p, TypeUrl.Endpoint, [clusterName(ECHO, 80)])
    expect(cla!.endpoints[0].lb_endpoints.map((e: J) => e.health_status)).toEqual(["DRAINING"])
    const p2 = makePushContext(p.input, {
      ...defaultPushContextOptions,
      drainingLabel: "",
      sendUnhealthyEndpoints: true,
    })
    const [cla2] = build(p2, TypeUrl.Endpoint, [clusterName(ECHO, 80)])
    expect(cla2!.endpoints[0].lb_endpoints.map((e: J) => e.health_status)).toEqual(["HEALTHY", "UNHEALTHY"])
  })

  it("LDS: api_listener with RDS and the router filter last; fault filter when a route has faults", () => {
    const [listener] = build(push, TypeUrl.Listener, [`${ECHO}:80`])
    const hcm = listener!.api_listener.api_listener
    expect(hcm.rds.route_config_name).toBe(`${ECHO}:80`)
    expect(hcm.http_filters.map((f: J) => f.name)).toEqual(["envoy.filters.http.router"])
    const faulty = makePushContext({
      ...mesh,
      virtualServices: [
        virtualService("echo", {
          hosts: ["echo"],
          http: [
            {
              fault: { abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 100 } } },
              route: [{ destination: { host: "echo" } }],
            },
          ],
        }),
      ],
    })
    const [withFault] = build(faulty, TypeUrl.Listener, [`${ECHO}:80`])
    expect(withFault!.api_listener.api_listener.http_filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.http.fault",
      "envoy.filters.http.router",
    ])
    const [route] = build(faulty, TypeUrl.Route, [`${ECHO}:80`])
    const r = route!.virtual_hosts[0].routes[0]
    expect(r.typed_per_filter_config["envoy.filters.http.fault"].abort.grpc_status).toBe(14)
    // wildcard: every host:port
    expect(build(push, TypeUrl.Listener).map((l) => l.name)).toEqual([`${ECHO}:80`])
    // unknown names produce nothing
    expect(build(push, TypeUrl.Listener, ["nope:80", `${ECHO}:81`])).toEqual([])
  })

  it("RDS: weighted clusters, header matches, timeouts, retries, domains with the port", () => {
    const p = makePushContext({
      ...mesh,
      virtualServices: [
        virtualService("echo", {
          hosts: ["echo"],
          http: [
            {
              match: [{ headers: { "x-user": { exact: "tester" } }, uri: { prefix: "/svc" } }],
              route: [{ destination: { host: "echo", subset: "v2" } }],
              timeout: "2s",
              retries: { attempts: 3, retryOn: "unavailable,5xx" },
            },
            {
              route: [
                { destination: { host: "echo", subset: "v1" }, weight: 80 },
                { destination: { host: "echo", subset: "v2" }, weight: 20 },
              ],
            },
          ],
        }),
      ],
    })
    const [rc] = build(p, TypeUrl.Route, [`${ECHO}:80`])
    const vh = rc!.virtual_hosts[0]
    expect(vh.domains).toContain(`${ECHO}:80`)
    const [header, weighted] = vh.routes
    expect(header.match).toMatchObject({ prefix: "/svc", headers: [{ name: "x-user", exact_match: "tester" }] })
    expect(header.route).toMatchObject({
      cluster: `outbound|80|v2|${ECHO}`,
      max_stream_duration: { max_stream_duration: { seconds: "2" } },
      retry_policy: { retry_on: "unavailable", num_retries: { value: 3 } },
    })
    expect(weighted.route.weighted_clusters.clusters).toEqual([
      { name: `outbound|80|v1|${ECHO}`, weight: { value: 80 } },
      { name: `outbound|80|v2|${ECHO}`, weight: { value: 20 } },
    ])
    // no VirtualService: one default route
    const plain = makePushContext(input({ services: [service(ECHO)] }))
    const [def] = build(plain, TypeUrl.Route, [`${ECHO}:80`])
    expect(def!.virtual_hosts[0].routes[0]).toMatchObject({
      match: { prefix: "/" },
      route: { cluster: `outbound|80||${ECHO}` },
    })
  })

  it("RDS: a short destination resolves by the short-name rule only, never to another service named like it", () => {
    // `a` in default is a.default.svc.cluster.local; the only service starting with `a.` is
    // a.example.com, which a guess by prefix would pick
    const p = makePushContext(
      input({
        services: [service(ECHO), service("a.example.com")],
        virtualServices: [
          virtualService("echo", {
            hosts: [ECHO],
            http: [{ route: [{ destination: { host: "a", port: { number: 80 } } }] }],
          }),
        ],
      }),
    )
    const [rc] = build(p, TypeUrl.Route, [`${ECHO}:80`])
    expect(rc!.virtual_hosts[0].routes[0].route.cluster).toBe("outbound|80||a.default.svc.cluster.local")
  })

  it("CDS: DestinationRule load balancer, outlier detection and circuit breakers", () => {
    const p = makePushContext({
      ...mesh,
      destinationRules: [
        destinationRule("echo", {
          host: "echo",
          trafficPolicy: {
            loadBalancer: { consistentHash: { httpHeaderName: "x-id" } },
            outlierDetection: { consecutive5xxErrors: 5, interval: "10s" },
            connectionPool: { http: { http2MaxRequests: 100 } },
          },
        }),
      ],
    })
    const [c] = build(p, TypeUrl.Cluster, [clusterName(ECHO, 80)])
    expect(c).toMatchObject({
      lb_policy: "RING_HASH",
      ring_hash_lb_config: { hash_function: "XX_HASH" },
      outlier_detection: { consecutive_5xx: { value: 5 }, interval: { seconds: "10" } },
      circuit_breakers: { thresholds: [{ max_requests: { value: 100 } }] },
    })
  })
})

describe("mutual TLS", () => {
  it("CDS carries an UpstreamTlsContext with certificate-provider instances for MESH_MUTUAL", () => {
    const p = makePushContext({
      ...weightedMesh({ address: "10.0.0.1", port: 1 }, { address: "10.0.0.2", port: 1 }),
      destinationRules: [destinationRule("echo", { host: "echo", trafficPolicy: { tls: { mode: "MESH_MUTUAL" } } })],
    })
    const [c] = build(p, TypeUrl.Cluster, [clusterName(ECHO, 80)])
    expect(c!.transport_socket.name).toBe("envoy.transport_sockets.tls")
    const tls = c!.transport_socket.typed_config
    expect(tls["@type"]).toBe("type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext")
    expect(tls.common_tls_context.tls_certificate_provider_instance.instance_name).toBe("default")
    expect(
      tls.common_tls_context.combined_validation_context.default_validation_context.ca_certificate_provider_instance
        .instance_name,
    ).toBe("default")
  })

  const strictMesh = (mode: string, extra: Partial<Parameters<typeof input>[0]> = {}) =>
    makePushContext({
      ...weightedMesh({ address: "10.0.0.1", port: 1 }, { address: "10.0.0.2", port: 1 }),
      peerAuthentications: [peerAuthentication("default", { mtls: { mode } }, "mesh-system")],
      ...extra,
    })
  const validation = (c: J) =>
    c.transport_socket.typed_config.common_tls_context.combined_validation_context.default_validation_context

  it("auto mTLS: a mesh-wide STRICT PeerAuthentication gives every cluster the UpstreamTlsContext", () => {
    const clusters = build(strictMesh("STRICT"), TypeUrl.Cluster)
    expect(clusters).toHaveLength(3)
    for (const c of clusters) {
      expect(c.transport_socket.typed_config["@type"]).toBe(
        "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
      )
      expect(c.transport_socket.typed_config.common_tls_context.tls_certificate_provider_instance).toMatchObject({
        instance_name: "default",
        certificate_name: "default",
      })
      expect(validation(c).ca_certificate_provider_instance.instance_name).toBe("default")
    }
  })

  it("auto mTLS: PERMISSIVE (or no PeerAuthentication, or auto mTLS off) leaves clusters plaintext", () => {
    for (const c of build(strictMesh("PERMISSIVE"), TypeUrl.Cluster)) expect(c.transport_socket).toBeUndefined()
    const none = makePushContext(weightedMesh({ address: "10.0.0.1", port: 1 }, { address: "10.0.0.2", port: 1 }))
    for (const c of build(none, TypeUrl.Cluster)) expect(c.transport_socket).toBeUndefined()
    const off = makePushContext(strictMesh("STRICT").input, { ...defaultPushContextOptions, enableAutoMtls: false })
    for (const c of build(off, TypeUrl.Cluster)) expect(c.transport_socket).toBeUndefined()
  })

  it("auto mTLS: a DestinationRule TLS setting wins (DISABLE stays plaintext)", () => {
    const p = strictMesh("STRICT", {
      destinationRules: [destinationRule("echo", { host: "echo", trafficPolicy: { tls: { mode: "DISABLE" } } })],
    })
    const [c] = build(p, TypeUrl.Cluster, [clusterName(ECHO, 80)])
    expect(c!.name).toBe(clusterName(ECHO, 80))
    expect(c!.transport_socket).toBeUndefined()
  })

  it("auto mTLS: namespace, workload selector and port-level modes override the mesh-wide one", () => {
    const base = weightedMesh({ address: "10.0.0.1", port: 1 }, { address: "10.0.0.2", port: 2 })
    const tlsOf = (pas: ReadonlyArray<ReturnType<typeof peerAuthentication>>) =>
      Object.fromEntries(
        build(makePushContext({ ...base, peerAuthentications: pas }), TypeUrl.Cluster).map((c) => [
          c.name.split("|")[2] || "all",
          c.transport_socket !== undefined,
        ]),
      )
    // namespace-wide STRICT under a PERMISSIVE mesh
    expect(
      tlsOf([
        peerAuthentication("mesh", { mtls: { mode: "PERMISSIVE" } }, "mesh-system"),
        peerAuthentication("ns", { mtls: { mode: "STRICT" } }),
      ]),
    ).toEqual({ all: true, v1: true, v2: true })
    // only the v1 workloads are STRICT: the v1 subset gets TLS, the whole service does not
    expect(
      tlsOf([peerAuthentication("v1", { selector: { matchLabels: { version: "v1" } }, mtls: { mode: "STRICT" } })]),
    ).toEqual({ all: false, v1: true, v2: false })
    // port-level override: STRICT namespace, but the v2 workload port (2) is PERMISSIVE
    expect(
      tlsOf([
        peerAuthentication("ns", { mtls: { mode: "STRICT" } }),
        peerAuthentication("v2", {
          selector: { matchLabels: { version: "v2" } },
          portLevelMtls: { "2": { mode: "PERMISSIVE" } },
        }),
      ]),
    ).toEqual({ all: false, v1: true, v2: false })
  })

  it("lists the SPIFFE identities of the destination's endpoints as match_subject_alt_names", () => {
    const p = strictMesh("STRICT", {
      endpoints: [
        { ...endpoint(ECHO, "10.0.0.1", 1, { labels: { version: "v1" } }), serviceAccount: "echo-v1" },
        { ...endpoint(ECHO, "10.0.0.2", 1, { labels: { version: "v2" } }), serviceAccount: "echo-v2" },
        { ...endpoint(ECHO, "10.0.0.3", 1, { labels: { version: "v2" } }), serviceAccount: "echo-v2" },
        { ...endpoint(ECHO, "10.0.0.4", 1, { labels: { version: "v2" } }), serviceAccount: "" },
        // As the registries hold it (ServiceEntry endpoints, pods): the whole identity, kept as it is.
        {
          ...endpoint(ECHO, "10.0.0.5", 1, { labels: { version: "v2" } }),
          serviceAccount: "spiffe://cluster.local/ns/default/sa/echo-v3",
        },
      ],
    })
    const [c] = build(p, TypeUrl.Cluster, [clusterName(ECHO, 80)])
    expect(validation(c).match_subject_alt_names).toEqual([
      expect.objectContaining({ exact: "spiffe://cluster.local/ns/default/sa/echo-v1" }),
      expect.objectContaining({ exact: "spiffe://cluster.local/ns/default/sa/echo-v2" }),
      expect.objectContaining({ exact: "spiffe://cluster.local/ns/default/sa/echo-v3" }),
    ])
    // the DestinationRule path lists them too, in the configured trust domain
    const dr = makePushContext(
      {
        ...p.input,
        peerAuthentications: [],
        destinationRules: [destinationRule("echo", { host: "echo", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } })],
      },
      { ...defaultPushContextOptions, trustDomain: "example.org" },
    )
    const [d] = build(dr, TypeUrl.Cluster, [clusterName(ECHO, 80)])
    expect(validation(d).match_subject_alt_names.map((m: J) => m.exact)).toEqual([
      "spiffe://cluster.local/ns/default/sa/echo-v3",
      "spiffe://example.org/ns/default/sa/echo-v1",
      "spiffe://example.org/ns/default/sa/echo-v2",
    ])
  })

  it("a PeerAuthentication change is a full push that may touch every host", () => {
    const before = strictMesh("PERMISSIVE")
    const after = strictMesh("STRICT")
    const request = diffInputs(before.input, after.input, 0)
    expect(request?.full).toBe(true)
    expect([...(request?.configsUpdated ?? [])]).toContain("PeerAuthentication/mesh-system/default")
    expect(changedHosts(before, after)).toBeUndefined()
    expect(diffInputs(after.input, { ...after.input }, 0)).toBeUndefined()
  })
})

describe("encode once", () => {
  it("shares bytes across requests and pushes whose inputs did not change", () => {
    const cache = makeResourceCache(codec)
    const a = input({
      services: [service(ECHO), service("other.default.svc.cluster.local")],
      endpoints: [endpoint(ECHO, "10.0.0.1", 1), endpoint("other.default.svc.cluster.local", "10.0.0.9", 1)],
    })
    const p1 = makePushContext(a, undefined, "1")
    const first = cache.resolve(TypeUrl.Endpoint, generate(p1, TypeUrl.Endpoint, all).resources)
    for (let i = 0; i < 100; i++) cache.resolve(TypeUrl.Endpoint, generate(p1, TypeUrl.Endpoint, all).resources)
    expect(cache.stats().misses).toBe(2)
    // an endpoint change of one host re-encodes only that host's resource
    const b = { ...a, endpoints: [endpoint(ECHO, "10.0.0.2", 1), a.endpoints[1]!] }
    const p2 = makePushContext(b, undefined, "2")
    const second = cache.resolve(TypeUrl.Endpoint, generate(p2, TypeUrl.Endpoint, all).resources)
    expect(cache.stats().misses).toBe(3)
    expect(second[1]).toBe(first[1])
    expect(second[0]!.version).not.toBe(first[0]!.version)
    // the change is endpoint-only: an incremental (EDS) push
    expect(diffInputs(a, b, 0)?.full).toBe(false)
    expect(diffInputs(a, { ...b, virtualServices: [virtualService("x", { hosts: ["echo"] })] }, 0)?.full).toBe(true)
    expect(diffInputs(a, { ...a }, 0)).toBeUndefined()
  })
})

describe("changed hosts", () => {
  it("names the hosts a change can affect, including VirtualServices routing to a changed service", async () => {
    const { changedHosts, hostOfResourceName } = await import("../../../../src/services/xds/model/push-context.js")
    const OTHER = "other.default.svc.cluster.local"
    const a = input({
      services: [service(ECHO), service(OTHER)],
      endpoints: [endpoint(ECHO, "10.0.0.1", 1), endpoint(OTHER, "10.0.0.2", 1)],
      virtualServices: [
        virtualService("echo", { hosts: ["echo"], http: [{ route: [{ destination: { host: "other" } }] }] }),
      ],
    })
    const p1 = makePushContext(a)
    const endpointsOnly = makePushContext({ ...a, endpoints: [endpoint(ECHO, "10.0.0.9", 1), a.endpoints[1]!] })
    expect([...(changedHosts(p1, endpointsOnly) ?? [])]).toEqual([ECHO])
    // the other service's ports change: echo's routes (to other) may change too
    const otherPorts = makePushContext({ ...a, services: [service(ECHO), service(OTHER, [81])] })
    expect([...(changedHosts(p1, otherPorts) ?? [])].sort()).toEqual([ECHO, OTHER].sort())
    expect(changedHosts(p1, makePushContext(a, { ...defaultPushContextOptions, drainingLabel: "" }))).toBeUndefined()
    expect(hostOfResourceName(p1, clusterName(OTHER, 80, "v1"))).toBe(OTHER)
    expect(hostOfResourceName(p1, `${ECHO}:80`)).toBe(ECHO)
  })
})

describe("set digest", () => {
  const versions = (n: number, salt = "") =>
    Array.from({ length: n }, (_, i) => ({ version: `${salt}v${i}`.padEnd(16, "x") }))

  it("is the versions in order for a small set, exact without hashing", () => {
    expect(setDigest(versions(2))).toBe(`${"v0".padEnd(16, "x")},${"v1".padEnd(16, "x")}`)
    expect(setDigest(versions(2).reverse())).not.toBe(setDigest(versions(2)))
  })

  it("is hashed for a large set, so that a watch keeps a short text", () => {
    const large = setDigest(versions(100))
    expect(large).toHaveLength(16)
    expect(setDigest(versions(100, "y"))).not.toBe(large)
    expect(setDigest(versions(100))).toBe(large)
  })
})
