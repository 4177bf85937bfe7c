/**
 * A realistic mesh for the end-to-end proxy generator scenarios (bookinfo-like, as in the
 * reference's task docs), and helpers that run the dispatcher `generateForProxy` for a proxy and
 * collect every resource of every type it would get over ADS:
 *
 * - default: productpage (HTTP 9080 + TCP 9090, the sidecar under test at 10.0.0.5/10.0.0.6),
 *   reviews v1/v2/v3, ratings v1/v2, details, a gRPC, a TCP, a TLS, an auto-protocol and a
 *   headless service, and `api` whose VirtualService delegates;
 * - ServiceEntries: httpbin.org (DNS), static.example.com (STATIC), *.wild.example.com (NONE);
 * - DestinationRules with subsets, LB, outlier detection, pool, ISTIO_MUTUAL / SIMPLE;
 * - VirtualServices: split + header match, fault, retries/timeout, redirect/rewrite/mirror/CORS,
 *   delegate, TCP and TLS routes, gateway-bound bookinfo;
 * - security: PeerAuthentication (mesh PERMISSIVE, namespace STRICT, workload port-level),
 *   AuthorizationPolicy ALLOW/DENY/AUDIT, RequestAuthentication;
 * - namespace `sleep` with a Sidecar limiting egress; a Gateway in mesh-system with HTTP,
 *   HTTPS SIMPLE, PASSTHROUGH and AUTO_PASSTHROUGH servers.
 */

