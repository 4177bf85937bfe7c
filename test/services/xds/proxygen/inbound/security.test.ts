/**
 * AuthorizationPolicy and RequestAuthentication on the sidecar's inbound chains: RBAC filters in
 * the reference's order (AUDIT, CUSTOM, DENY, ALLOW), network RBAC on TCP ports, the jwt_authn
 * providers and requirements, and JWT principals read from the filter's metadata.
 */
import { describe, expect, it } from "vitest"
import type { PushContext } from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateInboundListener } from "../../../../../src/services/xds/proxygen/inbound/index.js"
import { inbound } from "../../../../support/proxygen/evaluator.js"
import { conformanceProblems, push, security, sidecar } from "./fixtures.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const PEER = "spiffe://cluster.local/ns/default/sa/productpage"
const ISSUER = "https://issuer.example.com"

const ap = (name: string, spec: unknown, namespace = "default") =>
  security("AuthorizationPolicy", name, spec, namespace)
const ra = (name: string, spec: unknown, namespace = "default") =>
  security("RequestAuthentication", name, spec, namespace)

const generate = (p: PushContext) => {
  const generated = generateInboundListener(p, sidecar())
  const listener = generated.resources[0]!.build() as J
  expect(conformanceProblems(TypeUrl.Listener, [listener])).toEqual([])
  return { listener, warnings: generated.warnings }
}

const chain = (l: J, name: string): J => l.filter_chains.find((c: J) => c.name === name)
const httpFilters = (l: J): ReadonlyArray<J> => chain(l, "0.0.0.0_8080").filters[0].typed_config.http_filters
const networkFilters = (l: J): ReadonlyArray<J> => chain(l, "0.0.0.0_3306").filters

const allowProductpage = ap("allow", {
  selector: { matchLabels: { app: "reviews" } },
  rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/productpage"] } }] }],
})
const denyAdmin = ap("deny-admin", { action: "DENY", rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }] })
const auditAll = ap("audit", { action: "AUDIT", rules: [{}] }, "mesh-system")

