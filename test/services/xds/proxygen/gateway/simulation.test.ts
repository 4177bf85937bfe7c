/**
 * Router traffic simulated end to end through the generated configuration (issue 45): a
 * connection picks the router's listener and filter chain by port, SNI and ALPN, an HTTP request
 * then its virtual host and route; each case says where the traffic goes, not how the config looks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Annotations } from "../../../../../src/services/constants.js"
import { PARENTS_ANNOTATION } from "../../../../../src/services/gateway-api/model.js"
import { convertIngresses } from "../../../../../src/services/ingress/convert.js"
import { parseExtensionProviders } from "../../../../../src/services/mesh-config/extension-providers.js"
import type { Service } from "../../../../../src/services/registry/model.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type PushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import {
  gatewayReferencedHosts,
  generateGatewayListeners,
  generateGatewayRoutes,
} from "../../../../../src/services/xds/proxygen/gateway/index.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { endpoint, input, resource, virtualService } from "../../../../fixtures/xds/mesh.js"
import {
  evaluateRouteConfig,
  httpConnectionManager,
  listenerFor,
  selectFilterChain,
  tcpTarget,
} from "../../../../support/proxygen/evaluator.js"
import type { Obj } from "../../../../support/proxygen/matchers.js"
import {
  convert,
  gateway as gatewayApiGateway,
  service as gatewayApiService,
  tlsRoute,
} from "../../../gateway-api/fixtures.js"
import { ingress } from "../../../ingress/fixtures.js"

const svc = (
  hostname: string,
  ports: ReadonlyArray<readonly [number, Service["ports"][number]["protocol"]]>,
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

const INGRESS = { app: "ingressgateway" }
const gateway = (name: string, spec: unknown, namespace = "mesh-system") => resource("Gateway", name, spec, namespace)

const router = (namespace = "mesh-system", ip = "10.0.0.9"): ProxyView =>
  proxyView(`router~${ip}~ingress-${ip}.${namespace}~${namespace}.svc.cluster.local`, {
    LABELS: INGRESS,
    NAMESPACE: namespace,
  })!

interface World {
  readonly gateways: ReadonlyArray<ReturnType<typeof gateway>>
  readonly virtualServices?: ReadonlyArray<ReturnType<typeof virtualService>>
  readonly services?: ReadonlyArray<Service>
  readonly endpoints?: Parameters<typeof input>[0]["endpoints"]
}

const pushOf = (world: World): PushContext =>
  makePushContext(
    {
      ...input({
        services: world.services ?? [],
        endpoints: world.endpoints ?? [],
        virtualServices: world.virtualServices ?? [],
      }),
      proxyConfig: { ...emptyProxyConfigInput, gateways: world.gateways },
    },
    defaultPushContextOptions,
  )

interface Call {
  readonly port: number
  /** The Host header of an HTTP request; absent for a TCP/TLS stream. */
  readonly host?: string
  readonly path?: string
  /** SNI the client sends: the connection is TLS. */
  readonly sni?: string
  readonly alpn?: ReadonlyArray<string>
}

type Outcome =
  | { readonly kind: "no-listener" | "no-chain" | "no-virtual-host" | "no-route" | "redirect" }
  | { readonly kind: "cluster"; readonly cluster: string; readonly virtualHost?: string; readonly terminated: boolean }