import type { ConfigResource } from "../../../../../src/services/config-model/resource.js"
import type { ServiceEntrySpec } from "../../../../../src/services/config-model/schemas/service-entry.js"
import type { Endpoint, Protocol, Service } from "../../../../../src/services/registry/model.js"
import { convertServiceEntries } from "../../../../../src/services/registry/service-entry.js"
import { asProtoData, type ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultProxyGenOptions,
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type ProxyConfigInput,
  type ProxyGenOptions,
  type PushContext,
  type PushContextInput,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { resource } from "../../../../fixtures/xds/mesh.js"
import { arr, obj, str } from "../../../../support/proxygen/matchers.js"

export const host = (name: string, namespace = "default") => `${name}.${namespace}.svc.cluster.local`

export const PRODUCTPAGE = host("productpage")
export const REVIEWS = host("reviews")
export const RATINGS = host("ratings")
export const DETAILS = host("details")
export const GRPC_ECHO = host("grpc-echo")
export const MYSQL = host("mysql")
export const TLS_SVC = host("tls-svc")
export const AUTO = host("auto")
export const HEADLESS = host("headless")
export const API = host("api")
export const SLEEP = host("sleep", "sleep")
export const HTTPBIN = "httpbin.org"
export const STATIC_EXT = "static.example.com"
export const WILD_EXT = "*.wild.example.com"
export const JWKS_HOST = "raw.githubusercontent.com"

export const VIP = {
  productpage: "10.96.0.10",
  reviews: "10.96.0.11",
  ratings: "10.96.0.12",
  details: "10.96.0.13",
  grpcEcho: "10.96.0.14",
  mysql: "10.96.0.15",
  tlsSvc: "10.96.0.16",
  auto: "10.96.0.17",
  api: "10.96.0.18",
  sleep: "10.96.1.1",
} as const

export const svc = (
  hostname: string,
  ports: ReadonlyArray<readonly [name: string, port: number, protocol: Protocol, targetPort?: number]>,
  options: { addresses?: ReadonlyArray<string>; namespace?: string; resolution?: Service["resolution"] } = {},
): Service => ({
  hostname,
  namespace: options.namespace ?? "default",
  ports: ports.map(([name, port, protocol, targetPort]) => ({
    name,
    port,
    protocol,
    ...(targetPort !== undefined ? { targetPort } : {}),
  })),
  addresses: options.addresses ?? [],
  autoAllocatedAddresses: [],
  resolution: options.resolution ?? "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Orchestrator",
  clusterId: "Orchestrator",
})

export const ep = (
  hostname: string,
  address: string,
  portName: string,
  port: number,
  labels: Record<string, string>,
  options: { namespace?: string; serviceAccount?: string; health?: Endpoint["healthStatus"] } = {},
): Endpoint => ({
  hostname,
  namespace: options.namespace ?? "default",
  servicePortName: portName,
  address,
  port,
  labels,
  serviceAccount: options.serviceAccount ?? `bookinfo-${labels.app ?? "default"}`,
  locality: "us-east1/us-east1-b/",
  network: "",
  weight: 1,
  healthStatus: options.health ?? "HEALTHY",
  clusterId: "Orchestrator",
})

export const security =
  <K extends "PeerAuthentication" | "AuthorizationPolicy" | "RequestAuthentication">(kind: K) =>
  (name: string, spec: unknown, namespace = "default") => ({
    ...resource(kind, name, spec, namespace),
    group: "security.mesh.io",
  })
export const peerAuth = security("PeerAuthentication")
export const authzPolicy = security("AuthorizationPolicy")
export const requestAuth = security("RequestAuthentication")
export const vs = (name: string, spec: unknown, namespace = "default") =>
  resource("VirtualService", name, spec, namespace)
export const dr = (name: string, spec: unknown, namespace = "default") =>
  resource("DestinationRule", name, spec, namespace)

const PRODUCTPAGE_LABELS = { app: "productpage", version: "v1" }
export const PRODUCTPAGE_IPS = ["10.0.0.5", "10.0.0.6"] as const

// ---- services and endpoints ----

const services: ReadonlyArray<Service> = [
  svc(
    PRODUCTPAGE,
    [
      ["http", 9080, "HTTP"],
      ["tcp-stats", 9090, "TCP"],
    ],
    { addresses: [VIP.productpage] },
  ),
  svc(REVIEWS, [["http", 9080, "HTTP"]], { addresses: [VIP.reviews] }),
  svc(RATINGS, [["http", 9080, "HTTP"]], { addresses: [VIP.ratings] }),
  svc(DETAILS, [["http", 9080, "HTTP"]], { addresses: [VIP.details] }),
  svc(GRPC_ECHO, [["grpc", 7070, "GRPC"]], { addresses: [VIP.grpcEcho] }),
  svc(MYSQL, [["tcp", 3306, "TCP"]], { addresses: [VIP.mysql] }),
  svc(TLS_SVC, [["tls", 8443, "TLS"]], { addresses: [VIP.tlsSvc] }),
  svc(AUTO, [["auto", 8000, "UNSUPPORTED"]], { addresses: [VIP.auto] }),
  svc(
    HEADLESS,
    [
      ["http", 8080, "HTTP"],
      ["tcp-pg", 5432, "TCP"],
    ],
    { resolution: "NONE" },
  ),
  svc(API, [["http", 8080, "HTTP"]], { addresses: [VIP.api] }),
  svc(SLEEP, [["http", 80, "HTTP"]], { addresses: [VIP.sleep], namespace: "sleep" }),
  svc(
    host("ingressgateway", "mesh-system"),
    [
      ["http2", 80, "HTTP", 8080],
      ["https", 443, "HTTPS", 8443],
      ["tls", 15443, "TLS"],
    ],
    { addresses: ["10.96.9.1"], namespace: "mesh-system" },
  ),
]

const endpoints: ReadonlyArray<Endpoint> = [
  ...PRODUCTPAGE_IPS.flatMap((ip) => [
    ep(PRODUCTPAGE, ip, "http", 9080, PRODUCTPAGE_LABELS),
    ep(PRODUCTPAGE, ip, "tcp-stats", 9090, PRODUCTPAGE_LABELS),
  ]),
  ep(REVIEWS, "10.0.1.1", "http", 9080, { app: "reviews", version: "v1" }),
  ep(REVIEWS, "10.0.1.2", "http", 9080, { app: "reviews", version: "v2" }),
  ep(REVIEWS, "10.0.1.3", "http", 9080, { app: "reviews", version: "v3" }),
  ep(RATINGS, "10.0.2.1", "http", 9080, { app: "ratings", version: "v1" }),
  ep(RATINGS, "10.0.2.2", "http", 9080, { app: "ratings", version: "v2" }, { health: "UNHEALTHY" }),
  ep(DETAILS, "10.0.3.1", "http", 9080, { app: "details", version: "v1" }),
  ep(GRPC_ECHO, "10.0.4.1", "grpc", 7070, { app: "grpc-echo" }),
  ep(MYSQL, "10.0.4.2", "tcp", 3306, { app: "mysql" }),
  ep(TLS_SVC, "10.0.4.3", "tls", 8443, { app: "tls-svc" }),
  ep(AUTO, "10.0.4.4", "auto", 8000, { app: "auto" }),
  ep(HEADLESS, "10.0.5.1", "http", 8080, { app: "headless" }),
  ep(HEADLESS, "10.0.5.2", "http", 8080, { app: "headless" }),
  ep(HEADLESS, "10.0.5.1", "tcp-pg", 5432, { app: "headless" }),
  ep(HEADLESS, "10.0.5.2", "tcp-pg", 5432, { app: "headless" }),
  ep(API, "10.0.6.1", "http", 8080, { app: "api" }),
  ep(SLEEP, "10.0.9.1", "http", 80, { app: "sleep" }, { namespace: "sleep", serviceAccount: "sleep" }),
  ep(
    host("ingressgateway", "mesh-system"),
    "10.0.10.1",
    "http2",
    8080,
    { app: "ingressgateway" },
    {
      namespace: "mesh-system",
      serviceAccount: "ingressgateway",
    },
  ),
]

const serviceEntries: ReadonlyArray<ConfigResource<ServiceEntrySpec>> = [
  resource("ServiceEntry", "httpbin", {
    hosts: [HTTPBIN],
    ports: [
      { number: 80, name: "http", protocol: "HTTP" },
      { number: 443, name: "tls", protocol: "TLS" },
    ],
    location: "MESH_EXTERNAL",
    resolution: "DNS",
  }),
  resource("ServiceEntry", "static-ext", {
    hosts: [STATIC_EXT],
    addresses: ["240.240.0.10"],
    ports: [{ number: 8080, name: "http", protocol: "HTTP" }],
    location: "MESH_EXTERNAL",
    resolution: "STATIC",
    endpoints: [{ address: "192.168.10.1" }, { address: "192.168.10.2", ports: { http: 8081 } }],
  }),
  resource("ServiceEntry", "wild-ext", {
    hosts: [WILD_EXT],
    ports: [{ number: 443, name: "tls", protocol: "TLS" }],
    location: "MESH_EXTERNAL",
    resolution: "NONE",
  }),
  // The JWKS server of the RequestAuthentication: the proxy fetches the keys through its cluster.
  resource("ServiceEntry", "jwks", {
    hosts: [JWKS_HOST],
    ports: [{ number: 443, name: "https", protocol: "TLS" }],
    location: "MESH_EXTERNAL",
    resolution: "DNS",
  }),
] as ReadonlyArray<ConfigResource<ServiceEntrySpec>>

// ---- traffic config ----

const subsets = (...versions: ReadonlyArray<string>) => versions.map((v) => ({ name: v, labels: { version: v } }))

export const destinationRules = [
  dr("reviews", {
    host: "reviews",
    trafficPolicy: {
      loadBalancer: { simple: "ROUND_ROBIN" },
      connectionPool: {
        tcp: { maxConnections: 100, connectTimeout: "3s" },
        http: { http1MaxPendingRequests: 10, maxRequestsPerConnection: 5, maxRetries: 3 },
      },
      outlierDetection: { consecutive5xxErrors: 5, interval: "10s", baseEjectionTime: "30s", maxEjectionPercent: 50 },
      tls: { mode: "ISTIO_MUTUAL" },
    },
    subsets: [
      ...subsets("v1", "v2"),
      { name: "v3", labels: { version: "v3" }, trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } },
    ],
  }),
  dr("ratings", {
    host: "ratings.default.svc.cluster.local",
    trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
    subsets: subsets("v1", "v2"),
  }),
  dr("productpage", { host: "productpage", subsets: subsets("v1", "v2") }),
  dr("details", {
    host: "details",
    trafficPolicy: { loadBalancer: { simple: "RANDOM" }, outlierDetection: { consecutiveGatewayErrors: 3 } },
  }),
  dr("httpbin", {
    host: HTTPBIN,
    trafficPolicy: {
      portLevelSettings: [{ port: { number: 443 }, tls: { mode: "SIMPLE", sni: HTTPBIN } }],
    },
  }),
  dr("jwks", { host: JWKS_HOST, trafficPolicy: { tls: { mode: "SIMPLE" } } }),
  dr("mysql", {
    host: "mysql",
    trafficPolicy: {
      connectionPool: { tcp: { maxConnections: 10, tcpKeepalive: { time: "7200s", interval: "75s" } } },
    },
  }),
]

