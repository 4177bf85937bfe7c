/**
 * `meshctl x authz check`'s logic on listeners made by this repo's own inbound generator (so the
 * policy names are the control plane's real ones): rows per policy across HTTP and TCP chains,
 * split rules counted once, CUSTOM from the ext-authz shadow rules, the fallbacks, the table.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseExtensionProviders } from "../../../src/services/mesh-config/extension-providers.js"
import {
  ANONYMOUS_POLICY,
  authzRows,
  authzRowsOfListeners,
  authzTable,
  parsePolicyName,
  rbacConfigsOfListener,
} from "../../../src/services/proxy-config/authz.js"
import { listenersOf, parseConfigDump } from "../../../src/services/proxy-config/dump.js"
import { defaultProxyGenOptions, defaultPushContextOptions } from "../../../src/services/xds/model/push-context.js"
import { generateInboundListener } from "../../../src/services/xds/proxygen/inbound/index.js"
import { baseInput, push, security, sidecar, svc } from "../xds/proxygen/inbound/fixtures.js"

const AUTHZ_HOST = "ext-authz.foo.svc.cluster.local"
const ap = (name: string, spec: unknown, namespace = "default") =>
  security("AuthorizationPolicy", name, spec, namespace)

const providers = parseExtensionProviders([
  { name: "authz-grpc", envoyExtAuthzGrpc: { service: `foo/${AUTHZ_HOST}`, port: 9000 } },
])
const authzService = svc(AUTHZ_HOST, [{ name: "grpc", port: 9000, protocol: "GRPC" }], "foo")

/** The inbound listener the generator builds for reviews under these policies. */
const inboundListener = (policies: ReadonlyArray<unknown>): Record<string, unknown> => {
  const context = push(
    { services: [...baseInput().services, authzService], authorizationPolicies: policies as never },
    {},
    { ...defaultPushContextOptions, proxy: { ...defaultProxyGenOptions, extensionProviders: providers } },
  )
  return generateInboundListener(context, sidecar()).resources[0]!.build() as Record<string, unknown>
}

/** Listeners wrapped as the proxy's admin /config_dump wraps them, read back as the CLI reads. */
const throughDump = (listeners: ReadonlyArray<Record<string, unknown>>) => {
  const text = JSON.stringify({
    configs: [
      {
        "@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
        dynamic_listeners: listeners.map((listener) => ({
          name: listener.name,
          active_state: { listener: { "@type": "type.googleapis.com/envoy.config.listener.v3.Listener", ...listener } },
        })),
      },
    ],
  })
  return listenersOf(Either.getOrThrow(parseConfigDump(text)))
}

const allow = ap("allow", {
  rules: [
    { from: [{ source: { principals: ["cluster.local/ns/default/sa/productpage"] } }] },
    // Two JWT sources: the generator splits this rule per source (`-from[j]`) on HTTP chains.
    {
      from: [
        { source: { requestPrincipals: ["https://a.example.com/alice"] } },
        { source: { requestPrincipals: ["https://b.example.com/bob"] } },
      ],
    },
  ],
})
const denyAdmin = ap("deny-admin", { action: "DENY", rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }] })
const audit = ap("audit", { action: "AUDIT", rules: [{}] }, "mesh-system")
const custom = ap("ext", {
  action: "CUSTOM",
  provider: { name: "authz-grpc" },
  rules: [{ to: [{ operation: { paths: ["/a"] } }] }, { to: [{ operation: { paths: ["/b"] } }] }],
})