/** Where the router sends one call: listener by port, chain by SNI/ALPN, then HTTP routing or tcp_proxy. */
const send = (push: PushContext, call: Call, proxy = router()): Outcome => {
  const listeners = generateGatewayListeners(push, proxy).resources.map((r) => r.build() as Obj)
  const listener = listenerFor(listeners, undefined, call.port)
  if (listener === undefined) return { kind: "no-listener" }
  const tls = call.sni !== undefined
  const chain = selectFilterChain(listener, {
    destinationPort: call.port,
    sni: call.sni,
    transportProtocol: tls ? "tls" : "raw_buffer",
    applicationProtocols: call.alpn ?? (call.host !== undefined ? ["http/1.1"] : []),
  })
  if (chain === undefined) return { kind: "no-chain" }
  const terminated = chain.transport_socket !== undefined
  const hcm = httpConnectionManager(chain)
  if (hcm !== undefined) {
    const name = String((hcm.rds as Obj | undefined)?.route_config_name ?? "")
    const config = generateGatewayRoutes(push, proxy, [name]).resources[0]!.build() as Obj
    const outcome = evaluateRouteConfig(config, { host: call.host ?? "", path: call.path ?? "/", tls: terminated })
    if (outcome.kind !== "route") return { kind: outcome.kind === "no-route-config" ? "no-route" : outcome.kind }
    if (outcome.cluster === undefined) return { kind: "redirect" }
    return { kind: "cluster", cluster: outcome.cluster, virtualHost: String(outcome.virtualHost.name), terminated }
  }
  const target = tcpTarget(chain)
  if (target === undefined || target.kind !== "cluster") return { kind: "no-chain" }
  return { kind: "cluster", cluster: target.cluster, terminated }
}

const HTTP_GATEWAY = gateway("web", {
  selector: INGRESS,
  servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }],
})

describe("router simulation: short host lookup (issue 45 point 1)", () => {
  const routeTo = (destination: string) =>
    virtualService("vs", {
      hosts: ["app.example.com"],
      gateways: ["mesh-system/web"],
      http: [{ route: [{ destination: { host: destination, port: { number: 80 } } }] }],
    })

  it("a destination `a` in namespace default is a.default.svc.<domain>, not a.example.com", () => {
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [routeTo("a")],
      services: [svc("a.example.com", [[80, "HTTP"]]), svc("a.default.svc.cluster.local", [[80, "HTTP"]])],
    })
    expect(send(push, { port: 80, host: "app.example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|80||a.default.svc.cluster.local",
    })
  })

  it("no a.default.svc.<domain>: the route goes to that host's cluster (none, no endpoints), never a.example.com", () => {
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [routeTo("a")],
      services: [svc("a.example.com", [[80, "HTTP"]])],
    })
    expect(send(push, { port: 80, host: "app.example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|80||a.default.svc.cluster.local",
    })
    // The router is not given a.example.com's cluster for it, and the generator says why.
    expect([...gatewayReferencedHosts(push, router())]).toEqual(["a.default.svc.cluster.local"])
    const warnings = generateGatewayRoutes(push, router(), ["http.80"]).warnings.map((w) => w.message)
    expect(warnings.some((m) => m.includes("a.default.svc.cluster.local is not in the service registry"))).toBe(true)
  })

  it("a dotted name is taken as written: `a.default` is neither completed nor guessed", () => {
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [routeTo("a.default")],
      services: [svc("a.default.svc.cluster.local", [[80, "HTTP"]])],
    })
    expect(send(push, { port: 80, host: "app.example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|80||a.default",
    })
  })

  it("a short name in another VirtualService namespace resolves in that namespace", () => {
    const vs = virtualService(
      "vs",
      {
        hosts: ["app.example.com"],
        gateways: ["mesh-system/web"],
        http: [{ route: [{ destination: { host: "a" } }] }],
      },
      "shop",
    )
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [vs],
      services: [svc("a.default.svc.cluster.local", [[80, "HTTP"]]), svc("a.shop.svc.cluster.local", [[8080, "HTTP"]])],
    })
    // The destination names no port: the service's only port.
    expect(send(push, { port: 80, host: "app.example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|8080||a.shop.svc.cluster.local",
    })
  })
})

