import { describe, expect, it } from "@effect/vitest"
import { loadXdsProtos } from "../../../../../src/layers/xds/protos.js"
import type { Endpoint, Protocol, Service } from "../../../../../src/services/registry/model.js"
import type { ResourceSpec } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultPushContextOptions,
  makePushContext,
  type PushContext,
  type PushContextInput,
  type PushContextOptions,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import {
  clusterConflicts,
  generateOutboundClusters,
  generateProxyEndpoints,
} from "../../../../../src/services/xds/proxygen/clusters/index.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { destinationRule, input, peerAuthentication } from "../../../../fixtures/xds/mesh.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely in assertions
type J = any

const codec = loadXdsProtos().codec

/**
 * Every field of `sent` must come back from the real protos (the encoder drops unknown fields
 * silently): a scalar default may be absent, 64-bit numbers come back as strings.
 */
const dropped = (sent: unknown, got: unknown, path: string): ReadonlyArray<string> => {
  if (sent === null || typeof sent !== "object") {
    if (got === undefined) return sent === 0 || sent === false || sent === "" ? [] : [path]
    return String(sent) === String(got) ? [] : [`${path}: ${String(sent)} != ${String(got)}`]
  }
  if (got === undefined || got === null || typeof got !== "object") return [path]
  if (Array.isArray(sent))
    return sent.flatMap((item, i) => dropped(item, (got as ReadonlyArray<unknown>)[i], `${path}[${i}]`))
  return Object.entries(sent as Record<string, unknown>).flatMap(([k, v]) =>
    k === "@type" ? [] : dropped(v, (got as Record<string, unknown>)[k], `${path}.${k}`),
  )
}

const roundTrip = (typeUrl: string, spec: ResourceSpec): J => {
  const built = spec.build()
  const decoded = codec.decode(typeUrl, codec.encode(typeUrl, built))
  expect(dropped(built, decoded, spec.name)).toEqual([])
  return built
}

const HOST = "reviews.default.svc.cluster.local"

const svc = (hostname: string, ports: ReadonlyArray<[number, Protocol]>, extra: Partial<Service> = {}): Service => ({
  hostname,
  namespace: "default",
  ports: ports.map(([port, protocol]) => ({ name: `p-${port}`, port, protocol })),
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Mock",
  clusterId: "c1",
  ...extra,
})

const ep = (hostname: string, address: string, port: number, extra: Partial<Endpoint> = {}): Endpoint => ({
  hostname,
  namespace: "default",
  servicePortName: "p-80",
  address,
  port,
  labels: {},
  serviceAccount: "spiffe://cluster.local/ns/default/sa/reviews",
  locality: "r1/z1/s1",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "c1",
  ...extra,
})

const MESH_LABELS = { "security.mesh.io/tlsMode": "istio" }

const sidecar = (namespace = "default", locality?: string, labels: Record<string, string> = {}): ProxyView =>
  proxyView(
    `sidecar~10.1.0.1~app-1.${namespace}~${namespace}.svc.cluster.local`,
    { NAMESPACE: namespace, LABELS: labels },
    locality === undefined
      ? undefined
      : { region: locality.split("/")[0], zone: locality.split("/")[1], sub_zone: locality.split("/")[2] },
  )!
const router = (): ProxyView => proxyView("router~10.1.0.2~gw-1.mesh-system~mesh-system.svc.cluster.local", {})!

const withOptions = (over: Partial<PushContextOptions> = {}, proxy: Partial<PushContextOptions["proxy"]> = {}) => ({
  ...defaultPushContextOptions,
  ...over,
  proxy: { ...defaultPushContextOptions.proxy, ...proxy },
})

const push = (parts: Partial<PushContextInput>, options?: PushContextOptions): PushContext =>
  makePushContext(input(parts), options ?? withOptions())

const clusters = (p: PushContext, proxy: ProxyView = sidecar()): Record<string, J> =>
  Object.fromEntries(
    generateOutboundClusters(p, proxy).resources.map((spec) => [spec.name, roundTrip(TypeUrl.Cluster, spec)]),
  )