export const reviewsRouting = vs("reviews", {
  hosts: ["reviews"],
  http: [
    {
      name: "jason",
      match: [{ headers: { "end-user": { exact: "jason" } } }],
      route: [{ destination: { host: "reviews", subset: "v2" } }],
    },
    {
      name: "split",
      route: [
        { destination: { host: "reviews", subset: "v1" }, weight: 80 },
        { destination: { host: "reviews", subset: "v3" }, weight: 20 },
      ],
    },
  ],
})

export const ratingsFault = vs("ratings", {
  hosts: ["ratings"],
  http: [
    {
      name: "delay-jason",
      match: [{ headers: { "end-user": { exact: "jason" } } }],
      fault: { delay: { percentage: { value: 100 }, fixedDelay: "7s" } },
      route: [{ destination: { host: "ratings", subset: "v1" } }],
    },
    {
      name: "abort-tester",
      match: [{ headers: { "end-user": { exact: "tester" } } }],
      fault: { abort: { percentage: { value: 100 }, httpStatus: 500 } },
      route: [{ destination: { host: "ratings", subset: "v1" } }],
    },
    { name: "default", route: [{ destination: { host: "ratings", subset: "v1" } }] },
  ],
})

export const detailsRetries = vs("details", {
  hosts: ["details"],
  http: [
    {
      timeout: "10s",
      retries: { attempts: 3, perTryTimeout: "2s", retryOn: "5xx,connect-failure" },
      route: [{ destination: { host: "details" } }],
    },
  ],
})