describe("inbound authorization", () => {
  it("puts AUDIT (LOG), DENY and ALLOW RBAC filters before the router, in that order", () => {
    const { listener, warnings } = generate(push({ authorizationPolicies: [allowProductpage, denyAdmin, auditAll] }))
    const filters = httpFilters(listener)
    expect(filters.map((f) => f.name)).toEqual([
      "envoy.filters.http.rbac",
      "envoy.filters.http.rbac",
      "envoy.filters.http.rbac",
      "envoy.filters.http.router",
    ])
    expect(filters.slice(0, 3).map((f) => f.typed_config.rules.action)).toEqual(["LOG", "DENY", "ALLOW"])
    expect(Object.keys(filters[1].typed_config.rules.policies)).toEqual(["ns[default]-policy[deny-admin]-rule[0]"])
    expect(Object.keys(filters[2].typed_config.rules.policies)).toEqual(["ns[default]-policy[allow]-rule[0]"])

    const call = (path: string, principal?: string) =>
      inbound({ listeners: [listener], port: 8080, tls: true, principal: principal ?? PEER, path })
    expect(call("/reviews")).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(call("/admin/x")).toMatchObject({ kind: "denied" })
    expect(call("/reviews", "spiffe://cluster.local/ns/default/sa/other")).toMatchObject({ kind: "denied" })

    // TCP: the path rule of the DENY policy is HTTP-only; dropped there, it denies every connection.
    const tcp = networkFilters(listener)
    expect(tcp.map((f) => f.name)).toEqual([
      "envoy.filters.network.rbac",
      "envoy.filters.network.rbac",
      "envoy.filters.network.rbac",
      "envoy.filters.network.tcp_proxy",
    ])
    expect(tcp[0].typed_config.stat_prefix).toBe("tcp.")
    expect(warnings.map((w) => w.message)).toContainEqual(
      expect.stringContaining("AuthorizationPolicy default/deny-admin rule 0: HTTP-only paths on a TCP port"),
    )
    expect(inbound({ listeners: [listener], port: 3306, tls: true, principal: PEER })).toMatchObject({ kind: "denied" })
  })

  it("drops an ALLOW rule with HTTP-only fields on TCP ports (it matches nothing there)", () => {
    const allowGet = ap("allow-get", { rules: [{ to: [{ operation: { methods: ["GET"] } }] }] })
    const { listener, warnings } = generate(push({ authorizationPolicies: [allowGet] }))
    const tcpAllow = networkFilters(listener)[0].typed_config.rules
    expect(tcpAllow).toEqual({ action: "ALLOW", policies: {} })
    expect(warnings.map((w) => w.message)).toContainEqual(
      expect.stringContaining(
        "AuthorizationPolicy default/allow-get rule 0: HTTP-only methods on a TCP port; the rule matches nothing there",
      ),
    )
    expect(inbound({ listeners: [listener], port: 8080, tls: false, method: "GET", path: "/" })).toMatchObject({
      kind: "allowed",
    })
    expect(inbound({ listeners: [listener], port: 3306, tls: false })).toMatchObject({ kind: "denied" })
  })

  it("turns a CUSTOM policy without a provider into a deny-all, with a warning", () => {
    const custom = ap("ext", { action: "CUSTOM", provider: { name: "my-authz" }, rules: [{}] })
    const { listener, warnings } = generate(push({ authorizationPolicies: [custom, denyAdmin] }))
    const filters = httpFilters(listener)
    expect(filters[0].typed_config.rules).toEqual({
      action: "DENY",
      policies: {
        "default-deny-all-due-to-bad-CUSTOM-action": { permissions: [{ any: true }], principals: [{ any: true }] },
      },
    })
    expect(filters[1].typed_config.rules.action).toBe("DENY")
    expect(warnings).toContainEqual(
      expect.objectContaining({
        scope: "authorization",
        message: expect.stringContaining("AuthorizationPolicy default/ext"),
      }),
    )
  })

  it("leaves workloads the policies do not select alone", () => {
    const other = ap("other", { selector: { matchLabels: { app: "other" } }, rules: [{}] })
    const { listener } = generate(push({ authorizationPolicies: [other] }))
    expect(httpFilters(listener).map((f) => f.name)).toEqual(["envoy.filters.http.router"])
  })
})