const keys = (p: PushContext, proxy: ProxyView): Record<string, string> =>
  Object.fromEntries(generateOutboundClusters(p, proxy).resources.map((s) => [s.name, s.key]))

const eds = (p: PushContext, name: string, proxy: ProxyView = sidecar()): J => {
  const [spec] = generateProxyEndpoints(p, proxy, [name])
  return spec === undefined ? undefined : roundTrip(TypeUrl.Endpoint, spec)
}

const tlsOf = (socket: J): J => socket?.typed_config
const hpo = (cluster: J): J =>
  cluster.typed_extension_protocol_options?.["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]

const reviews = (policy: unknown, extra: Record<string, unknown> = {}) =>
  destinationRule("reviews", { host: "reviews", trafficPolicy: policy, ...extra })

describe("outbound clusters", () => {
  const basic = push({
    services: [
      svc(HOST, [
        [80, "HTTP"],
        [9090, "GRPC"],
      ]),
    ],
    endpoints: [ep(HOST, "10.0.0.1", 8080, { labels: { version: "v1", ...MESH_LABELS } })],
    destinationRules: [
      destinationRule("reviews", { host: "reviews", subsets: [{ name: "v1", labels: { version: "v1" } }] }),
    ],
  })

  it("EDS clusters per port and subset, with the well-known ones", () => {
    const all = clusters(basic)
    expect(Object.keys(all)).toEqual([
      `outbound|80||${HOST}`,
      `outbound|80|v1|${HOST}`,
      `outbound|9090||${HOST}`,
      `outbound|9090|v1|${HOST}`,
      "PassthroughCluster",
      "BlackHoleCluster",
    ])
    const c = all[`outbound|80||${HOST}`]
    expect(c).toMatchObject({
      type: "EDS",
      eds_cluster_config: { service_name: `outbound|80||${HOST}`, eds_config: { ads: {} } },
      connect_timeout: { seconds: "10" },
      lb_policy: "LEAST_REQUEST",
      circuit_breakers: { thresholds: [{ max_connections: { value: 4294967295 }, track_remaining: true }] },
    })
    // HTTP/2 for gRPC ports only.
    expect(hpo(c)).toBeUndefined()
    expect(hpo(all[`outbound|9090||${HOST}`]).explicit_http_config).toEqual({ http2_protocol_options: {} })
    expect(all.PassthroughCluster).toMatchObject({ type: "ORIGINAL_DST", lb_policy: "CLUSTER_PROVIDED" })
    expect(all.BlackHoleCluster).toMatchObject({ type: "STATIC" })
    expect(all[`outbound|80|v1|${HOST}`].metadata.filter_metadata.istio.fields.subset).toEqual({ stringValue: "v1" })
  })

  it("connect timeout from the mesh options; gateways get no PassthroughCluster", () => {
    const p = push({ services: [svc(HOST, [[80, "HTTP"]])] }, withOptions({}, { connectTimeoutMs: 2500 }))
    const all = clusters(p, router())
    expect(Object.keys(all)).toEqual([`outbound|80||${HOST}`, "BlackHoleCluster"])
    expect(all[`outbound|80||${HOST}`].connect_timeout).toEqual({ seconds: "2", nanos: 500_000_000 })
  })

  it("sniffed ports of sidecars use the downstream protocol", () => {
    const p = push({ services: [svc(HOST, [[80, "UNSUPPORTED"]])] })
    expect(hpo(clusters(p)[`outbound|80||${HOST}`]).use_downstream_protocol_config).toBeDefined()
    expect(hpo(clusters(p, router())[`outbound|80||${HOST}`])).toBeUndefined()
  })

  it("hosts restrict a gateway's clusters", () => {
    const p = push({ services: [svc(HOST, [[80, "HTTP"]]), svc("other.default.svc.cluster.local", [[80, "HTTP"]])] })
    const names = generateOutboundClusters(p, router(), new Set([HOST])).resources.map((r) => r.name)
    expect(names).toEqual([`outbound|80||${HOST}`, "BlackHoleCluster"])
  })

  it("DNS ServiceEntries: STRICT_DNS / LOGICAL_DNS with a load assignment; empty subsets left out", () => {
    const api = "api.example.com"
    const rr = "rr.example.com"
    const p = push({
      services: [
        svc(api, [[443, "TLS"]], { resolution: "DNS", location: "MESH_EXTERNAL", registry: "ServiceEntry" }),
        svc(rr, [[80, "HTTP"]], { resolution: "DNS_ROUND_ROBIN", registry: "ServiceEntry" }),
      ],
      endpoints: [
        ep(api, "api.example.com", 443, { servicePortName: "p-443", locality: "", serviceAccount: "" }),
        ep(rr, "a.example.com", 80, { locality: "" }),
        ep(rr, "b.example.com", 80, { locality: "" }),
      ],
      destinationRules: [
        destinationRule("api", { host: api, subsets: [{ name: "none", labels: { v: "x" } }] }, "default"),
      ],
    })
    const all = clusters(p)
    const strict = all[`outbound|443||${api}`]
    expect(strict).toMatchObject({ type: "STRICT_DNS", dns_lookup_family: "V4_ONLY", respect_dns_ttl: true })
    expect(strict.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({
      address: api,
      port_value: 443,
    })
    expect(all[`outbound|443|none|${api}`]).toBeUndefined()
    const logical = all[`outbound|80||${rr}`]
    expect(logical.type).toBe("LOGICAL_DNS")
    expect(logical.load_assignment.endpoints[0].lb_endpoints).toHaveLength(1)
    expect(clusterConflicts(p).dnsClustersWithoutEndpoints).toBe(1)
  })

  it("resolution NONE: ORIGINAL_DST for sidecars, EDS for gateways", () => {
    const p = push({ services: [svc("db.example.com", [[5432, "TCP"]], { resolution: "NONE" })] })
    expect(clusters(p)[`outbound|5432||db.example.com`]).toMatchObject({
      type: "ORIGINAL_DST",
      lb_policy: "CLUSTER_PROVIDED",
    })
    expect(clusters(p, router())[`outbound|5432||db.example.com`].type).toBe("EDS")
  })

  it("proxies seeing the same service through the same rule share keys", () => {
    const a = keys(basic, sidecar("default"))
    const b = keys(basic, sidecar("default", undefined, { app: "x" }))
    expect(a[`outbound|80||${HOST}`]).toBe(b[`outbound|80||${HOST}`])
    // An endpoint change keeps EDS clusters' keys (identities unchanged).
    const moved = push({ ...basic.input, endpoints: [ep(HOST, "10.0.0.2", 8080, { labels: { version: "v1" } })] })
    expect(keys(moved, sidecar())[`outbound|80||${HOST}`]).toBe(a[`outbound|80||${HOST}`])
    const other = push({ ...basic.input, destinationRules: [reviews({ loadBalancer: { simple: "RANDOM" } })] })
    expect(keys(other, sidecar())[`outbound|80||${HOST}`]).not.toBe(a[`outbound|80||${HOST}`])
  })
})

describe("DestinationRule policies", () => {
  const base = {
    services: [
      svc(HOST, [
        [80, "HTTP"],
        [9090, "GRPC"],
      ]),
    ],
    endpoints: [ep(HOST, "10.0.0.1", 8080)],
  }
  const one = (policy: unknown, _port = 80, subsets?: unknown, options?: PushContextOptions, proxy?: ProxyView): J =>
    clusters(
      push({ ...base, destinationRules: [reviews(policy, subsets !== undefined ? { subsets } : {})] }, options),
      proxy,
    )

  it("load balancers", () => {
    expect(one({ loadBalancer: { simple: "RANDOM" } })[`outbound|80||${HOST}`].lb_policy).toBe("RANDOM")
    const rr = one({ loadBalancer: { simple: "ROUND_ROBIN", warmupDurationSecs: "30s" } })[`outbound|80||${HOST}`]
    expect(rr.lb_policy).toBe("ROUND_ROBIN")
    expect(rr.round_robin_lb_config.slow_start_config.slow_start_window).toEqual({ seconds: "30", nanos: 0 })
    const lr = one({ loadBalancer: { simple: "LEAST_REQUEST", warmup: { duration: "10s", aggression: 2 } } })[
      `outbound|80||${HOST}`
    ]
    expect(lr.least_request_lb_config.slow_start_config).toMatchObject({
      aggression: { default_value: 2 },
      min_weight_percent: { value: 10 },
    })
    const pt = one({ loadBalancer: { simple: "PASSTHROUGH" } })[`outbound|80||${HOST}`]
    expect(pt).toMatchObject({ type: "ORIGINAL_DST", lb_policy: "CLUSTER_PROVIDED" })
    expect(pt.eds_cluster_config).toBeUndefined()
    const ring = one({ loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } })[`outbound|80||${HOST}`]
    expect(ring).toMatchObject({
      lb_policy: "RING_HASH",
      ring_hash_lb_config: { minimum_ring_size: { value: "1024" } },
    })
    const maglev = one({ loadBalancer: { consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } } })[
      `outbound|80||${HOST}`
    ]
    expect(maglev).toMatchObject({ lb_policy: "MAGLEV", maglev_lb_config: { table_size: { value: "65537" } } })
  })

  it("outlier detection", () => {
    const c = one({
      outlierDetection: {
        consecutive5xxErrors: 3,
        consecutiveGatewayErrors: 0,
        interval: "10s",
        baseEjectionTime: "1m",
        maxEjectionPercent: 50,
      },
    })[`outbound|80||${HOST}`]
    expect(c.outlier_detection).toEqual({
      enforcing_success_rate: { value: 0 },
      consecutive_5xx: { value: 3 },
      enforcing_consecutive_5xx: { value: 100 },
      consecutive_gateway_failure: { value: 0 },
      enforcing_consecutive_gateway_failure: { value: 0 },
      interval: { seconds: "10", nanos: 0 },
      base_ejection_time: { seconds: "60", nanos: 0 },
      max_ejection_percent: { value: 50 },
    })
    expect(c.common_lb_config.healthy_panic_threshold).toEqual({ value: 0 })
  })

  it("connection pool", () => {
    const all = one({
      connectionPool: {
        tcp: { maxConnections: 10, connectTimeout: "3s", tcpKeepalive: { probes: 3, time: "60s", interval: "5s" } },
        http: {
          http1MaxPendingRequests: 5,
          http2MaxRequests: 20,
          maxRequestsPerConnection: 1,
          maxRetries: 2,
          idleTimeout: "30s",
        },
      },
    })
    const c = all[`outbound|80||${HOST}`]
    expect(c.connect_timeout).toEqual({ seconds: "3", nanos: 0 })
    expect(c.circuit_breakers.thresholds[0]).toMatchObject({
      max_connections: { value: 10 },
      max_pending_requests: { value: 5 },
      max_requests: { value: 20 },
      max_retries: { value: 2 },
    })
    expect(c.upstream_connection_options.tcp_keepalive).toEqual({
      keepalive_probes: { value: 3 },
      keepalive_time: { value: 60 },
      keepalive_interval: { value: 5 },
    })
    expect(hpo(c)).toMatchObject({
      common_http_protocol_options: { idle_timeout: { seconds: "30" }, max_requests_per_connection: { value: 1 } },
      explicit_http_config: { http_protocol_options: {} },
    })
    const up = one({ connectionPool: { http: { h2UpgradePolicy: "UPGRADE" } } })[`outbound|80||${HOST}`]
    expect(hpo(up).explicit_http_config).toEqual({ http2_protocol_options: {} })
    const pinged = one({
      connectionPool: {
        http: {
          h2UpgradePolicy: "UPGRADE",
          http2ProtocolOptions: { connectionKeepalive: { interval: "30s", timeout: "5s" } },
        },
      },
    })[`outbound|80||${HOST}`]
    expect(hpo(pinged).explicit_http_config.http2_protocol_options.connection_keepalive).toMatchObject({
      interval: { seconds: "30" },
      timeout: { seconds: "5" },
    })
    // Without a timeout the proxy would refuse the keepalive settings: none are sent.
    const noTimeout = one({
      connectionPool: {
        http: { h2UpgradePolicy: "UPGRADE", http2ProtocolOptions: { connectionKeepalive: { interval: "30s" } } },
      },
    })[`outbound|80||${HOST}`]
    expect(hpo(noTimeout).explicit_http_config).toEqual({ http2_protocol_options: {} })
    const client = one({ connectionPool: { http: { useClientProtocol: true } } }, 9090)[`outbound|9090||${HOST}`]
    expect(hpo(client).use_downstream_protocol_config).toBeDefined()
  })

  it("port-level settings and subset policies override the top level", () => {
    const all = one(
      {
        loadBalancer: { simple: "RANDOM" },
        portLevelSettings: [{ port: { number: 9090 }, loadBalancer: { simple: "ROUND_ROBIN" } }],
      },
      80,
      [{ name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } }],
    )
    expect(all[`outbound|80||${HOST}`].lb_policy).toBe("RANDOM")
    expect(all[`outbound|9090||${HOST}`].lb_policy).toBe("ROUND_ROBIN")
    expect(all[`outbound|80|v1|${HOST}`].lb_policy).toBe("LEAST_REQUEST")
  })

  it("TLS DISABLE, SIMPLE and MUTUAL by files", () => {
    expect(one({ tls: { mode: "DISABLE" } })[`outbound|80||${HOST}`].transport_socket).toBeUndefined()
    const simple = one({ tls: { mode: "SIMPLE", caCertificates: "/etc/ca.pem", subjectAltNames: ["reviews"] } })[
      `outbound|80||${HOST}`
    ]
    expect(tlsOf(simple.transport_socket)).toMatchObject({
      sni: HOST,
      common_tls_context: {
        validation_context: {
          trusted_ca: { filename: "/etc/ca.pem" },
          match_subject_alt_names: [{ exact: "reviews" }],
        },
      },
    })
    expect(hpo(simple).upstream_http_protocol_options).toEqual({ auto_sni: true })
    const mutual = one(
      { tls: { mode: "MUTUAL", clientCertificate: "/c.pem", privateKey: "/k.pem", sni: "x.test" } },
      9090,
    )[`outbound|9090||${HOST}`]
    expect(tlsOf(mutual.transport_socket)).toMatchObject({
      sni: "x.test",
      common_tls_context: {
        tls_certificates: [{ certificate_chain: { filename: "/c.pem" }, private_key: { filename: "/k.pem" } }],
        validation_context: { system_root_certs: {} },
        alpn_protocols: ["h2"],
      },
    })
  })

  it("SNI off: no automatic SNI for TLS origination", () => {
    const off = withOptions({}, { enableAutoSni: false })
    const c = one({ tls: { mode: "SIMPLE" } }, 80, undefined, off)[`outbound|80||${HOST}`]
    expect(tlsOf(c.transport_socket).sni).toBeUndefined()
    expect(hpo(c)).toBeUndefined()
  })

  it("MUTUAL by credentialName: SDS over ADS for gateways, ignored by sidecars without a selector", () => {
    const policy = { tls: { mode: "MUTUAL", credentialName: "client-cert" } }
    expect(one(policy)[`outbound|80||${HOST}`].transport_socket).toBeUndefined()
    const gw = one(policy, 80, undefined, undefined, router())[`outbound|80||${HOST}`]
    const common = tlsOf(gw.transport_socket).common_tls_context
    expect(common.tls_certificate_sds_secret_configs[0]).toMatchObject({
      name: "kubernetes://client-cert",
      sds_config: { ads: {} },
    })
    expect(common.combined_validation_context.validation_context_sds_secret_config.name).toBe(
      "kubernetes://client-cert-cacert",
    )
  })

  it("ISTIO_MUTUAL: agent SDS secrets, SPIFFE SANs, mesh ALPN and SNI", () => {
    const all = one({ tls: { mode: "ISTIO_MUTUAL" } }, 80, [{ name: "v1", labels: { version: "v1" } }])
    const ctx = tlsOf(all[`outbound|80|v1|${HOST}`].transport_socket)
    expect(ctx.sni).toBe(`outbound_.80_.v1_.${HOST}`)
    expect(ctx.common_tls_context).toMatchObject({
      tls_certificate_sds_secret_configs: [
        {
          name: "default",
          sds_config: { api_config_source: { grpc_services: [{ envoy_grpc: { cluster_name: "sds-grpc" } }] } },
        },
      ],
      combined_validation_context: {
        default_validation_context: {
          match_subject_alt_names: [{ exact: "spiffe://cluster.local/ns/default/sa/reviews" }],
        },
        validation_context_sds_secret_config: { name: "ROOTCA" },
      },
      alpn_protocols: ["istio-peer-exchange", "istio"],
    })
    expect(tlsOf(all[`outbound|9090||${HOST}`].transport_socket).common_tls_context.alpn_protocols).toEqual([
      "istio-peer-exchange",
      "istio",
      "h2",
    ])
  })

  it("auto mTLS: socket matches on tlsMode; off, DISABLE namespaces and external services: plaintext", () => {
    const c = clusters(push(base))[`outbound|80||${HOST}`]
    expect(c.transport_socket_matches.map((m: J) => m.name)).toEqual(["tlsMode-istio", "tlsMode-disabled"])
    expect(c.transport_socket_matches[0].match).toEqual({ fields: { tlsMode: { stringValue: "istio" } } })
    expect(tlsOf(c.transport_socket_matches[0].transport_socket).sni).toBe(`outbound_.80_._.${HOST}`)
    expect(clusters(push(base), router())[`outbound|80||${HOST}`].transport_socket_matches).toBeDefined()
    const off = clusters(push(base, withOptions({ enableAutoMtls: false })))[`outbound|80||${HOST}`]
    expect(off.transport_socket_matches).toBeUndefined()
    const disabled = clusters(
      push({ ...base, peerAuthentications: [peerAuthentication("off", { mtls: { mode: "DISABLE" } })] }),
    )[`outbound|80||${HOST}`]
    expect(disabled.transport_socket_matches).toBeUndefined()
    const external = clusters(push({ services: [svc(HOST, [[80, "HTTP"]], { location: "MESH_EXTERNAL" })] }))[
      `outbound|80||${HOST}`
    ]
    expect(external.transport_socket_matches).toBeUndefined()
  })

  it("locality failover with outlier detection sets the locality-weighted config", () => {
    const c = one({
      outlierDetection: { consecutive5xxErrors: 1 },
      loadBalancer: { localityLbSetting: { failover: [{ from: "r1", to: "r2" }] } },
    })[`outbound|80||${HOST}`]
    expect(c.common_lb_config.locality_weighted_lb_config).toEqual({})
    expect(
      one({ outlierDetection: { consecutive5xxErrors: 1 } })[`outbound|80||${HOST}`].common_lb_config
        .locality_weighted_lb_config,
    ).toBeUndefined()
  })
})