export const productpageRouting = vs("productpage", {
  hosts: ["productpage"],
  http: [
    { name: "legacy", match: [{ uri: { prefix: "/legacy" } }], redirect: { uri: "/productpage", redirectCode: 301 } },
    {
      name: "api-v1",
      match: [{ uri: { prefix: "/api/v1/" } }],
      rewrite: { uri: "/api/", authority: "productpage-internal" },
      route: [{ destination: { host: "productpage", subset: "v1", port: { number: 9080 } } }],
      mirror: { host: "productpage", subset: "v2" },
      mirrorPercentage: { value: 10 },
    },
    {
      name: "default",
      route: [{ destination: { host: "productpage", subset: "v1" } }],
      corsPolicy: {
        allowOrigins: [{ exact: "https://bookinfo.example.com" }],
        allowMethods: ["GET", "POST"],
        allowHeaders: ["authorization"],
        maxAge: "24h",
      },
      headers: { request: { set: { "x-from": "mesh" } }, response: { remove: ["x-internal"] } },
    },
  ],
})

export const apiRoot = vs("api", {
  hosts: ["api"],
  http: [
    {
      name: "ratings-delegate",
      match: [{ uri: { prefix: "/ratings" } }],
      delegate: { name: "api-ratings", namespace: "default" },
    },
    { name: "rest", route: [{ destination: { host: "api" } }] },
  ],
})