describe("inbound request authentication", () => {
  const jwtRule = {
    issuer: ISSUER,
    jwksUri: "https://keys.example.com/jwks.json",
    audiences: ["reviews"],
    fromHeaders: [{ name: "x-token", prefix: "Bearer " }],
    fromParams: ["token"],
    forwardOriginalToken: true,
    outputPayloadToHeader: "x-jwt-payload",
  }

  it("builds a jwt_authn provider per rule, before the RBAC filters", () => {
    const p = push(
      { authorizationPolicies: [allowProductpage] },
      { requestAuthentications: [ra("jwt", { selector: { matchLabels: { app: "reviews" } }, jwtRules: [jwtRule] })] },
    )
    const { listener } = generate(p)
    const filters = httpFilters(listener)
    expect(filters.map((f) => f.name)).toEqual([
      "envoy.filters.http.jwt_authn",
      "envoy.filters.http.rbac",
      "envoy.filters.http.router",
    ])
    const config = filters[0].typed_config
    expect(config.providers["origins-0"]).toEqual({
      issuer: ISSUER,
      audiences: ["reviews"],
      remote_jwks: {
        http_uri: {
          uri: "https://keys.example.com/jwks.json",
          cluster: "outbound|443||keys.example.com",
          timeout: { seconds: "5", nanos: 0 },
        },
        cache_duration: { seconds: "300", nanos: 0 },
      },
      forward: true,
      from_headers: [{ name: "x-token", value_prefix: "Bearer " }],
      from_params: ["token"],
      forward_payload_header: "x-jwt-payload",
      payload_in_metadata: ISSUER,
    })
    // No token passes (authorization decides); a token must verify.
    expect(config.rules).toEqual([
      {
        match: { prefix: "/" },
        requires: { requires_any: { requirements: [{ provider_name: "origins-0" }, { allow_missing: {} }] } },
      },
    ])
    // TCP chains get no JWT filter.
    expect(networkFilters(listener).map((f) => f.name)).not.toContain("envoy.filters.http.jwt_authn")
  })

  it("combines the rules of every RequestAuthentication that applies, and inlines jwks", () => {
    const mesh = ra("mesh", { jwtRules: [{ issuer: "mesh-issuer", jwks: '{"keys":[]}' }] }, "mesh-system")
    const local = ra("local", { jwtRules: [jwtRule] })
    const { listener } = generate(push({}, { requestAuthentications: [mesh, local] }))
    const config = httpFilters(listener)[0].typed_config
    expect(Object.keys(config.providers).sort()).toEqual(["origins-0", "origins-1"])
    const meshProvider = Object.values(config.providers).find((x: J) => x.issuer === "mesh-issuer") as J
    expect(meshProvider.local_jwks).toEqual({ inline_string: '{"keys":[]}' })
    const orMissing = (n: string) => ({ requires_any: { requirements: [{ provider_name: n }, { allow_missing: {} }] } })
    expect(config.rules[0].requires).toEqual({
      requires_any: {
        requirements: [
          { provider_name: "origins-0" },
          { provider_name: "origins-1" },
          { requires_all: { requirements: [orMissing("origins-0"), orMissing("origins-1")] } },
        ],
      },
    })
  })

  it("rejects tokens of a rule without keys, with a warning", () => {
    const { listener, warnings } = generate(
      push({}, { requestAuthentications: [ra("nokeys", { jwtRules: [{ issuer: ISSUER }] })] }),
    )
    const provider = httpFilters(listener)[0].typed_config.providers["origins-0"]
    expect(JSON.parse(provider.local_jwks.inline_string).keys).toHaveLength(1)
    expect(warnings).toContainEqual(
      expect.objectContaining({
        scope: "authn",
        message: expect.stringContaining("RequestAuthentication default/nokeys field jwtRules[0]"),
      }),
    )
  })

  it("reads request principals and claims from the verified payload", () => {
    const requireJwt = ap("require-jwt", {
      rules: [
        {
          from: [{ source: { requestPrincipals: [`${ISSUER}/alice`] } }, { source: { namespaces: ["admin"] } }],
          when: [{ key: "request.auth.claims[groups]", values: ["dev"] }],
        },
      ],
    })
    const { listener } = generate(
      push({ authorizationPolicies: [requireJwt] }, { requestAuthentications: [ra("jwt", { jwtRules: [jwtRule] })] }),
    )
    const policies = httpFilters(listener)[1].typed_config.rules.policies
    // The two `from` entries are alternatives: one policy each, the JWT condition only on the first.
    expect(Object.keys(policies)).toEqual([
      "ns[default]-policy[require-jwt]-rule[0]-from[0]",
      "ns[default]-policy[require-jwt]-rule[0]-from[1]",
    ])
    const sub = {
      metadata: {
        filter: "envoy.filters.http.jwt_authn",
        path: [{ key: ISSUER }, { key: "sub" }],
        value: { string_match: { exact: "alice" } },
      },
    }
    const groups = {
      metadata: {
        filter: "envoy.filters.http.jwt_authn",
        path: [{ key: ISSUER }, { key: "groups" }],
        value: {
          or_match: {
            value_matchers: [
              { string_match: { exact: "dev" } },
              { list_match: { one_of: { string_match: { exact: "dev" } } } },
            ],
          },
        },
      },
    }
    expect(policies["ns[default]-policy[require-jwt]-rule[0]-from[0]"].principals).toEqual([
      { and_ids: { ids: [sub, groups] } },
    ])
    const second = policies["ns[default]-policy[require-jwt]-rule[0]-from[1]"].principals[0].and_ids.ids
    expect(second).toHaveLength(2)
    expect(second[1]).toEqual(groups)
    // Without a RequestAuthentication no principal can be verified: the rule matches no JWT.
    const bare = generate(push({ authorizationPolicies: [requireJwt] })).listener
    const none = httpFilters(bare)[0].typed_config.rules.policies["ns[default]-policy[require-jwt]-rule[0]-from[0]"]
    expect(JSON.stringify(none.principals)).toContain('{"not_id":{"any":true}}')
  })
})
