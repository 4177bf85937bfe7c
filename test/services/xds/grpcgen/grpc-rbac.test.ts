/**
 * AuthorizationPolicy → RBAC translation, judged by what a real gRPC server decides: every
 * generated filter is encoded with the real protos, decoded the way @grpc/grpc-js-xds's RBAC
 * filter decodes it, and evaluated by its RBAC engine (rbac.js) against concrete requests.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Metadata } from "@grpc/grpc-js"
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { validateDocument } from "../../../../src/services/config-model/parse.js"
import type { AuthorizationPolicySpec } from "../../../../src/services/config-model/schemas/authorization-policy.js"
import { isKind } from "../../../../src/services/config-model/specs.js"
import {
  applicablePolicies,
  cidrRange,
  RBAC_ALLOW_FILTER,
  RBAC_DENY_FILTER,
  RBAC_TYPE,
  rbacFilters,
} from "../../../../src/services/xds/grpcgen/grpc-rbac.js"
import {
  type AuthorizationPolicyView,
  authorizationPolicyView,
} from "../../../../src/services/xds/model/authorization-policy-view.js"

const require = createRequire(import.meta.url)
const xdsRoot = dirname(require.resolve("@grpc/grpc-js-xds/package.json"))
const { parseConfig } = require(join(xdsRoot, "build/src/rbac.js")) as {
  parseConfig: (rules: unknown) => { apply: (info: unknown) => boolean }
}
const { loadProtosWithOptionsSync } = require(
  require.resolve("@grpc/proto-loader/build/src/util", {
    paths: [xdsRoot],
  }),
) as {
  loadProtosWithOptionsSync: (
    files: ReadonlyArray<string>,
    options: unknown,
  ) => { lookupType: (n: string) => { decode: (b: Uint8Array) => unknown; toObject: (m: unknown, o: unknown) => J } }
}
// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely
type J = any

const codec = loadXdsProtos().codec
const rbacType = loadProtosWithOptionsSync(["envoy/extensions/filters/http/rbac/v3/rbac.proto"], {
  keepCase: true,
  includeDirs: [
    ...["xds", "envoy-api", "protoc-gen-validate", "googleapis"].map((d) => join(xdsRoot, "deps", d)),
    // google/protobuf/descriptor.proto (imported by the xds annotations): protobufjs ships it. The
    // codec no longer parses the protos at load (its Root is lazy), so nothing registers it first.
    dirname(require.resolve("protobufjs/package.json")),
  ],
}).lookupType("envoy.extensions.filters.http.rbac.v3.RBAC")

/** A filter's config as a gRPC server sees it: encoded, decoded with the filter's options, parsed. */
const engine = (filter: object) => {
  const typed = (filter as J).typed_config
  expect(typed["@type"]).toBe(RBAC_TYPE)
  const { "@type": _, ...message } = typed
  const bytes = codec.encode(RBAC_TYPE, message)
  const decoded = rbacType.toObject(rbacType.decode(bytes), {
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  })
  return parseConfig(decoded.rules)
}

interface Request {
  readonly principal?: string
  readonly sourceIp?: string
  readonly port?: number
  readonly path?: string
  readonly headers?: Record<string, string>
  readonly method?: string
  readonly authority?: string
}

const info = (r: Request) => {
  const headers = new Metadata()
  for (const [k, v] of Object.entries(r.headers ?? {})) headers.set(k, v)
  headers.set(":method", r.method ?? "POST")
  headers.set(":authority", r.authority ?? "echo.default.svc.cluster.local:80")
  headers.set(":path", r.path ?? "/echo.Echo/Echo")
  return {
    destinationIp: "10.0.0.5",
    destinationPort: r.port ?? 50051,
    sourceIp: r.sourceIp ?? "10.1.2.3",
    headers,
    tls: r.principal !== undefined,
    peerCertificate: r.principal === undefined ? null : { subjectaltname: `URI:${r.principal}`, subject: {} },
    urlPath: r.path ?? "/echo.Echo/Echo",
  }
}

/** Whether a gRPC server with these policies lets the request through (filters in order). */
const allows = (policies: ReadonlyArray<AuthorizationPolicyView>, r: Request): boolean =>
  rbacFilters(policies).filters.every((f) => engine(f).apply(info(r)))