export const apiDelegate = vs("api-ratings", {
  http: [
    {
      name: "v2",
      match: [{ uri: { prefix: "/ratings/v2" } }],
      route: [{ destination: { host: "ratings", subset: "v2" } }],
    },
    { name: "v1", route: [{ destination: { host: "ratings", subset: "v1" } }] },
  ],
})

export const mysqlTcp = vs("mysql", {
  hosts: ["mysql"],
  tcp: [{ match: [{ port: 3306 }], route: [{ destination: { host: "mysql", port: { number: 3306 } } }] }],
})

export const tlsRouting = vs("tls-svc", {
  hosts: ["tls-svc.default.svc.cluster.local"],
  tls: [
    {
      match: [{ port: 8443, sniHosts: ["tls-svc.default.svc.cluster.local"] }],
      route: [{ destination: { host: "tls-svc", port: { number: 8443 } } }],
    },
  ],
})

export const bookinfoGatewayRoutes = vs("bookinfo", {
  hosts: ["bookinfo.example.com", "secure.example.com"],
  gateways: ["mesh-system/bookinfo-gateway"],
  http: [
    {
      match: [
        { uri: { exact: "/productpage" } },
        { uri: { prefix: "/static" } },
        { uri: { prefix: "/api/v1/products" } },
      ],
      route: [{ destination: { host: PRODUCTPAGE, port: { number: 9080 } } }],
    },
  ],
})

export const passthroughRoutes = vs("passthrough", {
  hosts: ["passthrough.example.com"],
  gateways: ["mesh-system/bookinfo-gateway"],
  tls: [
    {
      match: [{ port: 9443, sniHosts: ["passthrough.example.com"] }],
      route: [{ destination: { host: TLS_SVC, port: { number: 8443 } } }],
    },
  ],
})

export const virtualServices = [
  reviewsRouting,
  ratingsFault,
  detailsRetries,
  productpageRouting,
  apiRoot,
  apiDelegate,
  mysqlTcp,
  tlsRouting,
  bookinfoGatewayRoutes,
  passthroughRoutes,
]

// ---- security ----