describe("which DestinationRule applies", () => {
  const services = [svc(HOST, [[80, "HTTP"]])]
  it("the proxy's namespace first, then the service's, exported by exportTo", () => {
    const own = destinationRule("own", { host: HOST, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } }, "client")
    const svcNs = destinationRule(
      "svc",
      { host: "reviews", exportTo: ["."], trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } },
      "default",
    )
    const p = push({ services, destinationRules: [own, svcNs] })
    expect(clusters(p, sidecar("client"))[`outbound|80||${HOST}`].lb_policy).toBe("RANDOM")
    expect(clusters(p, sidecar("default"))[`outbound|80||${HOST}`].lb_policy).toBe("ROUND_ROBIN")
    // Not exported to "third": no rule.
    expect(clusters(p, sidecar("third"))[`outbound|80||${HOST}`].lb_policy).toBe("LEAST_REQUEST")
  })

  it("rules of one host are merged; repeated subsets counted", () => {
    const a = destinationRule("a", { host: "reviews", subsets: [{ name: "v1", labels: { version: "v1" } }] })
    const b = destinationRule("b", {
      host: "reviews",
      subsets: [
        { name: "v1", labels: { version: "other" } },
        { name: "v2", labels: { version: "v2" } },
      ],
    })
    const p = push({ services, destinationRules: [a, b] })
    expect(Object.keys(clusters(p))).toContain(`outbound|80|v2|${HOST}`)
    expect(clusterConflicts(p).destruleSubsets).toBe(1)
  })

  it("ServiceEntries sharing a hostname", () => {
    const se = (ns: string) => svc("api.example.com", [[443, "TLS"]], { namespace: ns, registry: "ServiceEntry" })
    expect(clusterConflicts(push({ services: [se("a"), se("b"), se("c")] })).duplicateEnvoyClusters).toBe(2)
  })
})

