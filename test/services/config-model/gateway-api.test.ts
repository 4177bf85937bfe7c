/**
 * The Gateway-API kinds (gateway.networking.k8s.io) read as `--configDir` documents: realistic
 * upstream manifests load (unknown fields and status ignored), versions are normalised, the
 * Gateway-API `Gateway` is the mesh's `KubernetesGateway` beside the mesh's own `Gateway`, and
 * each validation rule refuses with its field path and message.
 */
import { Either, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { fastDecode } from "../../../src/services/config-model/fast-decode.js"
import { decodeAll } from "../../../src/services/config-model/issues.js"
import { apiKindOf, kindInfoOf, kindsNamed, lookupKind } from "../../../src/services/config-model/kinds.js"
import { ofKind } from "../../../src/services/config-model/specs.js"
import { doc, parse, problems } from "./helpers.js"

const GROUP = "gateway.networking.k8s.io"

/** A Gateway-API document of `kind` (as written) at `version`. */
const gw = (kind: string, spec: unknown, version = "v1", name = "example") =>
  doc(kind, spec, { apiVersion: `${GROUP}/${version}`, name })

const MANIFESTS = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: mesh
spec:
  controllerName: mesh.io/gateway-controller
  description: The mesh's gateways
status:
  conditions: [{type: Accepted, status: "True"}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: infra
  annotations: {team: edge}
spec:
  gatewayClassName: mesh
  infrastructure:
    labels: {tier: edge}
    parametersRef: {group: "", kind: ConfigMap, name: edge-options}
  listeners:
  - name: http
    port: 80
    protocol: HTTP
    allowedRoutes:
      namespaces:
        from: Selector
        selector:
          matchLabels: {shared-gateway-access: "true"}
          matchExpressions: [{key: env, operator: In, values: [prod, staging]}]
  - name: https
    hostname: "*.example.com"
    port: 443
    protocol: HTTPS
    tls:
      mode: Terminate
      certificateRefs:
      - kind: Secret
        group: ""
        name: example-com-cert
      - name: example-com-ecdsa
        namespace: certs
    allowedRoutes:
      namespaces: {from: All}
      kinds: [{kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: GRPCRoute}]
  - name: tls-passthrough
    hostname: db.example.com
    port: 8443
    protocol: TLS
    tls: {mode: Passthrough}
  addresses:
  - value: 10.0.0.10
  - type: Hostname
    value: edge.example.com
status:
  addresses: [{type: IPAddress, value: 10.0.0.10}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: store
  namespace: shop
spec:
  parentRefs:
  - name: edge
    namespace: infra
    sectionName: https
  - name: edge
    namespace: infra
    sectionName: http
  hostnames: [store.example.com, "*.store.example.com"]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /login}
      headers: [{name: x-canary, value: "true"}]
      queryParams: [{type: RegularExpression, name: user, value: "^[a-z]+$"}]
      method: POST
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier:
        set: [{name: x-route, value: login}]
        add: [{name: x-trace, value: "1"}]
        remove: [x-debug]
    - type: RequestMirror
      requestMirror:
        backendRef: {name: audit, port: 8080}
        percent: 10
    backendRefs:
    - name: login-v1
      port: 8080
      weight: 90
    - name: login-v2
      port: 8080
      weight: 10
      filters:
      - type: ResponseHeaderModifier
        responseHeaderModifier: {set: [{name: x-version, value: v2}]}
    timeouts: {request: 10s, backendRequest: 2s}
  - name: old-api
    matches: [{path: {type: PathPrefix, value: /api/v1}}]
    filters:
    - type: URLRewrite
      urlRewrite:
        hostname: api.internal
        path: {type: ReplacePrefixMatch, replacePrefixMatch: /v1}
    backendRefs: [{name: api, port: 80}]
  - matches: [{path: {type: Exact, value: /old}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, statusCode: 301, path: {type: ReplaceFullPath, replaceFullPath: /new}}
  - backendRefs: [{group: networking.mesh.io, kind: ServiceEntry, name: legacy.example.com}]
status:
  parents: []
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata:
  name: greeter
  namespace: shop
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: https}]
  hostnames: [grpc.example.com]
  rules:
  - matches:
    - method: {service: helloworld.Greeter, method: SayHello}
      headers: [{name: x-tenant, value: blue}]
    - method: {type: RegularExpression, service: "helloworld\\\\..*"}
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {add: [{name: x-grpc, value: "1"}]}
    backendRefs: [{name: greeter, port: 50051}]
---
apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata:
  name: postgres
  namespace: data
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: tcp, port: 5432}]
  rules:
  - backendRefs: [{name: postgres, port: 5432}]
