/**
 * Inbound listeners for xDS-enabled gRPC servers: generated, encoded with the real protos, and
 * validated by @grpc/grpc-js-xds's own Listener validation (the one its XdsServer applies).
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { makeResourceCache } from "../../../../src/services/xds/cache/resource-cache.js"
import { proxyInfo, sotwResponse } from "../../../../src/services/xds/cache/responder.js"
import { makeNoticeLog } from "../../../../src/services/xds/grpcgen/generator-notices.js"
import { generate, type Subscription } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import { parseInboundName, proxyWorkload } from "../../../../src/services/xds/grpcgen/grpc-inbound.js"
import {
  changedHosts,
  hostOfResourceName,
  INBOUND_HOST,
  makePushContext,
  type PushContextInput,
} from "../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { diffInputs } from "../../../../src/services/xds/push/updates.js"
import { ECHO, endpoint, input, peerAuthentication, resource, service } from "../../../fixtures/xds/mesh.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely in assertions
type J = any

// The RBAC filter registers only with this set when the package loads.
process.env.GRPC_XDS_EXPERIMENTAL_RBAC = "true"
const require = createRequire(import.meta.url)
const xdsRoot = dirname(require.resolve("@grpc/grpc-js-xds/package.json"))
require(join(xdsRoot, "build/src/index.js")).register()
const { ListenerResourceType } = require(join(xdsRoot, "build/src/xds-resource-type/listener-resource-type.js"))

const codec = loadXdsProtos().codec
const NAME = "xds.mesh.io/grpc/lds/inbound/0.0.0.0:50051"
const DOWNSTREAM = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"

const authorizationPolicy = (name: string, spec: unknown, namespace = "default") => ({
  ...resource("AuthorizationPolicy", name, spec, namespace),
  group: "security.mesh.io",
})

const mesh = (extra: Partial<PushContextInput> = {}): PushContextInput => ({
  ...input({ services: [service(ECHO, [80])], endpoints: [endpoint(ECHO, "10.0.0.1", 50051)] }),
  authorizationPolicies: [],
  ...extra,
})

const sub = (
  names: ReadonlyArray<string>,
  namespace = "default",
  labels: Record<string, string> = {},
): Subscription => ({
  wildcard: false,
  names,
  workload: { namespace, labels },
})

/** One server's notice log, fed what each generation returns (as the responder does). */
const notices = makeNoticeLog()

/** Generates, encodes, and has grpc-js-xds validate the listener; returns the decoded object. */
const listener = (extra: Partial<PushContextInput>, s: Subscription = sub([NAME])): J => {
  const generated = generate(makePushContext(mesh(extra)), TypeUrl.Listener, s)
  notices.report(generated.warnings)
  const specs = generated.resources
  expect(specs).toHaveLength(1)
  const bytes = codec.encode(TypeUrl.Listener, specs[0]!.build())
  const validated = ListenerResourceType.get().decode(
    { bootstrap: { certificateProviders: { default: {} } } },
    { type_url: TypeUrl.Listener, value: Buffer.from(bytes) },
  )
  expect(validated.error).toBeUndefined()
  return codec.decode(TypeUrl.Listener, bytes)
}

const hcm = (l: J) => l.filter_chains[0].filters[0].typed_config
const strict = (namespace = "mesh-system", spec: unknown = { mtls: { mode: "STRICT" } }) =>
  peerAuthentication("strict", spec, namespace)