export const PRINCIPAL = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`

export const peerAuthentications = [
  peerAuth("default", { mtls: { mode: "PERMISSIVE" } }, "mesh-system"),
  peerAuth("default", { mtls: { mode: "STRICT" } }, "default"),
  peerAuth("productpage", {
    selector: { matchLabels: { app: "productpage" } },
    mtls: { mode: "STRICT" },
    portLevelMtls: { 9090: { mode: "PERMISSIVE" } },
  }),
]

export const authorizationPolicies = [
  authzPolicy("deny-admin", {
    selector: { matchLabels: { app: "productpage" } },
    action: "DENY",
    rules: [{ to: [{ operation: { paths: ["/admin", "/admin/*"] } }] }],
  }),
  authzPolicy("allow-ingress-and-sleep", {
    selector: { matchLabels: { app: "productpage" } },
    action: "ALLOW",
    rules: [
      {
        from: [
          {
            source: {
              principals: ["cluster.local/ns/mesh-system/sa/ingressgateway", "cluster.local/ns/sleep/sa/sleep"],
            },
          },
        ],
        to: [{ operation: { methods: ["GET", "POST"] } }],
      },
      { from: [{ source: { requestPrincipals: ["testing@secure.mesh.io/*"] } }] },
    ],
  }),
  authzPolicy("audit-reviews", {
    selector: { matchLabels: { app: "productpage" } },
    action: "AUDIT",
    rules: [{ to: [{ operation: { paths: ["/audit/*"] } }] }],
  }),
]

export const requestAuthentications = [
  requestAuth("jwt", {
    selector: { matchLabels: { app: "productpage" } },
    jwtRules: [
      {
        issuer: "testing@secure.mesh.io",
        jwksUri: "https://raw.githubusercontent.com/mesh/mesh/master/security/tools/jwt/samples/jwks.json",
        forwardOriginalToken: true,
      },
      {
        issuer: "inline@example.com",
        jwks: '{"keys":[{"kty":"RSA","e":"AQAB","n":"xAE7eB6qugXyCAG3yhh7pkDkT65pHymX-P7KfIupjf59vsdo91bSP9C8H07pSAGQO1MV_xFj9VswgsCg4R6otmg5PV2He95lZdHtOcU5DXIg_pbhLdKXbi66GlVeK6ABZOUW3WYtnNHD-91gVuoeJT_DwtGGcp4ignkgXfkiEm4sw-4sfb4qdt5oLbyVpmW6x9cfa7vs2WTfURiCrBoUqgBo_-4WTiULmmHSGZHOjzwa8WtrtOQGsAFjIbno85jp6MnGGGZPYZbDAa_b3y5u-YpW7ypZrvD8BgtKVjgtQgZhLAGezMt0ua3DRrWnKqTZ0BJ_EyxOGuHJrLsn00fnMQ"}]}',
        fromHeaders: [{ name: "x-jwt", prefix: "Bearer " }],
      },
    ],
  }),
]

// ---- proxy config ----

export const sleepSidecar = resource(
  "Sidecar",
  "default",
  {
    egress: [{ hosts: ["./*", "default/reviews.default.svc.cluster.local", "mesh-system/*"] }],
    outboundTrafficPolicy: { mode: "REGISTRY_ONLY" },
  },
  "sleep",
)

export const bookinfoGateway = resource(
  "Gateway",
  "bookinfo-gateway",
  {
    selector: { app: "ingressgateway" },
    servers: [
      { port: { number: 8080, name: "http", protocol: "HTTP" }, hosts: ["bookinfo.example.com"] },
      {
        port: { number: 8080, name: "http-redirect", protocol: "HTTP" },
        hosts: ["secure.example.com"],
        tls: { httpsRedirect: true },
      },
      {
        port: { number: 8443, name: "https", protocol: "HTTPS" },
        hosts: ["secure.example.com"],
        tls: { mode: "SIMPLE", credentialName: "secure-credential" },
      },
      {
        port: { number: 9443, name: "tls-passthrough", protocol: "TLS" },
        hosts: ["passthrough.example.com"],
        tls: { mode: "PASSTHROUGH" },
      },
      {
        port: { number: 15443, name: "tls-auto", protocol: "TLS" },
        hosts: ["*.local"],
        tls: { mode: "AUTO_PASSTHROUGH" },
      },
    ],
  },
  "mesh-system",
)

// ---- the push ----

export interface MeshParts extends Partial<Omit<PushContextInput, "proxyConfig">> {
  readonly proxyConfig?: Partial<ProxyConfigInput>
}

/** The reference mesh's input; `parts` replace whole lists. */
export const meshInput = (parts: MeshParts = {}): PushContextInput => {
  const converted = convertServiceEntries(serviceEntries, [])
  return {
    services: parts.services ?? [...services, ...converted.services],
    endpoints: parts.endpoints ?? [...endpoints, ...converted.endpoints],
    virtualServices: parts.virtualServices ?? virtualServices,
    destinationRules: parts.destinationRules ?? destinationRules,
    peerAuthentications: parts.peerAuthentications ?? peerAuthentications,
    authorizationPolicies: parts.authorizationPolicies ?? authorizationPolicies,
    proxyConfig: {
      ...emptyProxyConfigInput,
      gateways: [bookinfoGateway],
      sidecars: [sleepSidecar],
      requestAuthentications,
      ...parts.proxyConfig,
    },
  }
}

export const meshPush = (parts: MeshParts = {}, options: Partial<ProxyGenOptions> = {}): PushContext =>
  makePushContext(meshInput(parts), {
    ...defaultPushContextOptions,
    proxy: { ...defaultProxyGenOptions, ...options },
  })

// ---- proxies ----

/** The productpage sidecar (replica `n`: 0 → 10.0.0.5, 1 → 10.0.0.6). */
export const productpageSidecar = (n = 0): ProxyView => {
  const ip = PRODUCTPAGE_IPS[n]!
  return proxyView(`sidecar~${ip}~productpage-v1-${n === 0 ? "abc12" : "def34"}.default~default.svc.cluster.local`, {
    NAMESPACE: "default",
    LABELS: PRODUCTPAGE_LABELS,
    INSTANCE_IPS: ip,
    SERVICE_ACCOUNT: "bookinfo-productpage",
  })!
}

/** The sleep sidecar, scoped by the `sleep` namespace's Sidecar resource. */
export const sleepProxy = (): ProxyView =>
  proxyView("sidecar~10.0.9.1~sleep-7d9f.sleep~sleep.svc.cluster.local", {
    NAMESPACE: "sleep",
    LABELS: { app: "sleep" },
    INSTANCE_IPS: "10.0.9.1",
    SERVICE_ACCOUNT: "sleep",
  })!

export const ingressRouter = (ip = "10.0.10.1"): ProxyView =>
  proxyView(`router~${ip}~ingressgateway-${ip.slice(-1)}.mesh-system~mesh-system.svc.cluster.local`, {
    NAMESPACE: "mesh-system",
    LABELS: { app: "ingressgateway" },
    INSTANCE_IPS: ip,
    SERVICE_ACCOUNT: "ingressgateway",
  })!

// ---- what a proxy gets over ADS ----

export interface Specs {
  readonly names: ReadonlyArray<string>
  readonly keys: ReadonlyArray<string>
  readonly resources: ReadonlyArray<ProtoObject>
}

export const generate = (
  push: PushContext,
  proxy: ProxyView,
  typeUrl: string,
  names?: ReadonlyArray<string>,
): Specs => {
  const generated = generateForProxy(push, typeUrl, {
    wildcard: names === undefined,
    names: names ?? [],
    proxy,
  })
  return {
    names: generated.resources.map((r) => r.name),
    keys: generated.resources.map((r) => `${r.name}=${r.key}`),
    resources: generated.resources.map((r) => asProtoData(r.build())),
  }
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"

const hcmsOf = (listener: ProtoObject): ReadonlyArray<ProtoObject> =>
  [...arr(listener.filter_chains), ...(obj(listener.default_filter_chain) ? [obj(listener.default_filter_chain)!] : [])]
    .flatMap((c) => arr(c.filters))
    .map((f) => obj(f.typed_config))
    .filter((t): t is ProtoObject => t !== undefined && (str(t["@type"]) ?? "").endsWith(HCM))

/** The RDS names the listeners ask for, in order, without duplicates. */
export const routeNamesOf = (listeners: ReadonlyArray<ProtoObject>): ReadonlyArray<string> => [
  ...new Set(
    listeners
      .flatMap(hcmsOf)
      .map((h) => str(obj(h.rds)?.route_config_name))
      .filter((n): n is string => n !== undefined),
  ),
]

/** The EDS cluster names (`service_name`, else the cluster name) of CDS resources. */
export const edsNamesOf = (clusters: ReadonlyArray<ProtoObject>): ReadonlyArray<string> => [
  ...new Set(
    clusters.filter((c) => c.type === "EDS").map((c) => str(obj(c.eds_cluster_config)?.service_name) ?? String(c.name)),
  ),
]

/** CDS, EDS (every EDS cluster), LDS and RDS (every route name the listeners name) of a proxy. */
export interface ProxyConfig {
  readonly clusters: Specs
  readonly endpoints: Specs
  readonly listeners: Specs
  readonly routes: Specs
}

export const proxyConfig = (push: PushContext, proxy: ProxyView): ProxyConfig => {
  const clusters = generate(push, proxy, TypeUrl.Cluster)
  const listeners = generate(push, proxy, TypeUrl.Listener)
  return {
    clusters,
    endpoints: generate(push, proxy, TypeUrl.Endpoint, edsNamesOf(clusters.resources)),
    listeners,
    routes: generate(push, proxy, TypeUrl.Route, routeNamesOf(listeners.resources)),
  }
}