describe("router simulation: virtual-host merging (issue 45 point 3)", () => {
  const reviews = svc("reviews.default.svc.cluster.local", [[9080, "HTTP"]])
  const toReviews = (name: string, hosts: ReadonlyArray<string>) =>
    virtualService(name, {
      hosts,
      gateways: ["mesh-system/web"],
      http: [{ route: [{ destination: { host: "reviews" } }] }],
    })

  it("hosts of one VirtualService share one virtual host (the first name kept)", () => {
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [toReviews("both", ["b.example.com", "a.example.com"])],
      services: [reviews],
    })
    for (const host of ["a.example.com", "b.example.com"])
      expect(send(push, { port: 80, host })).toEqual({
        kind: "cluster",
        cluster: "outbound|9080||reviews.default.svc.cluster.local",
        virtualHost: "a.example.com:80",
        terminated: false,
      })
  })

  it("two VirtualServices with equal routes keep a virtual host each, under their own names", () => {
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [toReviews("a", ["a.example.com"]), toReviews("b", ["b.example.com"])],
      services: [reviews],
    })
    expect(send(push, { port: 80, host: "a.example.com" })).toMatchObject({ virtualHost: "a.example.com:80" })
    expect(send(push, { port: 80, host: "b.example.com" })).toMatchObject({ virtualHost: "b.example.com:80" })
    const config = generateGatewayRoutes(push, router(), ["http.80"]).resources[0]!.build() as Obj
    expect((config.virtual_hosts as ReadonlyArray<Obj>).map((vh) => [vh.name, vh.domains])).toEqual([
      ["a.example.com:80", ["a.example.com"]],
      ["b.example.com:80", ["b.example.com"]],
    ])
  })

  it("a host adding a second VirtualService's routes leaves the shared virtual host", () => {
    const extra = virtualService("extra", {
      hosts: ["b.example.com"],
      gateways: ["mesh-system/web"],
      http: [{ match: [{ uri: { prefix: "/x" } }], route: [{ destination: { host: "reviews" } }] }],
    })
    const push = pushOf({
      gateways: [HTTP_GATEWAY],
      virtualServices: [toReviews("both", ["a.example.com", "b.example.com", "c.example.com"]), extra],
      services: [reviews],
    })
    const config = generateGatewayRoutes(push, router(), ["http.80"]).resources[0]!.build() as Obj
    expect((config.virtual_hosts as ReadonlyArray<Obj>).map((vh) => [vh.name, vh.domains])).toEqual([
      ["a.example.com:80", ["a.example.com", "c.example.com"]],
      ["b.example.com:80", ["b.example.com"]],
    ])
  })
})