describe("inbound listeners for gRPC servers", () => {
  it("PERMISSIVE (no policy): plaintext, address from the name, inline non-forwarding route, router only", () => {
    const l = listener({})
    expect(l.name).toBe(NAME)
    expect(l.address.socket_address).toMatchObject({ address: "0.0.0.0", port_value: 50051 })
    expect(l.filter_chains).toHaveLength(1)
    expect(l.filter_chains[0].transport_socket).toBeUndefined()
    const h = hcm(l)
    expect(h.route_config.virtual_hosts).toMatchObject([
      {
        name: "inbound|50051",
        domains: ["*"],
        routes: [{ name: "default", match: { prefix: "/" }, non_forwarding_action: {} }],
      },
    ])
    expect(h.http_filters.map((f: J) => f.name)).toEqual(["envoy.filters.http.router"])
  })

  it("STRICT: DownstreamTlsContext requiring a client certificate from the `default` provider", () => {
    const l = listener({ peerAuthentications: [strict()] })
    const ts = l.filter_chains[0].transport_socket
    expect(ts.name).toBe("envoy.transport_sockets.tls")
    expect(ts.typed_config["@type"]).toBe(DOWNSTREAM)
    expect(ts.typed_config.require_client_certificate).toEqual({ value: true })
    expect(ts.typed_config.ocsp_staple_policy).toBe("LENIENT_STAPLING")
    const common = ts.typed_config.common_tls_context
    expect(common.tls_certificate_provider_instance).toEqual({ instance_name: "default", certificate_name: "default" })
    expect(common.combined_validation_context.default_validation_context.ca_certificate_provider_instance).toEqual({
      instance_name: "default",
      certificate_name: "ROOTCA",
    })
    expect(common.tls_params).toBeUndefined()
  })

  it("the mode follows the server's namespace, labels and port (port-level overrides)", () => {
    const nsStrict = { peerAuthentications: [strict("default")] }
    expect(listener(nsStrict).filter_chains[0].transport_socket).toBeDefined()
    expect(listener(nsStrict, sub([NAME], "prod")).filter_chains[0].transport_socket).toBeUndefined()
    const byPort = {
      peerAuthentications: [
        strict("default"),
        peerAuthentication("echo", {
          selector: { matchLabels: { app: "echo" } },
          portLevelMtls: { "50051": { mode: "DISABLE" } },
        }),
      ],
    }
    expect(listener(byPort, sub([NAME], "default", { app: "echo" })).filter_chains[0].transport_socket).toBeUndefined()
    expect(listener(byPort, sub([NAME], "default", { app: "other" })).filter_chains[0].transport_socket).toBeDefined()
    const other = "xds.mesh.io/grpc/lds/inbound/0.0.0.0:8080"
    expect(listener(byPort, sub([other], "default", { app: "echo" })).filter_chains[0].transport_socket).toBeDefined()
    expect(
      listener({ peerAuthentications: [strict("mesh-system", { mtls: { mode: "DISABLE" } })] }).filter_chains[0],
    ).not.toHaveProperty("transport_socket")
  })

  it("RBAC filters of the applicable AuthorizationPolicies, DENY before ALLOW, router last", () => {
    const l = listener({
      authorizationPolicies: [
        authorizationPolicy("allow", { rules: [{}] }),
        authorizationPolicy("deny", {
          action: "DENY",
          rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/sleep"] } }] }],
        }),
        authorizationPolicy("elsewhere", { action: "DENY", rules: [{}] }, "prod"),
      ],
    })
    const filters = hcm(l).http_filters
    expect(filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.http.rbac.deny",
      "envoy.filters.http.rbac.allow",
      "envoy.filters.http.router",
    ])
    expect(filters[0].typed_config.rules.policies["ns[default]-policy[deny]-rule[0]"].principals[0]).toMatchObject({
      authenticated: { principal_name: { exact: "spiffe://cluster.local/ns/default/sa/sleep" } },
    })
  })

  it("an ALLOW policy without rules yields an ALLOW filter with no policies (deny all) that validates", () => {
    const l = listener({ authorizationPolicies: [authorizationPolicy("nothing", {})] })
    expect(hcm(l).http_filters[0].typed_config.rules).toEqual({ action: "ALLOW" })
  })

  it("IPv6 addresses, the upstream prefix, and names that are not ip:port", () => {
    expect(parseInboundName("xds.mesh.io/grpc/lds/inbound/[::]:50051")).toEqual({ ip: "::", port: 50051 })
    expect(parseInboundName("xds.istio.io/grpc/lds/inbound/10.0.0.1:8080")).toEqual({ ip: "10.0.0.1", port: 8080 })
    for (const bad of [
      "xds.mesh.io/grpc/lds/inbound/0.0.0.0",
      "xds.mesh.io/grpc/lds/inbound/0.0.0.0:0",
      "xds.mesh.io/grpc/lds/inbound/0.0.0.0:70000",
      "xds.mesh.io/grpc/lds/inbound/echo:80",
      "xds.mesh.io/grpc/lds/inbound/",
      "other/0.0.0.0:80",
    ]) {
      expect(parseInboundName(bad)).toBeUndefined()
    }
    expect(
      generate(makePushContext(mesh()), TypeUrl.Listener, sub(["xds.mesh.io/grpc/lds/inbound/x:1"])).resources,
    ).toEqual([])
    const v6 = listener({}, sub(["xds.mesh.io/grpc/lds/inbound/[::]:50051"]))
    expect(v6.address.socket_address).toMatchObject({ address: "::", port_value: 50051 })
  })

  it("a wildcard request gets client listeners only; a named one gets both kinds", () => {
    const push = makePushContext(mesh())
    const names = (s: Subscription) => generate(push, TypeUrl.Listener, s).resources.map((r) => r.name)
    expect(names({ wildcard: true, names: [] })).toEqual([`${ECHO}:80`])
    expect(names(sub([`${ECHO}:80`, NAME]))).toEqual([`${ECHO}:80`, NAME])
  })

  it("skipped policies are reported once, not on every generation", () => {
    notices.take()
    const extra = { authorizationPolicies: [authorizationPolicy("audit-once", { action: "AUDIT", rules: [{}] })] }
    listener(extra)
    listener(extra)
    const reports = notices.take().filter((w) => w.message.includes("default/audit-once: action AUDIT"))
    expect(reports).toHaveLength(1)
    expect(reports[0]).toMatchObject({ level: "warning", scope: "authorization" })
    expect(notices.take()).toEqual([])
  })

  it("without a known workload only mesh-wide policies apply", () => {
    const push = makePushContext(mesh({ peerAuthentications: [strict("default")] }))
    const [spec] = generate(push, TypeUrl.Listener, { wildcard: false, names: [NAME] }).resources
    expect((spec!.build() as J).filter_chains[0].transport_socket).toBeUndefined()
  })
})