describe("authz check rows from generated listeners", () => {
  it("finds one row per policy across the HTTP and TCP chains, split rules counted once", () => {
    const listener = inboundListener([allow, denyAdmin, audit, custom])
    const configs = rbacConfigsOfListener(listener)
    // Each chain with RBAC (HTTP and TCP, mTLS and plaintext) holds AUDIT, CUSTOM shadow, DENY, ALLOW.
    expect(configs.length).toBeGreaterThanOrEqual(8)
    expect(configs.length % 4).toBe(0)
    expect(configs.filter((c) => c.rules === undefined && c.shadowRules?.action === "DENY").length).toBe(
      configs.length / 4,
    )
    const httpAllow = configs.find((c) => Object.keys(c.rules?.policies ?? {}).some((n) => n.includes("-from[")))
    expect(Object.keys(httpAllow?.rules?.policies ?? {})).toEqual(
      expect.arrayContaining([
        "ns[default]-policy[allow]-rule[1]-from[0]",
        "ns[default]-policy[allow]-rule[1]-from[1]",
      ]),
    )
    expect(authzRowsOfListeners(throughDump([listener]))).toEqual([
      { action: "CUSTOM", policy: "ext.default", rules: 2 },
      { action: "DENY", policy: "deny-admin.default", rules: 1 },
      { action: "ALLOW", policy: "allow.default", rules: 2 },
      { action: "AUDIT", policy: "audit.mesh-system", rules: 1 },
    ])
  })

  it("merges the same policies seen on several listeners", () => {
    const one = inboundListener([denyAdmin])
    const other = { ...inboundListener([denyAdmin, audit]), name: "virtualInbound-copy" }
    expect(authzRowsOfListeners(throughDump([one, other]))).toEqual([
      { action: "DENY", policy: "deny-admin.default", rules: 1 },
      { action: "AUDIT", policy: "audit.mesh-system", rules: 1 },
    ])
  })

  it("shows an ALLOW that allows nothing on TCP as the anonymous policy", () => {
    const allowGet = ap("allow-get", { rules: [{ to: [{ operation: { methods: ["GET"] } }] }] })
    expect(authzRowsOfListeners(throughDump([inboundListener([allowGet])]))).toEqual([
      { action: "ALLOW", policy: ANONYMOUS_POLICY, rules: 1 },
      { action: "ALLOW", policy: "allow-get.default", rules: 1 },
    ])
  })

  it("shows the deny-all of an unusable CUSTOM provider under its own name", () => {
    const bad = ap("ext", { action: "CUSTOM", provider: { name: "missing" }, rules: [{}] })
    expect(authzRowsOfListeners(throughDump([inboundListener([bad])]))).toEqual([
      { action: "DENY", policy: "default-deny-all-due-to-bad-CUSTOM-action", rules: 1 },
    ])
  })

  it("has no rows for a workload without policies", () => {
    const listeners = throughDump([inboundListener([])])
    expect(listeners).toHaveLength(1)
    expect(authzRowsOfListeners(listeners)).toEqual([])
    expect(authzTable([])).toBe("ACTION   AuthorizationPolicy   RULES\n")
  })
})

describe("authz check pieces", () => {
  it("parses the control plane's policy names and keeps foreign ones whole", () => {
    expect(parsePolicyName("ns[foo]-policy[bar]-rule[3]")).toEqual({ policy: "bar.foo", rule: "3", custom: false })
    expect(parsePolicyName("ns[foo]-policy[bar]-rule[3]-from[1]")).toEqual({
      policy: "bar.foo",
      rule: "3",
      custom: false,
    })
    expect(parsePolicyName("istio-ext-authz-ns[a]-policy[b]-rule[0]")).toEqual({
      policy: "b.a",
      rule: "0",
      custom: true,
    })
    expect(parsePolicyName("something-else")).toEqual({
      policy: "something-else",
      rule: "something-else",
      custom: false,
    })
  })

  it("marks shadow policies that are not CUSTOM as dry-run, and reads an absent action as ALLOW", () => {
    const rows = authzRows([
      {
        rules: { policies: { "ns[a]-policy[p]-rule[0]": {} } },
        shadowRules: { action: "DENY", policies: { "ns[a]-policy[q]-rule[0]": {}, "ns[a]-policy[q]-rule[1]": {} } },
      },
    ])
    expect(rows).toEqual([
      { action: "DENY (dry-run)", policy: "q.a", rules: 2 },
      { action: "ALLOW", policy: "p.a", rules: 1 },
    ])
  })

  it("aligns the table as the reference's tabwriter (padding 3)", () => {
    const table = authzTable([
      { action: "DENY", policy: "deny-admin.default", rules: 1 },
      { action: "AUDIT", policy: "a.mesh-system", rules: 12 },
    ])
    expect(table).toBe(
      [
        "ACTION   AuthorizationPolicy   RULES",
        "DENY     deny-admin.default    1",
        "AUDIT    a.mesh-system         12",
        "",
      ].join("\n"),
    )
  })
})