describe("router simulation: Gateways bound to Services by annotation (issue 45 point 2)", () => {
  const INGRESS_SVC = "ingress.mesh-system.svc.cluster.local"
  const reviews = svc("reviews.default.svc.cluster.local", [[9080, "HTTP"]])
  /** The router's Service: ports 80 → 8080 and 443 → 8443 on the router's address. */
  const ingress = (namespace = "mesh-system", hostname = INGRESS_SVC): World["services"] & object => [
    svc(
      hostname,
      [
        [80, "HTTP"],
        [443, "HTTPS"],
      ],
      namespace,
    ),
  ]
  const instances = (hostname = INGRESS_SVC, namespace = "mesh-system") => [
    { ...endpoint(hostname, "10.0.0.9", 8080), servicePortName: "http-80", namespace },
    { ...endpoint(hostname, "10.0.0.9", 8443), servicePortName: "https-443", namespace },
  ]
  const annotated = (services: string, namespace = "mesh-system") => ({
    ...gateway(
      "bound",
      {
        // No selector: the annotation alone decides.
        servers: [
          { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] },
          { port: { number: 9000, name: "tcp", protocol: "TCP" }, hosts: ["*"] },
        ],
      },
      namespace,
    ),
    meta: {
      name: "bound",
      namespace,
      labels: {},
      annotations: { [Annotations.gatewayService]: services },
    },
  })
  const routeAll = (gw: string) =>
    virtualService("all", {
      hosts: ["*"],
      gateways: [gw],
      http: [{ route: [{ destination: { host: "reviews" } }] }],
      tcp: [{ route: [{ destination: { host: "reviews" } }] }],
    })

  it("listens only on the Services' ports, translated to their target ports", () => {
    const push = pushOf({
      gateways: [annotated(`other.example.com,${INGRESS_SVC}`)],
      virtualServices: [routeAll("mesh-system/bound")],
      services: [reviews, ...ingress()],
      endpoints: instances(),
    })
    expect(send(push, { port: 8080, host: "app.example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|9080||reviews.default.svc.cluster.local",
    })
    // The server's own port is not listened on; 9000 is no port of the Service: no listener, a notice.
    expect(send(push, { port: 80, host: "app.example.com" })).toEqual({ kind: "no-listener" })
    expect(send(push, { port: 9000 })).toEqual({ kind: "no-listener" })
    const generated = generateGatewayListeners(push, router())
    expect(generated.resources.map((r) => r.name)).toEqual(["0.0.0.0_8080"])
    expect(generated.warnings.map((w) => w.message)).toContain(
      "Gateway mesh-system/bound: servers[1].port.number 9000 is not a port of the Gateway's Services; server skipped",
    )
  })

  it("no Service of the annotation on the router: the Gateway does not apply, whatever the labels", () => {
    const push = pushOf({
      gateways: [annotated("elsewhere.mesh-system.svc.cluster.local")],
      virtualServices: [routeAll("mesh-system/bound")],
      services: [reviews, ...ingress()],
      endpoints: instances(),
    })
    expect(generateGatewayListeners(push, router()).resources).toEqual([])
    expect(send(push, { port: 8080, host: "app.example.com" })).toEqual({ kind: "no-listener" })
  })

  it("a Service of that name in another namespace than the Gateway's does not bind it", () => {
    const other = "ingress.team.svc.cluster.local"
    const push = pushOf({
      gateways: [annotated(other)],
      virtualServices: [routeAll("mesh-system/bound")],
      services: [reviews, ...ingress("team", other)],
      endpoints: instances(other, "team"),
    })
    expect(generateGatewayListeners(push, router()).resources).toEqual([])
  })
})

