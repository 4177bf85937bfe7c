/**
 * The productpage sidecar's inbound side as the reference's security tasks describe it, asked of
 * the evaluator: mTLS migration (STRICT takes only mutual TLS with the mesh ALPN, PERMISSIVE
 * both, DISABLE plaintext only, port-level overrides), and authorization (DENY on a path, ALLOW
 * for a principal, AUDIT deciding nothing, HTTP-only fields on a TCP port).
 */
import { describe, expect, it } from "@effect/vitest"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import { type InboundInput, inbound } from "../../../../support/proxygen/evaluator.js"
import {
  authorizationPolicies,
  authzPolicy,
  JWKS_HOST,
  meshInput,
  meshPush,
  PRINCIPAL,
  peerAuth,
  productpageSidecar,
  proxyConfig,
} from "./mesh.js"

const INBOUND_HTTP = "inbound|9080||"
const INBOUND_TCP = "inbound|9090||"
const SLEEP = PRINCIPAL("sleep", "sleep")
const INGRESS = PRINCIPAL("mesh-system", "ingressgateway")
const REVIEWS = PRINCIPAL("default", "bookinfo-reviews")

const sidecarOf = (parts: Parameters<typeof meshPush>[0]) => {
  const config = proxyConfig(meshPush(parts), productpageSidecar())
  return (input: Omit<InboundInput, "listeners" | "routes">) =>
    inbound({ listeners: config.listeners.resources, routes: config.routes.resources, ...input })
}

const mtlsHttp = { tls: true, principal: SLEEP, path: "/productpage", method: "GET" } as const
const plainHttp = { tls: false, path: "/productpage", method: "GET" } as const

const modes = (mode: string, portLevel?: Record<number, { mode: string }>) =>
  sidecarOf({
    authorizationPolicies: [],
    peerAuthentications: [
      peerAuth("default", { mtls: { mode: "PERMISSIVE" } }, "mesh-system"),
      peerAuth("default", { mtls: { mode } }),
      ...(portLevel !== undefined
        ? [peerAuth("productpage", { selector: { matchLabels: { app: "productpage" } }, portLevelMtls: portLevel })]
        : []),
    ],
  })