describe("EDS", () => {
  const endpoints = [
    ep(HOST, "10.0.0.1", 8080, { labels: { version: "v1", ...MESH_LABELS }, weight: 2 }),
    ep(HOST, "10.0.0.2", 8080, { labels: { version: "v2" }, locality: "r1/z2/s1" }),
    ep(HOST, "10.0.0.3", 8080, { labels: { version: "v1", "mesh.io/draining": "true" } }),
    ep(HOST, "10.0.0.4", 8080, { labels: { version: "v1" }, healthStatus: "UNHEALTHY" }),
    ep(HOST, "10.0.0.5", 8080, { labels: { version: "v1" }, locality: "r2/z1/s1" }),
    ep(HOST, "10.0.0.9", 9999, { servicePortName: "p-9090" }),
  ]
  const subsets = [
    { name: "v1", labels: { version: "v1" } },
    { name: "v2", labels: { version: "v2" } },
  ]
  const mesh = (policy?: unknown, options?: PushContextOptions) =>
    push(
      {
        services: [
          svc(HOST, [
            [80, "HTTP"],
            [9090, "GRPC"],
          ]),
        ],
        endpoints,
        destinationRules: [
          destinationRule("reviews", {
            host: "reviews",
            subsets,
            ...(policy !== undefined ? { trafficPolicy: policy } : {}),
          }),
        ],
      },
      options,
    )
  const addresses = (cla: J) =>
    cla.endpoints.flatMap((l: J) => l.lb_endpoints.map((e: J) => e.endpoint.address.socket_address.address))

  it("groups by locality with weights and health; filters port and subset", () => {
    const cla = eds(mesh(), `outbound|80||${HOST}`)
    expect(cla.endpoints.map((l: J) => [l.locality, l.load_balancing_weight.value])).toEqual([
      [{ region: "r1", zone: "z1", sub_zone: "s1" }, 3],
      [{ region: "r1", zone: "z2", sub_zone: "s1" }, 1],
      [{ region: "r2", zone: "z1", sub_zone: "s1" }, 1],
    ])
    expect(addresses(cla)).toEqual(["10.0.0.1", "10.0.0.3", "10.0.0.2", "10.0.0.5"])
    const first = cla.endpoints[0].lb_endpoints
    expect(first[0]).toMatchObject({ health_status: "HEALTHY", load_balancing_weight: { value: 2 } })
    expect(first[0].metadata.filter_metadata["envoy.transport_socket_match"]).toEqual({
      fields: { tlsMode: { stringValue: "istio" } },
    })
    expect(first[1].health_status).toBe("DRAINING")
    expect(first[1].metadata.filter_metadata["envoy.transport_socket_match"]).toBeUndefined()
    expect(addresses(eds(mesh(), `outbound|80|v2|${HOST}`))).toEqual(["10.0.0.2"])
    expect(addresses(eds(mesh(), `outbound|9090||${HOST}`))).toEqual(["10.0.0.9"])
    expect(eds(mesh(), `outbound|80|nope|${HOST}`)).toBeUndefined()
  })

  it("unhealthy endpoints only when asked to send them", () => {
    const cla = eds(mesh(undefined, withOptions({ sendUnhealthyEndpoints: true })), `outbound|80|v1|${HOST}`)
    expect(addresses(cla)).toContain("10.0.0.4")
  })

  it("a DestinationRule TLS mode other than ISTIO_MUTUAL drops the tlsMode match", () => {
    const cla = eds(mesh({ tls: { mode: "SIMPLE" } }), `outbound|80|v1|${HOST}`)
    expect(cla.endpoints[0].lb_endpoints[0].metadata.filter_metadata["envoy.transport_socket_match"]).toBeUndefined()
  })

  it("failover priorities by proximity with outlier detection; keys then depend on the locality", () => {
    const p = mesh({ outlierDetection: { consecutive5xxErrors: 1 } })
    const cla = eds(p, `outbound|80||${HOST}`, sidecar("default", "r1/z1/s1"))
    expect(cla.endpoints.map((l: J) => l.priority ?? 0)).toEqual([0, 1, 2])
    const keyAt = (locality: string, q = p) =>
      generateProxyEndpoints(q, sidecar("default", locality), [`outbound|80||${HOST}`])[0]!.key
    expect(keyAt("r1/z1/s1")).not.toBe(keyAt("r2/z1/s1"))
    // Without priorities every proxy shares the encoding.
    expect(keyAt("r1/z1/s1", mesh())).toBe(keyAt("r2/z1/s1", mesh()))
  })

  it("failoverPriority by the proxy's labels", () => {
    const p = mesh({
      outlierDetection: { consecutive5xxErrors: 1 },
      loadBalancer: { localityLbSetting: { failoverPriority: ["version"] } },
    })
    const cla = eds(p, `outbound|80||${HOST}`, sidecar("default", "r1/z1/s1", { version: "v1" }))
    expect(cla.endpoints.map((l: J) => [l.locality.zone, l.locality.region, l.priority ?? 0])).toEqual([
      ["z1", "r1", 0],
      ["z2", "r1", 1],
      ["z1", "r2", 0],
    ])
  })

  it("failover regions and distribute weights", () => {
    const failover = mesh({
      outlierDetection: { consecutive5xxErrors: 1 },
      loadBalancer: { localityLbSetting: { failover: [{ from: "r1", to: "r3" }] } },
    })
    const cla = eds(failover, `outbound|80||${HOST}`, sidecar("default", "r1/z1/s1"))
    // r2 is not the failover region: after the others.
    expect(cla.endpoints.map((l: J) => [l.locality.region, l.priority ?? 0])).toEqual([
      ["r1", 0],
      ["r1", 1],
      ["r2", 2],
    ])
    const distribute = mesh({
      loadBalancer: { localityLbSetting: { distribute: [{ from: "r1/*", to: { "r1/*": 80, "r2/*": 20 } }] } },
    })
    const weighted = eds(distribute, `outbound|80||${HOST}`, sidecar("default", "r1/z1/s1"))
    expect(
      weighted.endpoints.map((l: J) => [l.locality.zone, l.locality.region, l.load_balancing_weight.value]),
    ).toEqual([
      ["z1", "r1", 60],
      ["z2", "r1", 20],
      ["z1", "r2", 20],
    ])
  })
})