/** Specs as given (the RBAC translation is under test, not the schema's rules). */
const policy = (name: string, spec: unknown, namespace = "default") =>
  authorizationPolicyView({ name, namespace }, spec as AuthorizationPolicySpec)

const SLEEP = "spiffe://cluster.local/ns/default/sa/sleep"
const PROD = "spiffe://cluster.local/ns/prod/sa/api"

describe("RBAC filters", () => {
  it("no policy: no filter", () => {
    expect(rbacFilters([]).filters).toEqual([])
    expect(allows([], {})).toBe(true)
  })

  it("DENY before ALLOW; the DENY filter denies what it matches", () => {
    const deny = policy("deny", { action: "DENY", rules: [{ from: [{ source: { principals: ["*/sa/sleep"] } }] }] })
    const allowAll = policy("allow", { rules: [{}] })
    const { filters } = rbacFilters([allowAll, deny])
    expect(filters.map((f) => (f as J).name)).toEqual([RBAC_DENY_FILTER, RBAC_ALLOW_FILTER])
    expect((filters[0] as J).typed_config.rules.action).toBe("DENY")
    expect(allows([allowAll, deny], { principal: SLEEP })).toBe(false)
    expect(allows([allowAll, deny], { principal: PROD })).toBe(true)
  })

  it("an ALLOW policy without rules denies everything; rules: [{}] allows everything", () => {
    expect(allows([policy("none", { action: "ALLOW" })], { principal: SLEEP })).toBe(false)
    expect(allows([policy("all", { rules: [{}] })], {})).toBe(true)
  })

  it("any ALLOW policy's rule suffices", () => {
    const a = policy("a", { rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/sleep"] } }] }] })
    const b = policy("b", { rules: [{ from: [{ source: { namespaces: ["prod"] } }] }] })
    expect(allows([a, b], { principal: SLEEP })).toBe(true)
    expect(allows([a, b], { principal: PROD })).toBe(true)
    expect(allows([a, b], { principal: "spiffe://cluster.local/ns/other/sa/x" })).toBe(false)
    expect(allows([a, b], {})).toBe(false)
  })

  it("principals: exact (spiffe:// added), prefix*, *suffix, * (any authenticated); notPrincipals", () => {
    const allow = (values: ReadonlyArray<string>, not: ReadonlyArray<string> = []) => [
      policy("p", {
        rules: [{ from: [{ source: { principals: values, ...(not.length > 0 ? { notPrincipals: not } : {}) } }] }],
      }),
    ]
    expect(allows(allow(["cluster.local/ns/default/sa/sleep"]), { principal: SLEEP })).toBe(true)
    expect(allows(allow(["cluster.local/ns/default/sa/sleep"]), { principal: PROD })).toBe(false)
    expect(allows(allow(["cluster.local/ns/prod/*"]), { principal: PROD })).toBe(true)
    expect(allows(allow(["cluster.local/ns/prod/*"]), { principal: SLEEP })).toBe(false)
    expect(allows(allow(["*/sa/api"]), { principal: PROD })).toBe(true)
    expect(allows(allow(["*"]), { principal: SLEEP })).toBe(true)
    expect(allows(allow(["*"]), {})).toBe(false)
    const notProd = [policy("p", { rules: [{ from: [{ source: { notPrincipals: ["cluster.local/ns/prod/*"] } }] }] })]
    expect(allows(notProd, { principal: SLEEP })).toBe(true)
    expect(allows(notProd, { principal: PROD })).toBe(false)
  })

  it("namespaces and notNamespaces match the namespace of the SPIFFE id; regex characters are literal", () => {
    const ns = (spec: unknown) => [policy("n", { rules: [{ from: [{ source: spec }] }] })]
    expect(allows(ns({ namespaces: ["prod"] }), { principal: PROD })).toBe(true)
    expect(allows(ns({ namespaces: ["prod"] }), { principal: SLEEP })).toBe(false)
    expect(allows(ns({ namespaces: ["pro*"] }), { principal: PROD })).toBe(true)
    expect(allows(ns({ namespaces: ["*od"] }), { principal: PROD })).toBe(true)
    expect(allows(ns({ namespaces: ["*"] }), { principal: PROD })).toBe(true)
    expect(allows(ns({ namespaces: ["*"] }), {})).toBe(false)
    expect(allows(ns({ namespaces: ["pr.d"] }), { principal: PROD })).toBe(false)
    expect(allows(ns({ notNamespaces: ["prod"] }), { principal: SLEEP })).toBe(true)
    expect(allows(ns({ notNamespaces: ["prod"] }), { principal: PROD })).toBe(false)
  })

  it("serviceAccounts are <namespace>/<name>", () => {
    const p = [policy("s", { rules: [{ from: [{ source: { serviceAccounts: ["prod/api"] } }] }] })]
    expect(allows(p, { principal: PROD })).toBe(true)
    expect(allows(p, { principal: SLEEP })).toBe(false)
  })

  it("ipBlocks, remoteIpBlocks and notIpBlocks (CIDR or address)", () => {
    const ip = (spec: unknown) => [policy("i", { rules: [{ from: [{ source: spec }] }] })]
    expect(allows(ip({ ipBlocks: ["10.1.0.0/16"] }), { sourceIp: "10.1.2.3" })).toBe(true)
    expect(allows(ip({ ipBlocks: ["10.1.0.0/16"] }), { sourceIp: "10.2.2.3" })).toBe(false)
    expect(allows(ip({ ipBlocks: ["10.1.2.3"] }), { sourceIp: "10.1.2.3" })).toBe(true)
    expect(allows(ip({ remoteIpBlocks: ["10.0.0.0/8"] }), { sourceIp: "10.1.2.3" })).toBe(true)
    expect(allows(ip({ notIpBlocks: ["10.0.0.0/8"] }), { sourceIp: "10.1.2.3" })).toBe(false)
    expect(allows(ip({ ipBlocks: ["::1/128"] }), { sourceIp: "::1" })).toBe(true)
  })

  it("fields of one source AND, values OR, from entries OR", () => {
    const p = [
      policy("f", {
        rules: [
          {
            from: [
              { source: { namespaces: ["prod"], ipBlocks: ["10.1.0.0/16"] } },
              { source: { principals: ["cluster.local/ns/default/sa/sleep"] } },
            ],
          },
        ],
      }),
    ]
    expect(allows(p, { principal: PROD, sourceIp: "10.1.0.1" })).toBe(true)
    expect(allows(p, { principal: PROD, sourceIp: "10.9.0.1" })).toBe(false)
    expect(allows(p, { principal: SLEEP, sourceIp: "10.9.0.1" })).toBe(true)
  })

  it("operations: paths (exact, prefix*, *suffix), notPaths, methods (always POST), ports", () => {
    const op = (operation: unknown) => [policy("o", { rules: [{ to: [{ operation }] }] })]
    expect(allows(op({ paths: ["/echo.Echo/Echo"] }), {})).toBe(true)
    expect(allows(op({ paths: ["/echo.Echo/Other"] }), {})).toBe(false)
    expect(allows(op({ paths: ["/echo.Echo/*"] }), {})).toBe(true)
    expect(allows(op({ paths: ["*/Echo"] }), {})).toBe(true)
    expect(allows(op({ notPaths: ["/echo.Echo/*"] }), {})).toBe(false)
    expect(allows(op({ methods: ["POST"] }), {})).toBe(true)
    expect(allows(op({ methods: ["GET"] }), {})).toBe(false)
    expect(allows(op({ ports: ["50051"] }), { port: 50051 })).toBe(true)
    expect(allows(op({ ports: ["50051"] }), { port: 8080 })).toBe(false)
    expect(allows(op({ notPorts: ["8080"] }), { port: 50051 })).toBe(true)
    expect(allows(op({ hosts: ["echo.default.svc.cluster.local*"] }), {})).toBe(true)
    expect(allows(op({ hosts: ["other*"] }), {})).toBe(false)
  })

  it("when: request.headers, source.principal, source.namespace, source.ip, destination.port; notValues", () => {
    const when = (c: unknown) => [policy("w", { rules: [{ when: [c] }] })]
    expect(
      allows(when({ key: "request.headers[x-user]", values: ["alice"] }), { headers: { "x-user": "alice" } }),
    ).toBe(true)
    expect(allows(when({ key: "request.headers[X-User]", values: ["alice"] }), { headers: { "x-user": "bob" } })).toBe(
      false,
    )
    expect(allows(when({ key: "request.headers[x-user]", values: ["*"] }), { headers: { "x-user": "bob" } })).toBe(true)
    expect(allows(when({ key: "request.headers[x-user]", values: ["*"] }), {})).toBe(false)
    expect(allows(when({ key: "request.headers[x-user]", notValues: ["bob"] }), { headers: { "x-user": "al" } })).toBe(
      true,
    )
    expect(
      allows(when({ key: "source.principal", values: ["cluster.local/ns/prod/sa/api"] }), { principal: PROD }),
    ).toBe(true)
    expect(allows(when({ key: "source.namespace", values: ["default"] }), { principal: PROD })).toBe(false)
    expect(allows(when({ key: "source.ip", values: ["10.1.0.0/16"] }), { sourceIp: "10.1.0.7" })).toBe(true)
    expect(allows(when({ key: "destination.port", values: ["50051"] }), { port: 50051 })).toBe(true)
    expect(allows(when({ key: "destination.port", notValues: ["50051"] }), { port: 50051 })).toBe(false)
  })

  it("unsupported in ALLOW: the rule matches nothing (other rules still do), with a warning", () => {
    const p = policy("u", {
      rules: [
        { from: [{ source: { requestPrincipals: ["issuer/sub"] } }] },
        { when: [{ key: "request.auth.claims[group]", values: ["admin"] }] },
        { to: [{ operation: { paths: ["/echo.Echo/Open"] } }] },
      ],
    })
    const { warnings } = rbacFilters([p])
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(/default\/u rule 0: requestPrincipals.*matches nothing/)
    expect(warnings[1]).toMatch(/rule 1: condition request\.auth\.claims\[group\]/)
    expect(allows([p], { principal: SLEEP })).toBe(false)
    expect(allows([p], { path: "/echo.Echo/Open" })).toBe(true)
  })

  it("unsupported in DENY: the condition is dropped, so the rule denies more (fail closed)", () => {
    const p = policy("d", {
      action: "DENY",
      rules: [
        { to: [{ operation: { paths: ["/echo.Echo/Admin"] } }], when: [{ key: "connection.sni", values: ["x"] }] },
      ],
    })
    expect(rbacFilters([p]).warnings[0]).toMatch(/denies more/)
    expect(allows([p], { path: "/echo.Echo/Admin" })).toBe(false)
    expect(allows([p], { path: "/echo.Echo/Echo" })).toBe(true)
  })

  it("bad values (invalid CIDR, port, service account) make the rule unsupported instead of throwing", () => {
    for (const source of [{ ipBlocks: ["not-an-ip"] }, { serviceAccounts: ["no-slash"] }]) {
      const p = policy("b", { rules: [{ from: [{ source }] }] })
      expect(rbacFilters([p]).warnings).toHaveLength(1)
      expect(allows([p], { principal: SLEEP })).toBe(false)
    }
    const port = policy("b", { rules: [{ to: [{ operation: { ports: ["99999"] } }] }] })
    expect(rbacFilters([port]).warnings).toHaveLength(1)
  })

  it("AUDIT and CUSTOM are skipped with a warning", () => {
    const audit = policy("a", { action: "AUDIT", rules: [{}] })
    const custom = policy("c", { action: "CUSTOM", provider: { name: "ext" }, rules: [{}] })
    const out = rbacFilters([audit, custom])
    expect(out.filters).toEqual([])
    expect(out.warnings).toEqual([
      "AuthorizationPolicy default/a: action AUDIT is not enforced by gRPC servers, skipped",
      "AuthorizationPolicy default/c: action CUSTOM is not enforced by gRPC servers, skipped",
    ])
  })

  it("a DENY source whose only field cannot be translated denies every source (fail closed)", () => {
    const p = policy("d", { action: "DENY", rules: [{ from: [{ source: { ipBlocks: ["bad"] } }] }] })
    expect(rbacFilters([p]).filters).toHaveLength(1)
    expect(allows([p], { principal: SLEEP })).toBe(false)
  })

  it("a DENY policy with no rules keeps a filter that denies nothing", () => {
    const p = policy("d", { action: "DENY" })
    expect(rbacFilters([p]).filters).toHaveLength(1)
    expect(allows([p], { principal: SLEEP })).toBe(true)
  })
})

describe("which policies apply", () => {
  const policies = [
    policy("mesh", { rules: [{}] }, "mesh-system"),
    policy("mesh-app", { selector: { matchLabels: { app: "echo" } }, rules: [{}] }, "mesh-system"),
    policy("ns", { rules: [{}] }, "default"),
    policy("sel", { selector: { matchLabels: { app: "echo", version: "v1" } }, rules: [{}] }, "default"),
    policy("other-ns", { rules: [{}] }, "prod"),
    policy("targeted", { targetRef: { kind: "Gateway", name: "gw" }, rules: [{}] }, "default"),
  ]
  const names = (ns: string, labels: Record<string, string>) =>
    applicablePolicies(policies, "mesh-system", ns, labels).policies.map((p) => p.name)

  it("root namespace mesh-wide, namespace-wide, and selectors matching the workload's labels", () => {
    expect(names("default", { app: "echo", version: "v1" })).toEqual(["mesh", "mesh-app", "ns", "sel"])
    expect(names("default", { app: "echo" })).toEqual(["mesh", "mesh-app", "ns"])
    expect(names("prod", {})).toEqual(["mesh", "other-ns"])
    expect(names("", {})).toEqual(["mesh"])
  })

  it("targetRef policies are ignored with a warning", () => {
    const out = applicablePolicies(policies, "mesh-system", "default", {})
    expect(out.warnings).toEqual([
      "AuthorizationPolicy default/targeted: targetRef(s) do not apply to gRPC servers, ignored",
    ])
  })

  it("the view reads the decoded spec: wrong shapes never reach it, absent fields read as empty", () => {
    // What a defensive reader had to skip, the schema refuses before any view is built.
    const refused = validateDocument("policies.yaml", 0, {
      apiVersion: "security.mesh.io/v1",
      kind: "AuthorizationPolicy",
      metadata: { name: "x" },
      spec: { action: 3, selector: { matchLabels: { a: 1 } }, rules: ["nope", { from: "x", when: [{ key: 1 }] }] },
    })
    expect(refused.resource).toBeUndefined()
    const decoded = (spec: unknown) => {
      const { resource } = validateDocument("policies.yaml", 0, {
        apiVersion: "security.mesh.io/v1",
        kind: "AuthorizationPolicy",
        metadata: { name: "x" },
        spec,
      })
      if (resource === undefined || !isKind(resource, "AuthorizationPolicy")) throw new Error("not decoded")
      return resource.spec
    }
    expect(
      authorizationPolicyView(
        { name: "x", namespace: "default" },
        decoded({ rules: [{ when: [{ key: "source.ip", values: ["10.0.0.1"] }] }] }),
      ),
    ).toEqual({
      name: "x",
      namespace: "default",
      targeted: false,
      action: "ALLOW",
      rules: [{ from: [], to: [], when: [{ key: "source.ip", values: ["10.0.0.1"], notValues: [] }] }],
    })
    expect(authorizationPolicyView({ name: "y", namespace: "n" }, decoded({})).rules).toEqual([])
  })

  it("cidrRange: addresses, prefixes, and bad input", () => {
    expect(cidrRange("10.0.0.0/8")).toEqual({ address_prefix: "10.0.0.0", prefix_len: { value: 8 } })
    expect(cidrRange("10.0.0.1")).toEqual({ address_prefix: "10.0.0.1", prefix_len: { value: 32 } })
    expect(cidrRange("fd00::/64")).toEqual({ address_prefix: "fd00::", prefix_len: { value: 64 } })
    expect(cidrRange("10.0.0.0/33")).toBeUndefined()
    expect(cidrRange("host.example")).toBeUndefined()
  })
})