describe("mutual TLS migration", () => {
  it("STRICT: plaintext finds no filter chain; mTLS with the mesh ALPN reaches the app", () => {
    const at = modes("STRICT")
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "no-chain" })
    expect(at({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9090, tls: false })).toMatchObject({ kind: "no-chain" })
    expect(at({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
  })

  it("STRICT: a TLS client without a certificate fails the handshake", () => {
    const at = modes("STRICT")
    const outcome = at({ port: 9080, tls: true, path: "/", method: "GET" })
    expect(outcome.kind).toBe("handshake-failed")
  })

  it("PERMISSIVE: both plaintext and mTLS reach the app", () => {
    const at = modes("PERMISSIVE")
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9090, tls: false })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
    expect(at({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
  })

  it("DISABLE: plaintext only", () => {
    const at = modes("DISABLE")
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9080, ...mtlsHttp }).kind).not.toBe("allowed")
    expect(at({ port: 9090, tls: false })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
  })

  it("a port-level mode overrides the workload's: STRICT with 9090 PERMISSIVE", () => {
    const at = modes("STRICT", { 9090: { mode: "PERMISSIVE" } })
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "no-chain" })
    expect(at({ port: 9090, tls: false })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
    expect(at({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
  })

  it("and the other way round: PERMISSIVE with 9080 STRICT", () => {
    const at = modes("PERMISSIVE", { 9080: { mode: "STRICT" } })
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "no-chain" })
    expect(at({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9090, tls: false })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
  })

  it("the mesh-wide policy applies where the namespace has none", () => {
    const at = sidecarOf({
      authorizationPolicies: [],
      peerAuthentications: [peerAuth("default", { mtls: { mode: "STRICT" } }, "mesh-system")],
    })
    expect(at({ port: 9080, ...plainHttp })).toMatchObject({ kind: "no-chain" })
    expect(at({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
  })
})

const strict = [peerAuth("default", { mtls: { mode: "STRICT" } })]
const selector = { matchLabels: { app: "productpage" } }

describe("authorization", () => {
  it("DENY on path /admin: denied there, allowed elsewhere", () => {
    const at = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("deny-admin", {
          selector,
          action: "DENY",
          rules: [{ to: [{ operation: { paths: ["/admin", "/admin/*"] } }] }],
        }),
      ],
    })
    expect(at({ port: 9080, ...mtlsHttp, path: "/admin" })).toMatchObject({ kind: "denied" })
    expect(at({ port: 9080, ...mtlsHttp, path: "/admin/users?x=1" })).toMatchObject({ kind: "denied" })
    expect(at({ port: 9080, ...mtlsHttp, path: "/administrator" })).toMatchObject({ kind: "allowed" })
    expect(at({ port: 9080, ...mtlsHttp, path: "/productpage" })).toMatchObject({
      kind: "allowed",
      cluster: INBOUND_HTTP,
    })
  })

  it("ALLOW for a principal: that principal is allowed, another is denied", () => {
    const at = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("allow-sleep", {
          selector,
          action: "ALLOW",
          rules: [{ from: [{ source: { principals: ["cluster.local/ns/sleep/sa/sleep"] } }] }],
        }),
      ],
    })
    expect(at({ port: 9080, ...mtlsHttp, principal: SLEEP })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
    expect(at({ port: 9080, ...mtlsHttp, principal: REVIEWS })).toMatchObject({ kind: "denied" })
    // ALLOW on a TCP port too: principals are not HTTP-only.
    expect(at({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "allowed", cluster: INBOUND_TCP })
    expect(at({ port: 9090, tls: true, principal: REVIEWS })).toMatchObject({ kind: "denied" })
  })

  it("ALLOW by namespace: any identity of the namespace", () => {
    const at = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("allow-sleep-ns", {
          selector,
          action: "ALLOW",
          rules: [{ from: [{ source: { namespaces: ["sleep"] } }] }],
        }),
      ],
    })
    expect(at({ port: 9080, ...mtlsHttp, principal: PRINCIPAL("sleep", "other") })).toMatchObject({ kind: "allowed" })
    expect(at({ port: 9080, ...mtlsHttp, principal: REVIEWS })).toMatchObject({ kind: "denied" })
  })

  it("AUDIT decides nothing", () => {
    const at = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("audit", {
          selector,
          action: "AUDIT",
          rules: [{ to: [{ operation: { paths: ["/productpage"] } }] }],
        }),
      ],
    })
    expect(at({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed", cluster: INBOUND_HTTP })
  })

  it("the reference mesh: DENY before ALLOW, methods and principals combined", () => {
    const at = sidecarOf({ authorizationPolicies })
    expect(at({ port: 9080, ...mtlsHttp, principal: INGRESS })).toMatchObject({
      kind: "allowed",
      cluster: INBOUND_HTTP,
    })
    expect(at({ port: 9080, ...mtlsHttp, principal: SLEEP, method: "POST" })).toMatchObject({ kind: "allowed" })
    expect(at({ port: 9080, ...mtlsHttp, principal: SLEEP, method: "DELETE" })).toMatchObject({ kind: "denied" })
    expect(at({ port: 9080, ...mtlsHttp, principal: INGRESS, path: "/admin" })).toMatchObject({ kind: "denied" })
    expect(at({ port: 9080, ...mtlsHttp, principal: REVIEWS })).toMatchObject({ kind: "denied" })
  })

  it("on a TCP port, a DENY rule's HTTP-only fields are dropped (it denies more), an ALLOW rule's make it match nothing", () => {
    const deny = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("deny-admin", {
          selector,
          action: "DENY",
          rules: [{ to: [{ operation: { paths: ["/admin"] } }] }],
        }),
      ],
    })
    expect(deny({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "denied" })
    const allow = sidecarOf({
      peerAuthentications: strict,
      authorizationPolicies: [
        authzPolicy("allow-get", { selector, action: "ALLOW", rules: [{ to: [{ operation: { methods: ["GET"] } }] }] }),
      ],
    })
    expect(allow({ port: 9090, tls: true, principal: SLEEP })).toMatchObject({ kind: "denied" })
    expect(allow({ port: 9080, ...mtlsHttp })).toMatchObject({ kind: "allowed" })
  })
})

describe("request authentication", () => {
  const hcmOf = (config: ReturnType<typeof proxyConfig>) => {
    const inbound = config.listeners.resources.find((l) => l.name === "virtualInbound")!
    const chain = (
      inbound.filter_chains as ReadonlyArray<{
        name: string
        filters: ReadonlyArray<{ typed_config: { http_filters?: ReadonlyArray<{ name: string }> } }>
      }>
    ).find((c) => c.name === "0.0.0.0_9080")!
    return chain.filters[0]!.typed_config
  }

  it("the JWT filter runs before the RBAC filters; the JWKS comes through the ServiceEntry's cluster", () => {
    const config = proxyConfig(meshPush(), productpageSidecar())
    const names = hcmOf(config).http_filters!.map((f) => f.name)
    expect(names.indexOf("envoy.filters.http.jwt_authn")).toBeGreaterThan(-1)
    expect(names.indexOf("envoy.filters.http.jwt_authn")).toBeLessThan(names.indexOf("envoy.filters.http.rbac"))
    expect(JSON.stringify(hcmOf(config))).toContain(`"cluster":"outbound|443||${JWKS_HOST}"`)
    expect(config.clusters.names).toContain(`outbound|443||${JWKS_HOST}`)
  })

  it("a jwksUri host the proxy has no cluster for is reported", () => {
    const services = meshInput().services.filter((s) => s.hostname !== JWKS_HOST)
    const { warnings } = generateForProxy(meshPush({ services }), TypeUrl.Listener, {
      wildcard: true,
      names: [],
      proxy: productpageSidecar(),
    })
    expect(warnings.map((w) => w.message)).toContainEqual(
      expect.stringMatching(
        /RequestAuthentication default\/jwt field jwtRules\[0\]: jwksUri host raw\.githubusercontent\.com:443 is not a service/,
      ),
    )
    const none = generateForProxy(meshPush(), TypeUrl.Listener, {
      wildcard: true,
      names: [],
      proxy: productpageSidecar(),
    })
    expect(none.warnings.filter((w) => w.scope === "authn")).toEqual([])
  })
})