---
apiVersion: gateway.networking.k8s.io/v1alpha3
kind: TLSRoute
metadata:
  name: db
  namespace: data
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: tls-passthrough}]
  hostnames: [db.example.com]
  rules:
  - backendRefs: [{name: db-primary, port: 443, weight: 3}, {name: db-replica, port: 443, weight: 1}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: allow-shop-routes
  namespace: certs
spec:
  from:
  - group: gateway.networking.k8s.io
    kind: Gateway
    namespace: infra
  to:
  - group: ""
    kind: Secret
    name: example-com-ecdsa
`

describe("Gateway-API manifests as --configDir documents", () => {
  const parsed = parse(MANIFESTS)

  it("load without issues, each under the mesh's kind name, at the normalised version", () => {
    expect(parsed.issues).toEqual([])
    expect(parsed.resources.map((r) => `${r.group}/${r.version} ${r.kind} ${r.meta.namespace}/${r.meta.name}`)).toEqual(
      [
        `${GROUP}/v1 GatewayClass /mesh`,
        `${GROUP}/v1 KubernetesGateway infra/edge`,
        `${GROUP}/v1 HTTPRoute shop/store`,
        `${GROUP}/v1 GRPCRoute shop/greeter`,
        `${GROUP}/v1 TCPRoute data/postgres`,
        `${GROUP}/v1 TLSRoute data/db`,
        `${GROUP}/v1beta1 ReferenceGrant certs/allow-shop-routes`,
      ],
    )
  })

  it("keep the typed fields and drop status and untyped fields", () => {
    const [gateway] = ofKind(parsed.resources, "KubernetesGateway")
    expect(gateway?.spec.listeners.map((l) => `${l.name} ${l.port} ${l.protocol} ${l.hostname ?? "-"}`)).toEqual([
      "http 80 HTTP -",
      "https 443 HTTPS *.example.com",
      "tls-passthrough 8443 TLS db.example.com",
    ])
    expect(gateway?.spec.listeners[1]?.tls?.certificateRefs?.map((c) => c.name)).toEqual([
      "example-com-cert",
      "example-com-ecdsa",
    ])
    // parametersRef is typed (issue 36: checked by the conversion, InvalidParameters).
    expect(gateway?.spec.infrastructure).toEqual({
      labels: { tier: "edge" },
      parametersRef: { group: "", kind: "ConfigMap", name: "edge-options" },
    })
    expect(gateway?.spec).not.toHaveProperty("status")
    const [route] = ofKind(parsed.resources, "HTTPRoute")
    const [first] = route?.spec.rules ?? []
    expect(first?.backendRefs?.map((b) => `${b.name}:${b.port} ${b.weight}`)).toEqual([
      "login-v1:8080 90",
      "login-v2:8080 10",
    ])
    expect(first?.filters?.map((f) => f.type)).toEqual(["RequestHeaderModifier", "RequestMirror"])
    expect(first?.matches?.[0]?.queryParams?.[0]?.value).toBe("^[a-z]+$")
    // No upstream defaults filled in: the conversion applies them.
    expect(route?.spec.rules?.[3]?.matches).toBeUndefined()
  })
})

describe("kind registry", () => {
  it("the Gateway-API Gateway is the mesh's KubernetesGateway; the mesh's Gateway keeps its name", () => {
    const k8s = lookupKind(GROUP, "Gateway")
    expect(k8s?.kind).toBe("KubernetesGateway")
    expect(k8s !== undefined && apiKindOf(k8s)).toBe("Gateway")
    expect(lookupKind("networking.mesh.io", "Gateway")?.kind).toBe("Gateway")
    expect(lookupKind("networking.istio.io", "Gateway")?.kind).toBe("Gateway")
    expect(lookupKind(GROUP, "KubernetesGateway")).toBeUndefined()
    expect(kindInfoOf("KubernetesGateway")?.group).toBe(GROUP)
    expect(kindsNamed("Gateway").map((k) => `${k.group} ${k.kind}`)).toEqual([
      "networking.mesh.io Gateway",
      `${GROUP} KubernetesGateway`,
    ])
  })

  it("registers each kind with its plural, scope and versions", () => {
    const table = ["GatewayClass", "Gateway", "HTTPRoute", "GRPCRoute", "TCPRoute", "TLSRoute", "ReferenceGrant"].map(
      (kind) => {
        const info = lookupKind(GROUP, kind)
        return `${kind} ${info?.plural} ${info?.namespaced} ${info?.versions.join(",")} ${info?.strict}`
      },
    )
    expect(table).toEqual([
      "GatewayClass gatewayclasses false v1,v1beta1 false",
      "Gateway gateways true v1,v1beta1 false",
      "HTTPRoute httproutes true v1,v1beta1 false",
      "GRPCRoute grpcroutes true v1,v1beta1,v1alpha2 false",
      "TCPRoute tcproutes true v1,v1alpha2 false",
      "TLSRoute tlsroutes true v1,v1alpha3,v1alpha2 false",
      "ReferenceGrant referencegrants true v1beta1,v1,v1alpha2 false",
    ])
  })

  it("a mesh Gateway and a Gateway-API Gateway of the same name are two resources", () => {
    const meshGateway = doc(
      "Gateway",
      { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
      { name: "edge" },
    )
    const k8sGateway = gw(
      "Gateway",
      { gatewayClassName: "mesh", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
      "v1",
      "edge",
    )
    const result = parse(`${meshGateway}---\n${k8sGateway}`)
    expect(result.issues).toEqual([])
    expect(result.resources.map((r) => `${r.group} ${r.kind} ${r.meta.namespace}/${r.meta.name}`)).toEqual([
      "networking.mesh.io Gateway ns/edge",
      `${GROUP} KubernetesGateway ns/edge`,
    ])
  })

  it("older versions are read and normalised to the first accepted one", () => {
    const route = { rules: [{ backendRefs: [{ name: "a", port: 80 }] }] }
    const grant = { from: [{ group: GROUP, kind: "HTTPRoute", namespace: "a" }], to: [{ group: "", kind: "Service" }] }
    const versions = [
      gw("HTTPRoute", route, "v1beta1"),
      gw("GRPCRoute", route, "v1alpha2"),
      gw("ReferenceGrant", grant, "v1alpha2"),
      gw("TLSRoute", route, "v1alpha3"),
    ]
    const result = parse(versions.join("---\n"))
    expect(result.issues).toEqual([])
    expect(result.resources.map((r) => `${r.kind}@${r.version}`)).toEqual([
      "HTTPRoute@v1",
      "GRPCRoute@v1",
      "ReferenceGrant@v1beta1",
      "TLSRoute@v1",
    ])
  })

  it("reports versions it does not accept, and kinds under the wrong group with both apiVersions", () => {
    expect(problems(gw("HTTPRoute", {}, "v2"))).toEqual([
      'apiVersion: unsupported version "v2" for HTTPRoute; accepted: v1, v1beta1',
    ])
    expect(problems(gw("TCPRoute", { rules: [{}] }, "v2"))).toEqual([
      'apiVersion: unsupported version "v2" for TCPRoute; accepted: v1, v1alpha2',
    ])
    expect(problems(doc("Gateway", {}, { apiVersion: "example.io/v1" }))).toEqual([
      `kind: unknown kind "Gateway" in group "example.io"; expected apiVersion "networking.mesh.io/v1" or "${GROUP}/v1"`,
    ])
    expect(problems(gw("KubernetesGateway", {}))).toEqual([
      `kind: unknown kind "KubernetesGateway" (apiVersion "${GROUP}/v1")`,
    ])
  })
})

const listener = (name: string, port: number, protocol: string, extra: Record<string, unknown> = {}) => ({
  name,
  port,
  protocol,
  ...extra,
})
const gateway = (listeners: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  gatewayClassName: "mesh",
  listeners,
  ...extra,
})
const httpRoute = (rule: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ rules: [rule], ...extra })
const svc = { name: "svc", port: 80 }

type Case = readonly [title: string, kind: string, spec: unknown, expected: ReadonlyArray<string>]

const INVALID: ReadonlyArray<Case> = [
  // GatewayClass
  ["GatewayClass without controllerName", "GatewayClass", {}, ["spec.controllerName: is required"]],
  [
    "GatewayClass controllerName not domain-prefixed",
    "GatewayClass",
    { controllerName: "mesh" },
    [
      'spec.controllerName: invalid controller name "mesh": must be a domain-prefixed path such as "example.com/gateway-controller"',
    ],
  ],
  [
    "GatewayClass description too long",
    "GatewayClass",
    { controllerName: "mesh.io/c", description: "x".repeat(65) },
    ["spec.description: must be at most 64 characters"],
  ],
  // Gateway
  [
    "Gateway without class and listeners",
    "Gateway",
    {},
    ["spec.gatewayClassName: is required", "spec.listeners: is required"],
  ],
  [
    "Gateway with 65 listeners",
    "Gateway",
    gateway(Array.from({ length: 65 }, (_, i) => listener(`l${i}`, 1000 + i, "HTTP"))),
    ["spec.listeners: must have at most 64 items, got 65"],
  ],
  [
    "listener port out of range",
    "Gateway",
    gateway([listener("http", 0, "HTTP"), listener("big", 65536, "HTTP")]),
    [
      "spec.listeners[0].port: port number 0 must be in the range 1..65535",
      "spec.listeners[1].port: port number 65536 must be in the range 1..65535",
    ],
  ],
  [
    "listener name not a section name",
    "Gateway",
    gateway([listener("HTTP_1", 80, "HTTP")]),
    [
      `spec.listeners[0].name: invalid name "HTTP_1": must be lowercase alphanumeric, '-' or '.', starting and ending with an alphanumeric character`,
    ],
  ],
  [
    "duplicate listener names and bindings",
    "Gateway",
    gateway([listener("web", 80, "HTTP"), listener("web", 80, "HTTP")]),
    [
      'spec.listeners[1].name: duplicate listener name "web"',
      "spec.listeners[1]: another listener has the same port 80, protocol HTTP and hostname (none)",
    ],
  ],
  [
    "listener hostname: uppercase, bare wildcard, IP",
    "Gateway",
    gateway([
      listener("a", 80, "HTTP", { hostname: "Example.com" }),
      listener("b", 81, "HTTP", { hostname: "*" }),
      listener("c", 82, "HTTP", { hostname: "10.0.0.1" }),
    ]),
    [
      'spec.listeners[0].hostname: invalid hostname "Example.com": must be a lowercase DNS name, optionally prefixed by "*."',
      'spec.listeners[1].hostname: invalid hostname "*": must be a lowercase DNS name, optionally prefixed by "*."',
      'spec.listeners[2].hostname: invalid hostname "10.0.0.1": IP addresses are not allowed',
    ],
  ],
  [
    "tls on HTTP, hostname on TCP, Passthrough on HTTPS",
    "Gateway",
    gateway([
      listener("a", 80, "HTTP", { tls: { certificateRefs: [{ name: "c" }] } }),
      listener("b", 9000, "TCP", { hostname: "a.com" }),
      listener("c", 443, "HTTPS", { tls: { mode: "Passthrough" } }),
    ]),
    [
      "spec.listeners[0].tls: tls must not be set for protocol HTTP",
      "spec.listeners[1].hostname: hostname must not be set for protocol TCP",
      "spec.listeners[2].tls.mode: tls mode must be Terminate for protocol HTTPS",
    ],
  ],
  [
    "terminating TLS without a certificate",
    "Gateway",
    gateway([listener("https", 443, "HTTPS", { tls: {} })]),
    ["spec.listeners[0].tls.certificateRefs: certificateRefs or options must be set when mode is Terminate"],
  ],
  [
    "unknown TLS mode and bad protocol",
    "Gateway",
    gateway([listener("a", 443, "HTTP S", { tls: { mode: "Mutual", certificateRefs: [{ name: "c" }] } })]),
    [
      'spec.listeners[0].protocol: invalid protocol "HTTP S": must be a name such as HTTP, HTTPS, TLS, TCP, UDP or a domain-prefixed name',
      'spec.listeners[0].tls.mode: unknown value "Mutual"; expected one of Terminate, Passthrough',
    ],
  ],
  [
    "allowedRoutes: unknown from, selector expression without values",
    "Gateway",
    gateway([
      listener("a", 80, "HTTP", {
        allowedRoutes: {
          namespaces: { from: "Some", selector: { matchExpressions: [{ key: "env", operator: "In" }] } },
        },
      }),
    ]),
    [
      'spec.listeners[0].allowedRoutes.namespaces.from: unknown value "Some"; expected one of All, Same, Selector',
      "spec.listeners[0].allowedRoutes.namespaces.selector.matchExpressions[0].values: must be set when operator is In",
    ],
  ],
  [
    "addresses: not an IP, duplicate hostname",
    "Gateway",
    gateway([listener("a", 80, "HTTP")], {
      addresses: [
        { value: "edge" },
        { type: "Hostname", value: "a.example.com" },
        { type: "Hostname", value: "a.example.com" },
      ],
    }),
    [
      'spec.addresses[0].value: "edge" is not an IP address',
      'spec.addresses[2].value: duplicate Hostname address "a.example.com"',
    ],
  ],
  // HTTPRoute
  [
    "too many hostnames, bad hostname",
    "HTTPRoute",
    { hostnames: Array.from({ length: 17 }, (_, i) => `h${i}.example.com`) },
    ["spec.hostnames: must have at most 16 items, got 17"],
  ],
  [
    "hostname with a wildcard not in front",
    "HTTPRoute",
    { hostnames: ["foo.*.example.com"] },
    [
      'spec.hostnames[0]: invalid hostname "foo.*.example.com": must be a lowercase DNS name, optionally prefixed by "*."',
    ],
  ],
  [
    "17 rules",
    "HTTPRoute",
    { rules: Array.from({ length: 17 }, () => ({ backendRefs: [svc] })) },
    ["spec.rules: must have at most 16 items, got 17"],
  ],
  [
    "weight out of range",
    "HTTPRoute",
    httpRoute({ backendRefs: [svc, { ...svc, weight: 1000001 }, { ...svc, weight: 0.5 }] }),
    [
      "spec.rules[0].backendRefs[1].weight: weight 1000001 must be an integer in 0..1000000",
      "spec.rules[0].backendRefs[2].weight: weight 0.5 must be an integer in 0..1000000",
    ],
  ],
  [
    "17 backendRefs",
    "HTTPRoute",
    httpRoute({ backendRefs: Array.from({ length: 17 }, () => svc) }),
    ["spec.rules[0].backendRefs: must have at most 16 items, got 17"],
  ],
  [
    "Service backend without port",
    "HTTPRoute",
    httpRoute({ backendRefs: [{ name: "svc" }] }),
    ["spec.rules[0].backendRefs[0].port: port is required for a Service backend"],
  ],
  [
    "path values that are not absolute or not normalised",
    "HTTPRoute",
    httpRoute({
      matches: [
        { path: { type: "PathPrefix", value: "api" } },
        { path: { type: "Exact", value: "/a//b" } },
        { path: { value: "/a/.." } },
        { path: { type: "RegularExpression", value: "/(a" } },
        { path: { type: "Glob", value: "/a" } },
      ],
      backendRefs: [svc],
    }),
    [
      'spec.rules[0].matches[0].path.value: path "api" must start with "/"',
      'spec.rules[0].matches[1].path.value: path "/a//b" must not contain "//"',
      'spec.rules[0].matches[2].path.value: path "/a/.." must not end with "/.."',
      'spec.rules[0].matches[3].path.value: invalid regex "/(a": Unterminated group',
      'spec.rules[0].matches[4].path.type: unknown value "Glob"; expected one of Exact, PathPrefix, RegularExpression',
    ],
  ],
  [
    "header match name and method",
    "HTTPRoute",
    httpRoute({
      matches: [{ headers: [{ name: "bad header", value: "x" }], method: "FETCH" }],
      backendRefs: [svc],
    }),
    [
      'spec.rules[0].matches[0].headers[0].name: invalid header name "bad header": must be an HTTP token',
      'spec.rules[0].matches[0].method: unknown value "FETCH"; expected one of GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH',
    ],
  ],
  [
    "filter type without its field, and a field of another type",
    "HTTPRoute",
    httpRoute({
      filters: [{ type: "RequestHeaderModifier", responseHeaderModifier: { remove: ["x"] } }],
      backendRefs: [svc],
    }),
    [
      "spec.rules[0].filters[0].requestHeaderModifier: is required when type is RequestHeaderModifier",
      "spec.rules[0].filters[0].responseHeaderModifier: must not be set when type is RequestHeaderModifier (it configures a ResponseHeaderModifier filter)",
    ],
  ],
  [
    "unknown filter type",
    "HTTPRoute",
    httpRoute({ filters: [{ type: "Rewrite" }], backendRefs: [svc] }),
    [
      'spec.rules[0].filters[0].type: unknown value "Rewrite"; expected one of RequestHeaderModifier, ResponseHeaderModifier, RequestMirror, RequestRedirect, URLRewrite, ExtensionRef, CORS',
    ],
  ],
  [
    "redirect status code; a bad field does not hide the rules of the filter list",
    "HTTPRoute",
    httpRoute({
      filters: [
        { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "a", value: "1" }] } },
        { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "b", value: "1" }] } },
        { type: "RequestRedirect", requestRedirect: { statusCode: 304 } },
        { type: "URLRewrite", urlRewrite: { hostname: "a.com" } },
      ],
    }),
    [
      "spec.rules[0].filters[2].requestRedirect.statusCode: unsupported redirect status code 304; expected one of 301, 302, 303, 307, 308",
      "spec.rules[0].filters[1].type: a RequestHeaderModifier filter may appear only once",
      "spec.rules[0].filters[3].type: RequestRedirect and URLRewrite filters cannot be used together",
    ],
  ],
  [
    "repeated modifier, redirect with rewrite",
    "HTTPRoute",
    httpRoute({
      filters: [
        { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "a", value: "1" }] } },
        { type: "RequestHeaderModifier", requestHeaderModifier: { set: [{ name: "b", value: "1" }] } },
        { type: "RequestRedirect", requestRedirect: { statusCode: 302 } },
        { type: "URLRewrite", urlRewrite: { hostname: "a.com" } },
      ],
    }),
    [
      "spec.rules[0].filters[1].type: a RequestHeaderModifier filter may appear only once",
      "spec.rules[0].filters[3].type: RequestRedirect and URLRewrite filters cannot be used together",
    ],
  ],
  [
    "redirect with backendRefs",
    "HTTPRoute",
    httpRoute({ filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https" } }], backendRefs: [svc] }),
    ["spec.rules[0].filters[0]: a RequestRedirect filter cannot be used together with backendRefs"],
  ],
  [
    "path modifier without its value; prefix replacement with two matches",
    "HTTPRoute",
    httpRoute({
      matches: [{ path: { value: "/a" } }, { path: { value: "/b" } }],
      filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch" } } }],
      backendRefs: [svc],
    }),
    [
      "spec.rules[0].filters[0].urlRewrite.path.replacePrefixMatch: is required when type is ReplacePrefixMatch",
      "spec.rules[0].matches: a ReplacePrefixMatch path modifier needs exactly one match, of type PathPrefix",
    ],
  ],
  [
    "prefix replacement on an Exact match",
    "HTTPRoute",
    httpRoute({
      matches: [{ path: { type: "Exact", value: "/a" } }],
      filters: [{ type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } }],
      backendRefs: [svc],
    }),
    ["spec.rules[0].matches: a ReplacePrefixMatch path modifier needs exactly one match, of type PathPrefix"],
  ],
  [
    "mirror with percent and fraction; duplicate set header",
    "HTTPRoute",
    httpRoute({
      filters: [
        {
          type: "RequestMirror",
          requestMirror: { backendRef: svc, percent: 10, fraction: { numerator: 1, denominator: 10 } },
        },
        {
          type: "ResponseHeaderModifier",
          responseHeaderModifier: {
            set: [
              { name: "X-A", value: "1" },
              { name: "x-a", value: "2" },
            ],
          },
        },
      ],
      backendRefs: [svc],
    }),
    [
      "spec.rules[0].filters[0].requestMirror: only one of percent or fraction may be set",
      'spec.rules[0].filters[1].responseHeaderModifier.set[1].name: duplicate header name "x-a"',
    ],
  ],
  [
    "timeouts: bad duration, backend longer than request",
    "HTTPRoute",
    { rules: [{ timeouts: { request: "1 s" } }, { timeouts: { request: "1s", backendRequest: "2s" } }] },
    [
      'spec.rules[0].timeouts.request: invalid duration "1 s": expected up to 4 groups of digits and h, m, s or ms',
      "spec.rules[1].timeouts.backendRequest: backendRequest timeout must not be longer than the request timeout",
    ],
  ],
  [
    "duplicate rule names",
    "HTTPRoute",
    {
      rules: [
        { name: "a", backendRefs: [svc] },
        { name: "a", backendRefs: [svc] },
      ],
    },
    ['spec.rules[1].name: duplicate rule name "a"'],
  ],
  [
    "parentRefs: same parent twice without sectionName, bad port",
    "HTTPRoute",
    { parentRefs: [{ name: "edge" }, { name: "edge" }, { name: "other", port: 0 }] },
    [
      "spec.parentRefs[2].port: port number 0 must be in the range 1..65535",
      "spec.parentRefs[0]: parent edge is referenced more than once: each reference must set sectionName or port",
      "spec.parentRefs[1]: parent edge is referenced more than once: each reference must set sectionName or port",
    ],
  ],
  [
    "parentRef without name",
    "HTTPRoute",
    { parentRefs: [{ kind: "Gateway" }] },
    ["spec.parentRefs[0].name: is required"],
  ],
  // GRPCRoute
  [
    "GRPCRoute method match without service or method, bad names",
    "GRPCRoute",
    {
      rules: [
        {
          matches: [{ method: { type: "Exact" } }, { method: { service: "hello world", method: "say.hello" } }],
          backendRefs: [svc],
        },
      ],
    },
    [
      "spec.rules[0].matches[0].method: one or both of service and method must be set",
      'spec.rules[0].matches[1].method.service: invalid service name "hello world"',
      'spec.rules[0].matches[1].method.method: invalid method name "say.hello"',
    ],
  ],
  [
    "GRPCRoute filters are the gRPC ones",
    "GRPCRoute",
    { rules: [{ filters: [{ type: "URLRewrite", urlRewrite: {} }], backendRefs: [svc] }] },
    [
      'spec.rules[0].filters[0].type: unknown value "URLRewrite"; expected one of RequestHeaderModifier, ResponseHeaderModifier, RequestMirror, ExtensionRef',
    ],
  ],
  [
    "GRPCRoute with 9 matches in a rule",
    "GRPCRoute",
    { rules: [{ matches: Array.from({ length: 9 }, () => ({ method: { service: "a.B" } })) }] },
    ["spec.rules[0].matches: must have at most 8 items, got 9"],
  ],
  // TCPRoute, TLSRoute
  ["TCPRoute without rules", "TCPRoute", {}, ["spec.rules: is required"]],
  ["TCPRoute with no rule", "TCPRoute", { rules: [] }, ["spec.rules: must have at least 1 item"]],
  [
    "TCPRoute rule with no backend, weight negative",
    "TCPRoute",
    { rules: [{ backendRefs: [] }, { backendRefs: [{ ...svc, weight: -1 }] }] },
    [
      "spec.rules[0].backendRefs: must have at least 1 item",
      "spec.rules[1].backendRefs[0].weight: weight -1 must be an integer in 0..1000000",
    ],
  ],
  [
    "TLSRoute bad hostname and 17 rules",
    "TLSRoute",
    { hostnames: ["db_1.example.com"], rules: Array.from({ length: 17 }, () => ({ backendRefs: [svc] })) },
    [
      'spec.hostnames[0]: invalid hostname "db_1.example.com": must be a lowercase DNS name, optionally prefixed by "*."',
      "spec.rules: must have at most 16 items, got 17",
    ],
  ],
  // ReferenceGrant
  [
    "ReferenceGrant empty lists and missing fields",
    "ReferenceGrant",
    { from: [], to: [{ kind: "Secret" }] },
    ["spec.from: must have at least 1 item", "spec.to[0].group: is required"],
  ],
  [
    "ReferenceGrant bad namespace and kind",
    "ReferenceGrant",
    { from: [{ group: GROUP, kind: "HTTP Route", namespace: "Shop" }], to: [{ group: "", kind: "Service" }] },
    [
      "spec.from[0].kind: invalid kind \"HTTP Route\": must start with a letter and hold only letters, digits and '-'",
      'spec.from[0].namespace: invalid namespace "Shop": must be a lowercase RFC 1123 label',
    ],
  ],
]

const VERSION: Record<string, string> = { TCPRoute: "v1alpha2", TLSRoute: "v1alpha2", ReferenceGrant: "v1beta1" }

describe("validation", () => {
  it.each(INVALID)("rejects: %s", (_, kind, spec, expected) => {
    expect(problems(gw(kind, spec, VERSION[kind] ?? "v1"))).toEqual(expected)
  })

  it("ignores fields it does not type, at the top and inside the spec", () => {
    const text = gw("HTTPRoute", {
      futureField: { a: 1 },
      rules: [{ sessionPersistence: { sessionName: "s" }, backendRefs: [{ ...svc, appProtocol: "http" }] }],
    })
    expect(problems(`${text}extra: 1\n`)).toEqual([])
  })

  it("accepts a Gateway with no listener (issue 36: the reference serves it, listeners may come from ListenerSets)", () => {
    expect(problems(gw("Gateway", gateway([])))).toEqual([])
  })

  it("reports the document kind as written, with the resource's name", () => {
    const tooMany = gateway(Array.from({ length: 65 }, (_, i) => listener(`l${i}`, 1000 + i, "HTTP")))
    const [issue] = parse(gw("Gateway", tooMany, "v1", "edge")).issues
    expect(issue).toMatchObject({ kind: "Gateway", name: "edge", namespace: "ns", path: "spec.listeners" })
  })
})

describe("fast decoder on the Gateway-API kinds", () => {
  it("decodes every manifest as Effect's decoder does", () => {
    const documents = MANIFESTS.split("\n---\n").map((text) => parse(text))
    expect(documents.every((d) => d.issues.length === 0)).toBe(true)
    for (const resource of documents.flatMap((d) => d.resources)) {
      const info = kindInfoOf(resource.kind)
      if (info === undefined) throw new Error(`no kind ${resource.kind}`)
      const schema = info.schema as Schema.Schema<unknown, unknown>
      const options = { errors: "first", onExcessProperty: "ignore" } as const
      const fast = fastDecode(schema, structuredClone(resource.spec), options)
      const effect = Schema.decodeUnknownEither(schema)(structuredClone(resource.spec), options)
      expect(Option.isSome(fast)).toBe(true)
      expect(Either.isRight(effect) && Option.getOrUndefined(fast)).toStrictEqual(Either.getOrUndefined(effect))
      expect(Either.isRight(decodeAll(schema, resource.spec, { strict: false }))).toBe(true)
    }
  })
})