describe("router simulation: TLS termination routes (issue 45 point 4)", () => {
  const backend = svc("backend.default.svc.cluster.local", [[8080, "TCP"]])
  const other = svc("other.default.svc.cluster.local", [[8080, "TCP"]])
  const server = (name: string, host: string, mode: string) => ({
    port: { number: 443, name, protocol: "TLS" },
    hosts: [`*/${host}`],
    tls: mode === "PASSTHROUGH" ? { mode } : { mode, credentialName: "cert" },
  })
  const tlsGateway = (...servers: ReadonlyArray<ReturnType<typeof server>>) =>
    gateway("tls", { selector: INGRESS, servers })
  /** A VirtualService as the Gateway-API conversion writes it for a TLSRoute (or by hand, without the annotation). */
  const tlsVs = (name: string, host: string, destination: string, fromTlsRoute = true) => ({
    ...virtualService(name, {
      hosts: [host],
      gateways: ["mesh-system/tls"],
      tls: [
        {
          match: [{ sniHosts: [host], port: 443 }],
          route: [{ destination: { host: destination, port: { number: 8080 } } }],
        },
      ],
    }),
    meta: {
      name,
      namespace: "default",
      labels: {},
      annotations: fromTlsRoute ? { [PARENTS_ANNOTATION]: `TLSRoute/default/${name}` } : {},
    },
  })

  it("SIMPLE: a TLSRoute's VirtualService routes the decrypted stream to its backend", () => {
    const push = pushOf({
      gateways: [tlsGateway(server("tls", "example.com", "SIMPLE"))],
      virtualServices: [tlsVs("route", "example.com", "backend")],
      services: [backend],
    })
    expect(send(push, { port: 443, sni: "example.com" })).toEqual({
      kind: "cluster",
      cluster: "outbound|8080||backend.default.svc.cluster.local",
      terminated: true,
    })
  })

  it("MUTUAL terminates (client certificate required) and routes the same way", () => {
    const push = pushOf({
      gateways: [tlsGateway(server("tls", "example.com", "MUTUAL"))],
      virtualServices: [tlsVs("route", "example.com", "backend")],
      services: [backend],
    })
    expect(send(push, { port: 443, sni: "example.com" })).toMatchObject({
      cluster: "outbound|8080||backend.default.svc.cluster.local",
      terminated: true,
    })
  })

  it("PASSTHROUGH: the same VirtualService forwards the stream still encrypted", () => {
    const push = pushOf({
      gateways: [tlsGateway(server("tls", "example.com", "PASSTHROUGH"))],
      virtualServices: [tlsVs("route", "example.com", "backend")],
      services: [backend],
    })
    expect(send(push, { port: 443, sni: "example.com" })).toEqual({
      kind: "cluster",
      cluster: "outbound|8080||backend.default.svc.cluster.local",
      terminated: false,
    })
  })

  it("mixed on one port: terminate and passthrough servers each reach their own backend by SNI", () => {
    const push = pushOf({
      gateways: [
        tlsGateway(
          server("tls-terminate", "terminate.example.com", "SIMPLE"),
          server("tls-passthrough", "passthrough.example.com", "PASSTHROUGH"),
        ),
      ],
      virtualServices: [
        tlsVs("terminate", "terminate.example.com", "backend"),
        tlsVs("passthrough", "passthrough.example.com", "other"),
      ],
      services: [backend, other],
    })
    expect(send(push, { port: 443, sni: "terminate.example.com" })).toEqual({
      kind: "cluster",
      cluster: "outbound|8080||backend.default.svc.cluster.local",
      terminated: true,
    })
    expect(send(push, { port: 443, sni: "passthrough.example.com" })).toEqual({
      kind: "cluster",
      cluster: "outbound|8080||other.default.svc.cluster.local",
      terminated: false,
    })
  })

  it("a hand-written VirtualService's tls rules do not serve a terminating server (the reference's rule)", () => {
    const push = pushOf({
      gateways: [tlsGateway(server("tls", "example.com", "SIMPLE"))],
      virtualServices: [tlsVs("route", "example.com", "backend", false)],
      services: [backend],
    })
    expect(send(push, { port: 443, sni: "example.com" })).toEqual({ kind: "no-listener" })
  })

  it("end to end from Gateway API: a TLSRoute on a Terminate listener reaches its backend decrypted", () => {
    const converted = convert({
      gateways: [
        gatewayApiGateway(
          "edge",
          {
            listeners: [
              {
                name: "tls",
                port: 443,
                protocol: "TLS",
                hostname: "example.com",
                tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] },
                allowedRoutes: { namespaces: { from: "All" } },
              },
            ],
          },
          { namespace: "mesh-system" },
        ),
      ],
      tlsRoutes: [
        tlsRoute("route", {
          parentRefs: [{ name: "edge", namespace: "mesh-system" }],
          hostnames: ["example.com"],
          rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
        }),
      ],
      services: [gatewayApiService("backend", "default", [["tcp", 8080, "TCP"]])],
    })
    const push = makePushContext(
      {
        ...input({ services: [backend], virtualServices: converted.virtualServices }),
        proxyConfig: { ...emptyProxyConfigInput, gateways: converted.gateways },
      },
      defaultPushContextOptions,
    )
    const edge = proxyView("router~10.0.0.9~edge-1.mesh-system~mesh-system.svc.cluster.local", {
      LABELS: { "gateway.networking.k8s.io/gateway-name": "edge" },
      NAMESPACE: "mesh-system",
    })!
    expect(send(push, { port: 443, sni: "example.com" }, edge)).toEqual({
      kind: "cluster",
      cluster: "outbound|8080||backend.default.svc.cluster.local",
      terminated: true,
    })
  })
})

