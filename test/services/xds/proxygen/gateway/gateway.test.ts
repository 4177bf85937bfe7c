import { describe, expect, it } from "@effect/vitest"
import type { Service } from "../../../../../src/services/registry/model.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type PushContextOptions,
} from "../../../../../src/services/xds/model/push-context.js"
import {
  gatewayReferencedHosts,
  gatewaysForProxy,
  generateGatewayListeners,
  generateGatewayRoutes,
} from "../../../../../src/services/xds/proxygen/gateway/index.js"
import { proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { destinationRule, endpoint, input, resource, virtualService } from "../../../../fixtures/xds/mesh.js"
import { checkResource } from "../../../../support/proxygen/check.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener"
const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
const REVIEWS = "reviews.default.svc.cluster.local"
const RATINGS = "ratings.default.svc.cluster.local"
const DB = "db.default.svc.cluster.local"

const svc = (
  hostname: string,
  ports: ReadonlyArray<[number, Service["ports"][number]["protocol"]]>,
  namespace = "default",
): Service => ({
  hostname,
  namespace,
  ports: ports.map(([port, protocol]) => ({ name: `${protocol.toLowerCase()}-${port}`, port, protocol })),
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: ["*"],
  labels: {},
  registry: "Mock",
  clusterId: "Orchestrator",
})

const SERVICES = [svc(REVIEWS, [[9080, "HTTP"]]), svc(RATINGS, [[9080, "HTTP"]]), svc(DB, [[5432, "TCP"]])]

const gateway = (name: string, spec: unknown, namespace = "mesh-system") => resource("Gateway", name, spec, namespace)

const INGRESS = { app: "ingressgateway" }

const router = (labels: Record<string, string> = INGRESS, namespace = "mesh-system", ip = "10.0.0.9") =>
  proxyView(`router~${ip}~ingress-${ip}.${namespace}~${namespace}.svc.cluster.local`, {
    LABELS: labels,
    NAMESPACE: namespace,
  })!

const pushOf = (
  parts: {
    gateways: ReadonlyArray<ReturnType<typeof gateway>>
    virtualServices?: ReadonlyArray<ReturnType<typeof virtualService>>
    destinationRules?: ReadonlyArray<ReturnType<typeof destinationRule>>
    services?: ReadonlyArray<Service>
    endpoints?: Parameters<typeof input>[0]["endpoints"]
  },
  proxyOptions: Partial<PushContextOptions["proxy"]> = {},
) =>
  makePushContext(
    {
      ...input({
        services: parts.services ?? SERVICES,
        endpoints: parts.endpoints ?? [],
        virtualServices: parts.virtualServices ?? [],
        destinationRules: parts.destinationRules ?? [],
      }),
      proxyConfig: { ...emptyProxyConfigInput, gateways: parts.gateways },
    },
    { ...defaultPushContextOptions, proxy: { ...defaultPushContextOptions.proxy, ...proxyOptions } },
  )

const listeners = (push: ReturnType<typeof pushOf>, proxy = router()) => {
  const generated = generateGatewayListeners(push, proxy)
  return {
    warnings: generated.warnings,
    specs: generated.resources,
    byName: Object.fromEntries(
      generated.resources.map((spec) => {
        const built = spec.build()
        expect(checkResource(LDS, built)).toEqual([])
        return [spec.name, built as J]
      }),
    ),
  }
}

const routes = (push: ReturnType<typeof pushOf>, names: ReadonlyArray<string> = [], proxy = router()) => {
  const generated = generateGatewayRoutes(push, proxy, names)
  return {
    warnings: generated.warnings,
    specs: generated.resources,
    byName: Object.fromEntries(
      generated.resources.map((spec) => {
        const built = spec.build()
        expect(checkResource(RDS, built)).toEqual([])
        return [spec.name, built as J]
      }),
    ),
  }
}

const hcmOf = (chain: J) =>
  chain.filters.find((f: J) => f.name === "envoy.filters.network.http_connection_manager").typed_config
const clustersOf = (routeConfig: J) =>
  routeConfig.virtual_hosts.flatMap((vh: J) => vh.routes.map((r: J) => r.route?.cluster))

const HTTP_GW = gateway("web", {
  selector: INGRESS,
  servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*.example.com"] }],
})

const REVIEWS_VS = virtualService("reviews", {
  hosts: ["reviews.example.com"],
  gateways: ["mesh-system/web"],
  http: [
    { match: [{ uri: { prefix: "/v2" } }], route: [{ destination: { host: "ratings" } }] },
    { route: [{ destination: { host: "reviews", port: { number: 9080 } } }] },
  ],
})

describe("gateway listeners and routes", () => {
  it("HTTP server: one listener with an HCM over RDS http.80, routes from the bound VirtualService", () => {
    const push = pushOf({ gateways: [HTTP_GW], virtualServices: [REVIEWS_VS] })
    const { byName } = listeners(push)
    expect(Object.keys(byName)).toEqual(["0.0.0.0_80"])
    const listener = byName["0.0.0.0_80"]
    expect(listener).toMatchObject({
      address: { socket_address: { address: "0.0.0.0", port_value: 80 } },
      bind_to_port: { value: true },
      traffic_direction: "OUTBOUND",
    })
    expect(listener.listener_filters).toBeUndefined()
    expect(listener.filter_chains).toHaveLength(1)
    const hcm = hcmOf(listener.filter_chains[0])
    expect(hcm).toMatchObject({
      stat_prefix: "outbound_0.0.0.0_80",
      rds: { route_config_name: "http.80", config_source: { ads: {} } },
      use_remote_address: { value: true },
      forward_client_cert_details: "SANITIZE_SET",
    })
    expect(hcm.http_filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.http.fault",
      "envoy.filters.http.cors",
      "envoy.filters.http.router",
    ])

    const rds = routes(push, ["http.80"]).byName["http.80"]
    expect(rds.virtual_hosts).toHaveLength(1)
    expect(rds.virtual_hosts[0]).toMatchObject({ name: "reviews.example.com:80", domains: ["reviews.example.com"] })
    expect(rds.ignore_port_in_host_matching).toBe(true)
    expect(clustersOf(rds)).toEqual([`outbound|9080||${RATINGS}`, `outbound|9080||${REVIEWS}`])
  })

  it("no VirtualService for the server: the blackhole virtual host (404)", () => {
    const push = pushOf({ gateways: [HTTP_GW] })
    const rds = routes(push).byName["http.80"]
    expect(rds.virtual_hosts).toEqual([{ name: "blackhole:80", domains: ["*"], routes: [] }])
    // A name no server has (a draining listener still asks): an empty configuration.
    expect(routes(push, ["http.81"]).byName["http.81"].virtual_hosts).toEqual([])
  })

  it("HTTPS SIMPLE with credentialName: SNI chain, SDS kubernetes:// over ADS, RDS per server", () => {
    const push = pushOf({
      gateways: [
        gateway("web", {
          selector: INGRESS,
          servers: [
            {
              port: { number: 443, name: "https", protocol: "HTTPS" },
              hosts: ["reviews.example.com"],
              tls: {
                mode: "SIMPLE",
                credentialName: "reviews-cert",
                minProtocolVersion: "TLSV1_2",
                cipherSuites: ["ECDHE-RSA-AES128-GCM-SHA256"],
              },
            },
          ],
        }),
      ],
      virtualServices: [REVIEWS_VS],
    })
    const listener = listeners(push).byName["0.0.0.0_443"]
    expect(listener.listener_filters.map((f: J) => f.name)).toEqual(["envoy.filters.listener.tls_inspector"])
    const [chain] = listener.filter_chains
    expect(chain.filter_chain_match).toEqual({ server_names: ["reviews.example.com"] })
    expect(hcmOf(chain).rds.route_config_name).toBe("https.443.https.web.mesh-system")
    const tls = chain.transport_socket.typed_config
    expect(tls.require_client_certificate).toEqual({ value: false })
    expect(tls.common_tls_context).toMatchObject({
      alpn_protocols: ["h2", "http/1.1"],
      tls_params: { tls_minimum_protocol_version: "TLSv1_2", cipher_suites: ["ECDHE-RSA-AES128-GCM-SHA256"] },
      tls_certificate_sds_secret_configs: [{ name: "kubernetes://reviews-cert", sds_config: { ads: {} } }],
    })
    expect(tls.common_tls_context.combined_validation_context).toBeUndefined()
    const rds = routes(push).byName["https.443.https.web.mesh-system"]
    expect(rds.virtual_hosts[0].domains).toEqual(["reviews.example.com"])
  })

  it("MUTUAL: client certificates required, validated against <credential>-cacert or the file CA", () => {
    const push = pushOf({
      gateways: [
        gateway("web", {
          selector: INGRESS,
          servers: [
            {
              port: { number: 443, name: "https-a", protocol: "HTTPS" },
              hosts: ["a.example.com"],
              tls: { mode: "MUTUAL", credentialName: "a-cert", subjectAltNames: ["client.example.com"] },
            },
            {
              port: { number: 443, name: "https-b", protocol: "HTTPS" },
              hosts: ["b.example.com"],
              tls: {
                mode: "MUTUAL",
                serverCertificate: "/etc/certs/cert.pem",
                privateKey: "/etc/certs/key.pem",
                caCertificates: "/etc/certs/ca.pem",
              },
            },
          ],
        }),
      ],
    })
    const chains = listeners(push).byName["0.0.0.0_443"].filter_chains
    expect(chains.map((c: J) => c.filter_chain_match.server_names)).toEqual([["a.example.com"], ["b.example.com"]])
    const a = chains[0].transport_socket.typed_config
    expect(a.require_client_certificate).toEqual({ value: true })
    expect(a.common_tls_context.combined_validation_context).toMatchObject({
      default_validation_context: {
        match_typed_subject_alt_names: [
          { san_type: "DNS", matcher: { exact: "client.example.com" } },
          { san_type: "URI", matcher: { exact: "client.example.com" } },
        ],
      },
      validation_context_sds_secret_config: { name: "kubernetes://a-cert-cacert", sds_config: { ads: {} } },
    })
    const b = chains[1].transport_socket.typed_config.common_tls_context
    expect(b.tls_certificate_sds_secret_configs[0]).toMatchObject({
      name: "file-cert:/etc/certs/cert.pem~/etc/certs/key.pem",
      sds_config: { api_config_source: { grpc_services: [{ envoy_grpc: { cluster_name: "sds-grpc" } }] } },
    })
    expect(b.combined_validation_context.validation_context_sds_secret_config.name).toBe("file-root:/etc/certs/ca.pem")
    expect(hcmOf(chains[1]).rds.route_config_name).toBe("https.443.https-b.web.mesh-system")
  })

  it("ISTIO_MUTUAL: the workload certificate and the mesh root from the agent", () => {
    const push = pushOf({
      gateways: [
        gateway("web", {
          selector: INGRESS,
          servers: [
            { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["*"], tls: { mode: "ISTIO_MUTUAL" } },
          ],
        }),
      ],
    })
    const [chain] = listeners(push).byName["0.0.0.0_443"].filter_chains
    expect(chain.filter_chain_match).toBeUndefined()
    const ctx = chain.transport_socket.typed_config.common_tls_context
    expect(ctx.tls_certificate_sds_secret_configs[0].name).toBe("default")
    expect(ctx.combined_validation_context.validation_context_sds_secret_config.name).toBe("ROOTCA")
  })

  it("PASSTHROUGH: one SNI chain per VirtualService tls match, tcp_proxy to its destination", () => {
    const push = pushOf({
      gateways: [
        gateway("tls", {
          selector: INGRESS,
          servers: [
            {
              port: { number: 443, name: "tls", protocol: "TLS" },
              hosts: ["*.example.com"],
              tls: { mode: "PASSTHROUGH" },
            },
          ],
        }),
      ],
      virtualServices: [
        virtualService("passthrough", {
          hosts: ["reviews.example.com", "ratings.example.com"],
          gateways: ["mesh-system/tls"],
          tls: [
            { match: [{ sniHosts: ["reviews.example.com"] }], route: [{ destination: { host: "reviews" } }] },
            {
              match: [{ sniHosts: ["ratings.example.com"] }],
              route: [
                { destination: { host: "ratings", subset: "v1" }, weight: 80 },
                { destination: { host: "ratings", subset: "v2" }, weight: 20 },
              ],
            },
          ],
        }),
      ],
    })
    const listener = listeners(push).byName["0.0.0.0_443"]
    expect(listener.listener_filters[0].name).toBe("envoy.filters.listener.tls_inspector")
    const chains = listener.filter_chains
    expect(chains.map((c: J) => c.filter_chain_match.server_names)).toEqual([
      ["reviews.example.com"],
      ["ratings.example.com"],
    ])
    expect(chains[0].transport_socket).toBeUndefined()
    expect(chains[0].filters[0].typed_config).toMatchObject({
      stat_prefix: `outbound|9080||${REVIEWS}`,
      cluster: `outbound|9080||${REVIEWS}`,
    })
    expect(chains[1].filters[0].typed_config.weighted_clusters.clusters).toEqual([
      { name: `outbound|9080|v1|${RATINGS}`, weight: 80 },
      { name: `outbound|9080|v2|${RATINGS}`, weight: 20 },
    ])
  })

  it("AUTO_PASSTHROUGH: SNI-DNAT chains per service port and subset the hosts cover", () => {
    const push = pushOf({
      gateways: [
        gateway("cross-network", {
          selector: INGRESS,
          servers: [
            {
              port: { number: 15443, name: "tls", protocol: "TLS" },
              hosts: ["*.default.svc.cluster.local"],
              tls: { mode: "AUTO_PASSTHROUGH" },
            },
          ],
        }),
      ],
      destinationRules: [
        destinationRule("reviews", { host: "reviews", subsets: [{ name: "v1", labels: { version: "v1" } }] }),
      ],
    })
    const chains = listeners(push).byName["0.0.0.0_15443"].filter_chains
    expect(chains.map((c: J) => c.filter_chain_match.server_names[0])).toEqual([
      `outbound_.5432_._.${DB}`,
      `outbound_.9080_._.${RATINGS}`,
      `outbound_.9080_._.${REVIEWS}`,
      `outbound_.9080_.v1_.${REVIEWS}`,
    ])
    expect(chains[0].filter_chain_match.application_protocols).toEqual([
      "istio",
      "istio-peer-exchange",
      "istio-http/1.0",
      "istio-http/1.1",
      "istio-h2",
    ])
    expect(chains[3].filters[0].typed_config.cluster).toBe(`outbound_.9080_.v1_.${REVIEWS}`)
  })

  it("TCP server: tcp_proxy from the VirtualService tcp route; none bound → no listener, a warning", () => {
    const gw = gateway("db", {
      selector: INGRESS,
      servers: [{ port: { number: 5432, name: "tcp", protocol: "TCP" }, hosts: ["db.example.com"] }],
    })
    const vs = virtualService("db", {
      hosts: ["db.example.com"],
      gateways: ["mesh-system/db"],
      tcp: [{ match: [{ port: 5432 }], route: [{ destination: { host: "db" } }] }],
    })
    const [chain] = listeners(pushOf({ gateways: [gw], virtualServices: [vs] })).byName["0.0.0.0_5432"].filter_chains
    expect(chain.filter_chain_match).toBeUndefined()
    expect(chain.filters[0].typed_config.cluster).toBe(`outbound|5432||${DB}`)
    const none = listeners(pushOf({ gateways: [gw] }))
    expect(none.specs).toEqual([])
    expect(none.warnings.map((w) => w.message).join()).toContain("Gateway mesh-system/db")
  })

  it("httpsRedirect: virtual hosts require TLS, bare ones for hosts without a VirtualService", () => {
    const push = pushOf({
      gateways: [
        gateway("web", {
          selector: INGRESS,
          servers: [
            {
              port: { number: 80, name: "http", protocol: "HTTP" },
              hosts: ["reviews.example.com", "mesh-system/other.example.com"],
              tls: { httpsRedirect: true },
            },
          ],
        }),
      ],
      virtualServices: [REVIEWS_VS],
    })
    const rds = routes(push).byName["http.80"]
    expect(rds.virtual_hosts.map((vh: J) => [vh.name, vh.require_tls, vh.routes.length])).toEqual([
      ["other.example.com:80", "ALL", 0],
      ["reviews.example.com:80", "ALL", 2],
    ])
  })

  it("two Gateways on one port merge into one listener and one route configuration", () => {
    const other = gateway(
      "api",
      {
        selector: INGRESS,
        servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["api.example.org"] }],
      },
      "default",
    )
    const apiVs = virtualService("api", {
      hosts: ["api.example.org"],
      gateways: ["api"],
      http: [{ route: [{ destination: { host: "ratings" } }] }],
    })
    const push = pushOf({ gateways: [HTTP_GW, other], virtualServices: [REVIEWS_VS, apiVs] })
    const merged = gatewaysForProxy(push, router())
    expect(merged.names).toEqual(["default/api", "mesh-system/web"])
    const { byName } = listeners(push)
    expect(Object.keys(byName)).toEqual(["0.0.0.0_80"])
    expect(byName["0.0.0.0_80"].filter_chains).toHaveLength(1)
    const rds = routes(push).byName["http.80"]
    expect(rds.virtual_hosts.map((vh: J) => vh.name)).toEqual(["api.example.org:80", "reviews.example.com:80"])
  })

  it("conflicting servers on one port are dropped with a warning", () => {
    const a = gateway("a", {
      selector: INGRESS,
      servers: [
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["x.example.com"],
          tls: { mode: "SIMPLE", credentialName: "x" },
        },
      ],
    })
    const b = gateway("b", {
      selector: INGRESS,
      servers: [
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["x.example.com"],
          tls: { mode: "SIMPLE", credentialName: "y" },
        },
        { port: { number: 80, name: "tcp", protocol: "TCP" }, hosts: ["*"] },
      ],
    })
    const push = pushOf({ gateways: [a, HTTP_GW, b] })
    const { byName, warnings } = listeners(push)
    expect(byName["0.0.0.0_443"].filter_chains).toHaveLength(1)
    const text = warnings.map((w) => w.message).join("\n")
    expect(text).toContain("Gateway mesh-system/b: servers[0]: duplicate host names x.example.com")
    // Oldest first (same age: by namespace/name): b's TCP server took port 80 before web's HTTP one.
    expect(text).toContain("Gateway mesh-system/web: servers[0]: port 80 HTTP conflicts with the TCP server")
    expect(warnings.every((w) => w.scope === "gateway")).toBe(true)
  })

  it("selector mismatch: the Gateway does not apply", () => {
    const push = pushOf({ gateways: [HTTP_GW], virtualServices: [REVIEWS_VS] })
    expect(generateGatewayListeners(push, router({ app: "egressgateway" })).resources).toEqual([])
    expect(gatewaysForProxy(push, router({ app: "egressgateway" })).names).toEqual([])
  })

  it("PILOT_SCOPE_GATEWAY_TO_NAMESPACE: only Gateways of the router's namespace", () => {
    const elsewhere = gateway(
      "team",
      { selector: INGRESS, servers: [{ port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
      "team",
    )
    const gateways = [HTTP_GW, elsewhere]
    expect(gatewaysForProxy(pushOf({ gateways }), router()).names).toEqual(["mesh-system/web", "team/team"])
    const scoped = pushOf({ gateways }, { scopeGatewayToNamespace: true })
    expect(gatewaysForProxy(scoped, router()).names).toEqual(["mesh-system/web"])
    expect(Object.keys(listeners(scoped).byName)).toEqual(["0.0.0.0_80"])
  })

  it("a service port the router serves translates to its target port", () => {
    const ingress = svc("ingress.mesh-system.svc.cluster.local", [[80, "HTTP"]], "mesh-system")
    const push = pushOf({
      gateways: [HTTP_GW],
      services: [...SERVICES, ingress],
      endpoints: [
        { ...endpoint(ingress.hostname, "10.0.0.9", 8080), servicePortName: "http-80", namespace: "mesh-system" },
      ],
    })
    expect(Object.keys(listeners(push).byName)).toEqual(["0.0.0.0_8080"])
    expect(Object.keys(routes(push).byName)).toEqual(["http.8080"])
  })

  it("referenced hosts: destinations of bound VirtualServices and AUTO_PASSTHROUGH services", () => {
    const auto = gateway("auto", {
      selector: INGRESS,
      servers: [
        {
          port: { number: 15443, name: "tls", protocol: "TLS" },
          hosts: ["db.default.svc.cluster.local"],
          tls: { mode: "AUTO_PASSTHROUGH" },
        },
      ],
    })
    const unbound = virtualService("unbound", {
      hosts: ["x.example.com"],
      gateways: ["mesh-system/other"],
      http: [{ route: [{ destination: { host: "ratings" } }] }],
    })
    const push = pushOf({ gateways: [HTTP_GW, auto], virtualServices: [REVIEWS_VS, unbound] })
    expect([...gatewayReferencedHosts(push, router())].sort()).toEqual([DB, RATINGS, REVIEWS])
  })

  it("replicas share encodings; a VirtualService change changes only the route key", () => {
    const push = pushOf({ gateways: [HTTP_GW], virtualServices: [REVIEWS_VS] })
    const one = router(INGRESS, "mesh-system", "10.0.0.9")
    const two = router(INGRESS, "mesh-system", "10.0.0.10")
    const keys = (p: ReturnType<typeof pushOf>, proxy: ReturnType<typeof router>) => [
      ...generateGatewayListeners(p, proxy).resources.map((r) => r.key),
      ...generateGatewayRoutes(p, proxy, []).resources.map((r) => r.key),
    ]
    expect(keys(push, one)).toEqual(keys(push, two))
    const changed = pushOf({
      gateways: [HTTP_GW],
      virtualServices: [
        virtualService("reviews", { ...REVIEWS_VS.spec, http: [{ route: [{ destination: { host: "ratings" } }] }] }),
      ],
    })
    const [lds, rds] = keys(push, one)
    const [lds2, rds2] = keys(changed, one)
    expect(lds2).toBe(lds)
    expect(rds2).not.toBe(rds)
  })
})
