/**
 * CUSTOM AuthorizationPolicies on the sidecar's inbound chains: the shadow RBAC + ext_authz pair
 * from the mesh config extension provider the policies name (HTTP and gRPC providers), the TCP
 * side, and the deny-all the reference falls back to when the provider cannot be used.
 */
import { describe, expect, it } from "vitest"
import { parseExtensionProviders } from "../../../../../src/services/mesh-config/extension-providers.js"
import {
  defaultProxyGenOptions,
  defaultPushContextOptions,
  type PushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateInboundListener } from "../../../../../src/services/xds/proxygen/inbound/index.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import { inbound, requestHeaders } from "../../../../support/proxygen/evaluator.js"
import { consultedExtAuthz } from "./ext-authz-eval.js"
import { baseInput, push, security, sidecar, svc } from "./fixtures.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const AUTHZ_HOST = "ext-authz.foo.svc.cluster.local"
const SLEEP = "spiffe://cluster.local/ns/default/sa/sleep"
const PRODUCTPAGE = "spiffe://cluster.local/ns/default/sa/productpage"

const providers = parseExtensionProviders([
  {
    name: "authz-http",
    envoyExtAuthzHttp: {
      service: AUTHZ_HOST,
      port: 8000,
      timeout: "1.5s",
      pathPrefix: "/check",
      failOpen: true,
      statusOnError: "503",
      includeRequestHeadersInCheck: ["x-ext-authz", "x-b3-*"],
      includeAdditionalHeadersInCheck: { "x-extra": "1" },
      headersToUpstreamOnAllow: ["x-user"],
      headersToDownstreamOnDeny: ["*-reason"],
      includeRequestBodyInCheck: { maxRequestBytes: 4096, allowPartialMessage: true },
    },
  },
  { name: "authz-grpc", envoyExtAuthzGrpc: { service: `foo/${AUTHZ_HOST}`, port: 9000 } },
  { name: "authz-missing", envoyExtAuthzGrpc: { service: "nowhere.foo.svc.cluster.local", port: 9000 } },
  { name: "authz-bad", envoyExtAuthzHttp: { service: AUTHZ_HOST, port: 8000, pathPrefix: "check" } },
  { name: "envoy", envoyFileAccessLog: { path: "/dev/stdout" } },
])

const authzService = svc(
  AUTHZ_HOST,
  [
    { name: "http", port: 8000, protocol: "HTTP" },
    { name: "grpc", port: 9000, protocol: "GRPC" },
  ],
  "foo",
)

const ap = (name: string, spec: unknown, namespace = "default") =>
  security("AuthorizationPolicy", name, spec, namespace)

const custom = (name: string, provider: string, rules: unknown) =>
  ap(name, { action: "CUSTOM", provider: { name: provider }, rules })