describe("router simulation: credentialName sds://<name> (issue 45 point 5)", () => {
  const SDS_HOST = "sds.mesh-system.svc.cluster.local"
  const reviews = svc("reviews.default.svc.cluster.local", [[9080, "HTTP"]])
  const sdsServer = svc(SDS_HOST, [[9090, "GRPC"]], "mesh-system")
  const httpsGateway = (mode: string, credentialName: string) =>
    gateway("web", {
      selector: INGRESS,
      servers: [
        {
          port: { number: 443, name: "https", protocol: "HTTPS" },
          hosts: ["app.example.com"],
          tls: { mode, credentialName },
        },
      ],
    })
  const routeApp = virtualService("app", {
    hosts: ["app.example.com"],
    gateways: ["mesh-system/web"],
    http: [{ route: [{ destination: { host: "reviews" } }] }],
  })
  const withProviders = (world: World, providers: ReadonlyArray<{ name: string; [k: string]: unknown }>) =>
    makePushContext(
      {
        ...input({ services: world.services ?? [], virtualServices: world.virtualServices ?? [] }),
        proxyConfig: { ...emptyProxyConfigInput, gateways: world.gateways },
      },
      {
        ...defaultPushContextOptions,
        proxy: { ...defaultPushContextOptions.proxy, extensionProviders: parseExtensionProviders(providers) },
      },
    )
  const SDS_PROVIDERS = [
    { name: "envoy", envoyFileAccessLog: { path: "/dev/stdout" } },
    { name: "vault", sds: { service: SDS_HOST, port: 9090 } },
  ]
  /** The terminating chain the router picks for app.example.com, and its TLS context. */
  const tlsContextOf = (push: PushContext) => {
    const listeners = generateGatewayListeners(push, router()).resources.map((r) => r.build() as Obj)
    const chain = selectFilterChain(listenerFor(listeners, undefined, 443)!, {
      destinationPort: 443,
      sni: "app.example.com",
      transportProtocol: "tls",
      applicationProtocols: ["h2"],
    })!
    return ((chain.transport_socket as Obj).typed_config as Obj).common_tls_context as Obj
  }
  const fromProvider = (name: string) => ({
    name,
    sds_config: {
      api_config_source: {
        api_type: "GRPC",
        set_node_on_first_message_only: true,
        transport_api_version: "V3",
        grpc_services: [{ envoy_grpc: { cluster_name: `outbound|9090||${SDS_HOST}`, authority: SDS_HOST } }],
      },
      resource_api_version: "V3",
    },
  })

  it("SIMPLE: the certificate comes from the SDS provider's cluster under the bare name; requests still route", () => {
    const push = withProviders(
      {
        gateways: [httpsGateway("SIMPLE", "sds://app-cert")],
        virtualServices: [routeApp],
        services: [reviews, sdsServer],
      },
      SDS_PROVIDERS,
    )
    expect(tlsContextOf(push).tls_certificate_sds_secret_configs).toEqual([fromProvider("app-cert")])
    expect(send(push, { port: 443, sni: "app.example.com", host: "app.example.com", alpn: ["h2"] })).toEqual({
      kind: "cluster",
      cluster: "outbound|9080||reviews.default.svc.cluster.local",
      virtualHost: "app.example.com:443",
      terminated: true,
    })
    // The router is sent the provider's cluster with the routes' ones.
    expect([...gatewayReferencedHosts(push, router())].sort()).toEqual(["reviews.default.svc.cluster.local", SDS_HOST])
  })

  it("MUTUAL: the client CA (<name>-cacert) comes from the provider too", () => {
    const push = withProviders(
      {
        gateways: [httpsGateway("MUTUAL", "sds://app-cert")],
        virtualServices: [routeApp],
        services: [reviews, sdsServer],
      },
      SDS_PROVIDERS,
    )
    const context = tlsContextOf(push)
    expect(context.tls_certificate_sds_secret_configs).toEqual([fromProvider("app-cert")])
    expect((context.combined_validation_context as Obj).validation_context_sds_secret_config).toEqual(
      fromProvider("app-cert-cacert"),
    )
  })

  it("no SDS provider in mesh config: the bare name is a credential over ADS", () => {
    const push = withProviders(
      { gateways: [httpsGateway("SIMPLE", "sds://app-cert")], virtualServices: [routeApp], services: [reviews] },
      [],
    )
    const [secret] = tlsContextOf(push).tls_certificate_sds_secret_configs as ReadonlyArray<Obj>
    expect(secret!.name).toBe("kubernetes://app-cert")
    expect((secret!.sds_config as Obj).ads).toEqual({})
    expect([...gatewayReferencedHosts(push, router())]).toEqual(["reviews.default.svc.cluster.local"])
  })

  it("a provider whose service the registry lacks: a notice, and the credential over ADS", () => {
    const push = withProviders(
      { gateways: [httpsGateway("SIMPLE", "sds://app-cert")], virtualServices: [routeApp], services: [reviews] },
      SDS_PROVIDERS,
    )
    expect((tlsContextOf(push).tls_certificate_sds_secret_configs as ReadonlyArray<Obj>)[0]!.name).toBe(
      "kubernetes://app-cert",
    )
    expect(generateGatewayListeners(push, router()).warnings.map((w) => w.message)).toContain(
      `credential sds://app-cert: SDS provider vault: could not find service ${SDS_HOST} in the service registry; served over ADS instead`,
    )
  })
})