describe("encode once for inbound listeners", () => {
  const policies = {
    peerAuthentications: [strict("default")],
    authorizationPolicies: [
      authorizationPolicy("v1-only", { selector: { matchLabels: { version: "v1" } }, rules: [{}] }),
    ],
  }

  it("servers selecting the same policies share bytes; different ones do not collide", () => {
    const push = makePushContext(mesh(policies))
    const cache = makeResourceCache(codec)
    const resolve = (labels: Record<string, string>, namespace = "default") =>
      cache.resolve(TypeUrl.Listener, generate(push, TypeUrl.Listener, sub([NAME], namespace, labels)).resources)[0]!
    const a = resolve({ app: "echo", version: "v1" })
    const b = resolve({ app: "other", version: "v1" })
    expect(b).toBe(a)
    const c = resolve({ app: "echo", version: "v2" })
    expect(c.version).not.toBe(a.version)
    const d = resolve({ version: "v1" }, "prod")
    expect(d.version).not.toBe(a.version)
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 3 })
  })

  it("the responder passes the node's NAMESPACE and LABELS to the generator", () => {
    const push = makePushContext(mesh(policies))
    const cache = makeResourceCache(codec)
    const node = (ns: string) => ({
      id: `sidecar~10.0.0.1~echo-1.${ns}~${ns}.svc.cluster.local`,
      metadata: {
        fields: {
          GENERATOR: { stringValue: "grpc" },
          NAMESPACE: { stringValue: ns },
          LABELS: { structValue: { fields: { version: { stringValue: "v1" } } } },
        },
      },
    })
    const watch = { typeUrl: TypeUrl.Listener, names: [NAME], wildcard: false }
    const decoded = (ns: string) =>
      codec.decode(
        TypeUrl.Listener,
        sotwResponse(push, cache, watch, "n", proxyInfo(node(ns) as never)).response.resources[0]!.value,
      ) as J
    const inDefault = decoded("default")
    expect(inDefault.filter_chains[0].transport_socket).toBeDefined()
    expect(hcm(inDefault).http_filters).toHaveLength(2)
    const inProd = decoded("prod")
    expect(inProd.filter_chains[0].transport_socket).toBeUndefined()
    expect(hcm(inProd).http_filters).toHaveLength(1)
  })

  it("proxyWorkload: metadata first, else the namespace of the node id", () => {
    expect(proxyWorkload("sidecar~1.2.3.4~pod.ns1~ns1.svc.cluster.local", {})).toEqual({ namespace: "ns1", labels: {} })
    expect(proxyWorkload("x", { NAMESPACE: "a", LABELS: { app: "e", n: 1 } })).toEqual({
      namespace: "a",
      labels: { app: "e" },
    })
    expect(proxyWorkload("", { LABELS: "bad" })).toEqual({ namespace: "", labels: {} })
  })
})

describe("pushes reach inbound listeners", () => {
  it("an AuthorizationPolicy change is a full push that changes the inbound pseudo-host only", () => {
    const before = mesh()
    const after = mesh({ authorizationPolicies: [authorizationPolicy("deny", { action: "DENY", rules: [{}] })] })
    const request = diffInputs(before, after, 0)
    expect(request?.full).toBe(true)
    expect([...(request?.configsUpdated ?? [])]).toEqual(["AuthorizationPolicy/default/deny"])
    const p1 = makePushContext(before)
    const p2 = makePushContext(after)
    expect([...(changedHosts(p1, p2) ?? [])]).toEqual([INBOUND_HOST])
    expect(hostOfResourceName(p2, NAME)).toBe(INBOUND_HOST)
    // unchanged policies handed over as new arrays change nothing
    expect([
      ...(changedHosts(p2, makePushContext({ ...after, authorizationPolicies: [...after.authorizationPolicies!] })) ??
        []),
    ]).toEqual([])
  })

  it("a PeerAuthentication change reaches every watch, inbound listeners included", () => {
    const p1 = makePushContext(mesh())
    const p2 = makePushContext(mesh({ peerAuthentications: [strict()] }))
    expect(changedHosts(p1, p2)).toBeUndefined()
  })
})