const adminOnly = [{ to: [{ operation: { paths: ["/admin*"] } }] }]
const fromSleep = [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/sleep"] } }] }]

const pushWith = (policies: ReadonlyArray<unknown>, extensionProviders = providers): PushContext =>
  push(
    {
      services: [...baseInput().services, authzService],
      authorizationPolicies: policies as never,
    },
    {},
    { ...defaultPushContextOptions, proxy: { ...defaultProxyGenOptions, extensionProviders } },
  )

const generate = (p: PushContext) => {
  const generated = generateInboundListener(p, sidecar())
  const listener = generated.resources[0]!.build() as J
  expectConformant(TypeUrl.Listener, [listener])
  return { listener, key: generated.resources[0]!.key, warnings: generated.warnings.map((w) => w.message) }
}

const chain = (l: J, name: string): J => l.filter_chains.find((c: J) => c.name === name)
const httpFilters = (l: J): ReadonlyArray<J> => chain(l, "0.0.0.0_8080").filters[0].typed_config.http_filters
const networkFilters = (l: J): ReadonlyArray<J> => chain(l, "0.0.0.0_3306").filters

/** The ext_authz filter the proxy runs for an mTLS request to the HTTP port (undefined: none). */
const askedForRequest = (listener: J, path: string, principal = PRODUCTPAGE) => {
  const outcome = inbound({ listeners: [listener], port: 8080, tls: true, principal, path })
  if (!("chain" in outcome)) throw new Error(`no chain for ${path}: ${outcome.kind}`)
  const hcm = (outcome.chain as J).filters[0].typed_config
  return consultedExtAuthz(hcm.http_filters, {
    principal,
    destinationPort: 8080,
    http: { path, headers: requestHeaders({ host: "reviews", path }) },
  })
}

/** The ext_authz filter the proxy runs for an mTLS connection to the TCP port (undefined: none). */
const askedForConnection = (listener: J, principal: string) => {
  const outcome = inbound({ listeners: [listener], port: 3306, tls: true, principal })
  if (!("chain" in outcome)) throw new Error(`no chain: ${outcome.kind}`)
  return consultedExtAuthz((outcome.chain as J).filters, { principal, destinationPort: 3306 })
}

describe("CUSTOM authorization with an HTTP ext_authz provider", () => {
  const policies = [
    custom("ext", "authz-http", adminOnly),
    ap("deny-debug", { action: "DENY", rules: [{ to: [{ operation: { paths: ["/debug"] } }] }] }),
    ap("audit", { action: "AUDIT", rules: [{}] }, "mesh-system"),
  ]

  it("puts a shadow RBAC and the ext_authz filter between AUDIT and DENY", () => {
    const { listener, warnings } = generate(pushWith(policies))
    const filters = httpFilters(listener)
    expect(filters.map((f) => f.name)).toEqual([
      "envoy.filters.http.rbac",
      "envoy.filters.http.rbac",
      "envoy.filters.http.ext_authz",
      "envoy.filters.http.rbac",
      "envoy.filters.http.router",
    ])
    expect(filters[0].typed_config.rules.action).toBe("LOG")
    const shadow = filters[1].typed_config
    expect(shadow.rules).toBeUndefined()
    expect(shadow.shadow_rules_stat_prefix).toBe("mesh_ext_authz_")
    expect(shadow.shadow_rules.action).toBe("DENY")
    expect(Object.keys(shadow.shadow_rules.policies)).toEqual(["mesh-ext-authz-ns[default]-policy[ext]-rule[0]"])
    expect(filters[3].typed_config.rules.action).toBe("DENY")
    expect(warnings).toContainEqual(
      expect.stringContaining(
        'AuthorizationPolicy default/ext field provider: the HTTP provider "authz-http" cannot check TCP connections',
      ),
    )
  })

  it("writes the provider's settings into the filter", () => {
    const { listener } = generate(pushWith(policies))
    expect(httpFilters(listener)[2].typed_config).toEqual({
      "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
      http_service: {
        server_uri: {
          uri: `http://${AUTHZ_HOST}`,
          cluster: `outbound|8000||${AUTHZ_HOST}`,
          timeout: { seconds: "1", nanos: 500_000_000 },
        },
        path_prefix: "/check",
        authorization_request: { headers_to_add: [{ key: "x-extra", value: "1" }] },
        authorization_response: {
          allowed_upstream_headers: { patterns: [{ exact: "x-user", ignore_case: true }] },
          allowed_client_headers: { patterns: [{ suffix: "-reason", ignore_case: true }] },
        },
      },
      allowed_headers: {
        patterns: [
          { exact: "x-ext-authz", ignore_case: true },
          { prefix: "x-b3-", ignore_case: true },
        ],
      },
      failure_mode_allow: true,
      status_on_error: { code: "ServiceUnavailable" },
      with_request_body: { max_request_bytes: 4096, allow_partial_message: true, pack_as_bytes: false },
      transport_api_version: "V3",
      filter_enabled_metadata: {
        filter: "envoy.filters.http.rbac",
        path: [{ key: "mesh_ext_authz_shadow_effective_policy_id" }],
        value: { string_match: { prefix: "mesh-ext-authz" } },
      },
    })
  })

  it("asks the authorizer about the requests the CUSTOM rules select, and only those", () => {
    const { listener } = generate(pushWith(policies))
    expect(askedForRequest(listener, "/admin/users")?.name).toBe("envoy.filters.http.ext_authz")
    expect(askedForRequest(listener, "/reviews/1")).toBeUndefined()
    // The shadow RBAC enforces nothing; the DENY policy after the pair still does.
    expect(
      inbound({ listeners: [listener], port: 8080, tls: true, principal: PRODUCTPAGE, path: "/reviews/1" }),
    ).toMatchObject({ kind: "allowed" })
    expect(
      inbound({ listeners: [listener], port: 8080, tls: true, principal: PRODUCTPAGE, path: "/debug" }),
    ).toMatchObject({
      kind: "denied",
    })
  })

  it("cannot check TCP: denies the connections the CUSTOM rules select (HTTP-only fields dropped)", () => {
    const { listener } = generate(pushWith(policies))
    const tcp = networkFilters(listener)
    expect(tcp.map((f) => f.name)).toEqual([
      "envoy.filters.network.rbac",
      "envoy.filters.network.rbac",
      "envoy.filters.network.rbac",
      "envoy.filters.network.tcp_proxy",
    ])
    expect(Object.keys(tcp[1].typed_config.rules.policies)).toEqual(["mesh-ext-authz-ns[default]-policy[ext]-rule[0]"])
    expect(tcp.some((f) => f.name === "envoy.filters.network.ext_authz")).toBe(false)
    expect(inbound({ listeners: [listener], port: 3306, tls: true, principal: PRODUCTPAGE })).toMatchObject({
      kind: "denied",
      policy: "mesh-ext-authz-ns[default]-policy[ext]-rule[0]",
    })
  })
})

describe("CUSTOM authorization with a gRPC ext_authz provider", () => {
  it("checks selected requests and connections over gRPC at the namespace-qualified service", () => {
    const { listener, warnings } = generate(pushWith([custom("ext", "authz-grpc", fromSleep)]))
    expect(warnings).toEqual([])
    const [shadow, extAuthz] = httpFilters(listener)
    expect(Object.keys(shadow.typed_config.shadow_rules.policies)).toEqual([
      "mesh-ext-authz-ns[default]-policy[ext]-rule[0]",
    ])
    expect(extAuthz.typed_config).toMatchObject({
      grpc_service: {
        envoy_grpc: { cluster_name: `outbound|9000||${AUTHZ_HOST}`, authority: `outbound_.9000_._.${AUTHZ_HOST}` },
        // the reference's default check timeout
        timeout: { seconds: "600", nanos: 0 },
      },
      failure_mode_allow: false,
      transport_api_version: "V3",
    })
    expect(extAuthz.typed_config.http_service).toBeUndefined()

    expect(askedForRequest(listener, "/anything", SLEEP)?.name).toBe("envoy.filters.http.ext_authz")
    expect(askedForRequest(listener, "/anything", PRODUCTPAGE)).toBeUndefined()

    const tcp = networkFilters(listener)
    expect(tcp.map((f) => f.name)).toEqual([
      "envoy.filters.network.rbac",
      "envoy.filters.network.ext_authz",
      "envoy.filters.network.tcp_proxy",
    ])
    expect(tcp[0].typed_config).toMatchObject({ stat_prefix: "tcp.", shadow_rules_stat_prefix: "mesh_ext_authz_" })
    expect(tcp[1].typed_config).toMatchObject({
      "@type": "type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz",
      stat_prefix: "tcp.",
      grpc_service: { envoy_grpc: { cluster_name: `outbound|9000||${AUTHZ_HOST}` } },
      filter_enabled_metadata: { filter: "envoy.filters.network.rbac" },
    })
    expect(askedForConnection(listener, SLEEP)?.name).toBe("envoy.filters.network.ext_authz")
    expect(askedForConnection(listener, PRODUCTPAGE)).toBeUndefined()
  })

  it("a CUSTOM policy without rules selects nothing", () => {
    const { listener } = generate(pushWith([custom("ext", "authz-grpc", [])]))
    expect(Object.keys(httpFilters(listener)[0].typed_config.shadow_rules.policies)).toEqual([
      "mesh-ext-authz-ns[default]-policy[ext]-rule[0]",
    ])
    expect(askedForRequest(listener, "/", SLEEP)).toBeUndefined()
    expect(askedForConnection(listener, SLEEP)).toBeUndefined()
  })

  it("the listener's key follows the provider's settings", () => {
    const policy = [custom("ext", "authz-grpc", fromSleep)]
    const a = generate(pushWith(policy)).key
    expect(generate(pushWith(policy)).key).toBe(a)
    const failOpen = parseExtensionProviders([
      { name: "authz-grpc", envoyExtAuthzGrpc: { service: `foo/${AUTHZ_HOST}`, port: 9000, failOpen: true } },
    ])
    expect(generate(pushWith(policy, failOpen)).key).not.toBe(a)
  })
})

describe("CUSTOM authorization the workload cannot apply", () => {
  const denyAll = {
    action: "DENY",
    policies: {
      "default-deny-all-due-to-bad-CUSTOM-action": { permissions: [{ any: true }], principals: [{ any: true }] },
    },
  }

  it.each([
    [
      "an unknown provider",
      [custom("ext", "nope", adminOnly)],
      'extension provider "nope" is not in the mesh config (ext_authz providers: authz-http, authz-grpc, authz-missing, authz-bad)',
    ],
    [
      "a provider of another kind",
      [custom("ext", "envoy", adminOnly)],
      'extension provider "envoy" is of kind envoyFileAccessLog, not envoyExtAuthzHttp or envoyExtAuthzGrpc',
    ],
    [
      "an invalid provider",
      [custom("ext", "authz-bad", adminOnly)],
      'extension provider "authz-bad" is invalid: pathPrefix must begin with "/"',
    ],
    [
      "a service the registry lacks",
      [custom("ext", "authz-missing", adminOnly)],
      'extension provider "authz-missing": could not find service nowhere.foo.svc.cluster.local',
    ],
    [
      "two providers for one workload",
      [custom("a", "authz-http", adminOnly), custom("b", "authz-grpc", adminOnly)],
      "only one CUSTOM provider per workload is supported, found authz-grpc, authz-http",
    ],
  ])("%s: denies every request and connection, with a warning", (_, policies, reason) => {
    const { listener, warnings } = generate(pushWith(policies))
    expect(httpFilters(listener)[0].typed_config.rules).toEqual(denyAll)
    expect(networkFilters(listener)[0].typed_config.rules).toEqual(denyAll)
    expect(httpFilters(listener).some((f) => f.name === "envoy.filters.http.ext_authz")).toBe(false)
    expect(warnings).toContainEqual(expect.stringContaining(reason))
    expect(warnings).toContainEqual(expect.stringContaining("the workload denies every request"))
    // The rules of a CUSTOM policy that cannot apply are not translated: no per-rule notices.
    expect(warnings.filter((w) => w.includes("HTTP-only"))).toEqual([])
    expect(inbound({ listeners: [listener], port: 8080, tls: true, principal: SLEEP, path: "/" })).toMatchObject({
      kind: "denied",
    })
  })
})