describe("router simulation: orchestrator Ingress (issue 45 point 6)", () => {
  const web = svc("web.default.svc.cluster.local", [[80, "HTTP"]])
  const api = svc("api.default.svc.cluster.local", [[9000, "HTTP"]])
  const shop = ingress(
    "shop",
    {
      tls: [{ hosts: ["shop.example.com"], secretName: "shop-cert" }],
      rules: [
        {
          host: "shop.example.com",
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
              { path: "/api", pathType: "Prefix", backend: { service: { name: "api", port: { number: 9000 } } } },
            ],
          },
        },
      ],
    },
    { annotations: { "kubernetes.io/ingress.class": "mesh" } },
  )
  const converted = convertIngresses({
    ingresses: [shop],
    ingressClasses: [],
    services: [web, api],
    settings: { ingressClass: "mesh", ingressControllerMode: "STRICT", ingressService: "mesh-ingressgateway" },
    systemNamespace: "mesh-system",
    domainSuffix: "cluster.local",
  })
  const push = makePushContext(
    {
      ...input({ services: [web, api], virtualServices: converted.virtualServices }),
      proxyConfig: { ...emptyProxyConfigInput, gateways: converted.gateways },
    },
    defaultPushContextOptions,
  )
  const ingressGateway = proxyView("router~10.0.0.7~mesh-ingressgateway-1.mesh-system~mesh-system.svc.cluster.local", {
    LABELS: { mesh: "ingressgateway", app: "mesh-ingressgateway" },
    NAMESPACE: "mesh-system",
  })!

  it("plain HTTP on 80: paths route by the Ingress rules, longest first", () => {
    expect(send(push, { port: 80, host: "shop.example.com", path: "/api/items" }, ingressGateway)).toMatchObject({
      kind: "cluster",
      cluster: "outbound|9000||api.default.svc.cluster.local",
    })
    expect(send(push, { port: 80, host: "shop.example.com", path: "/" }, ingressGateway)).toMatchObject({
      cluster: "outbound|80||web.default.svc.cluster.local",
    })
    expect(send(push, { port: 80, host: "other.example.com" }, ingressGateway).kind).toMatch(/^no-/)
  })

  it("HTTPS on 443 terminates with the Ingress's secret and routes the same", () => {
    expect(
      send(
        push,
        { port: 443, sni: "shop.example.com", host: "shop.example.com", path: "/api", alpn: ["h2"] },
        ingressGateway,
      ),
    ).toMatchObject({ kind: "cluster", cluster: "outbound|9000||api.default.svc.cluster.local", terminated: true })
  })

  it("a router without the ingress gateway's labels gets none of it", () => {
    expect(generateGatewayListeners(push, router()).resources).toEqual([])
  })
})
