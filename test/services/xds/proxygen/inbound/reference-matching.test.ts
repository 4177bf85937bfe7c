/**
 * Which inbound chain a connection reaches, per port protocol and mTLS mode, as the reference
 * mesh decides it (issue 44): clients are mesh peers (mTLS with the mesh's ALPN), plaintext
 * clients, and clients speaking their own TLS to the workload (an HTTPS client outside the mesh).
 * Every case walks the generated listener with the test evaluator, as the proxy would.
 */
import { describe, expect, it } from "vitest"
import type { PushContext } from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateInboundListener } from "../../../../../src/services/xds/proxygen/inbound/index.js"
import { resource } from "../../../../fixtures/xds/mesh.js"
import { type InboundInput, inbound } from "../../../../support/proxygen/evaluator.js"
import { conformanceProblems, ep, push, REVIEWS, security, sidecar, svc } from "./fixtures.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const PEER = "spiffe://cluster.local/ns/default/sa/productpage"

/** reviews: HTTP 9080 → 8080, TCP 3306 → 3306, auto 7000 → 8000 (no service declares 7777). */
const threePortsInput = () => ({
  services: [
    svc(REVIEWS, [
      { name: "http", port: 9080, protocol: "HTTP" },
      { name: "tcp", port: 3306, protocol: "TCP" },
      { name: "auto", port: 7000, protocol: "UNSUPPORTED" },
    ]),
  ],
  endpoints: [
    ep(REVIEWS, "10.0.0.5", "http", 8080),
    ep(REVIEWS, "10.0.0.5", "tcp", 3306),
    ep(REVIEWS, "10.0.0.5", "auto", 8000),
  ],
})
const threePorts = (extra: Parameters<typeof push>[0] = {}, options?: PushContext["options"]): PushContext =>
  push({ ...threePortsInput(), ...extra }, {}, options)

const build = (p: PushContext): J => {
  const generated = generateInboundListener(p, sidecar())
  const listener = generated.resources[0]!.build()
  expect(conformanceProblems(TypeUrl.Listener, [listener])).toEqual([])
  return listener
}

type Client = Omit<InboundInput, "listeners" | "port">

/** A mesh peer whose outbound side detected HTTP. */
const meshHttp: Client = { tls: true, principal: PEER, alpn: ["istio-http/1.1"], path: "/" }
/** A mesh peer whose outbound side sent TCP (or could not tell). */
const meshTcp: Client = { tls: true, principal: PEER, alpn: ["istio-peer-exchange", "istio"] }
/** An HTTPS client outside the mesh: its own TLS, ALPN h2/http1.1, no client certificate. */
const ownTls: Client = { tls: true, ownTls: true, alpn: ["h2", "http/1.1"] }
const plainHttp: Client = { tls: false, path: "/" }
const plainTcp: Client = { tls: false }

const at = (l: J, port: number, client: Client) => inbound({ listeners: [l], port, ...client })

const pa = (spec: unknown) => security("PeerAuthentication", "default", spec, "mesh-system")

describe("inbound chains as the reference matches them (issue 44)", () => {
  it("PERMISSIVE: a plain TLS client is passed through as TCP on auto, TCP and undeclared ports, never given to the mTLS chain", () => {
    const l = build(threePorts())
    for (const port of [8000, 3306]) {
      const r = at(l, port, ownTls) as J
      expect(r).toMatchObject({ kind: "allowed", cluster: `inbound|${port}||` })
      expect(r.chain.transport_socket).toBeUndefined()
    }
    const passthrough = at(l, 7777, ownTls) as J
    expect(passthrough.kind).toBe("allowed")
    expect(passthrough.chain.transport_socket).toBeUndefined()
    // A port declared HTTP has no chain for TLS that is not the mesh's.
    expect(at(l, 8080, ownTls).kind).toBe("no-chain")
    // No mTLS chain names the application's own protocols.
    for (const c of l.filter_chains)
      if (c.transport_socket !== undefined)
        expect(c.filter_chain_match.application_protocols ?? []).not.toEqual(
          expect.arrayContaining([expect.stringMatching(/^(h2|http\/1\.1)$/)]),
        )
    // Mesh peers still reach the mTLS chains, whatever their outbound side detected.
    expect(at(l, 8080, meshHttp)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(at(l, 8080, meshTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(at(l, 8000, meshHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(at(l, 8000, meshTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
    expect(at(l, 3306, meshHttp)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(at(l, 3306, meshTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    // And plaintext clients the plaintext chains.
    expect(at(l, 8080, plainHttp)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(at(l, 8000, plainHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(at(l, 8000, plainTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
  })

  it("PERMISSIVE auto ports take HTTP/1.0 as HTTP only when the mesh accepts HTTP/1.0", () => {
    const http10: Client = { tls: false, alpn: ["http/1.0"], path: "/" }
    const l = build(threePorts())
    const r = at(l, 8000, http10) as J
    expect(r.kind).toBe("allowed")
    expect(r.route).toBeUndefined()
    expect(r.cluster).toBe("inbound|8000||")
    const options = threePorts().options
    const with10 = build(threePorts({}, { ...options, proxy: { ...options.proxy, http10: true } }))
    expect(at(with10, 8000, http10)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
  })

  it("STRICT: TLS that is not the mesh's reaches the mTLS chain and fails its handshake; plaintext finds no chain", () => {
    const l = build(threePorts({ peerAuthentications: [pa({ mtls: { mode: "STRICT" } })] }))
    for (const port of [8080, 3306, 8000]) expect(at(l, port, meshTcp).kind).toBe("allowed")
    expect(at(l, 8000, meshHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(at(l, 7777, meshHttp)).toMatchObject({ kind: "allowed" })
    for (const port of [8080, 3306, 8000, 7777]) {
      const r = at(l, port, ownTls) as J
      expect(r).toMatchObject({ kind: "handshake-failed", reason: "no client certificate" })
      expect(r.chain.transport_socket).toBeDefined()
      expect(at(l, port, plainHttp).kind).toBe("no-chain")
      expect(at(l, port, plainTcp).kind).toBe("no-chain")
    }
    // Declared ports have a single chain with no ALPN condition.
    for (const port of [8080, 3306]) {
      const own = l.filter_chains.filter((c: J) => c.filter_chain_match.destination_port?.value === port)
      expect(own).toHaveLength(1)
      expect(own[0].filter_chain_match).toEqual({ destination_port: { value: port }, transport_protocol: "tls" })
    }
    // Nothing left to sniff.
    expect(l.listener_filters.map((f: J) => f.name)).not.toContain("envoy.filters.listener.http_inspector")
  })

  it("DISABLE: TLS is not inspected, so it is passed through by TCP chains and refused by the HTTP codec", () => {
    const l = build(threePorts({ peerAuthentications: [pa({ mtls: { mode: "DISABLE" } })] }))
    expect(l.listener_filters.map((f: J) => f.name)).not.toContain("envoy.filters.listener.tls_inspector")
    expect(at(l, 8080, ownTls)).toMatchObject({ kind: "http-codec-error" })
    expect(at(l, 3306, ownTls)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(at(l, 8000, ownTls)).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
    expect(at(l, 7777, ownTls)).toMatchObject({ kind: "allowed" })
    expect(at(l, 8080, plainHttp)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(at(l, 8000, plainHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(at(l, 7777, plainHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    // A mesh peer's mTLS is not terminated anywhere.
    expect(at(l, 8080, meshHttp).kind).toBe("http-codec-error")
    expect(at(l, 3306, meshTcp)).toMatchObject({ kind: "handshake-failed", reason: "TLS to a plaintext chain" })
  })

  it("mixed modes: the TLS inspector skips exactly the DISABLE ports, the HTTP inspector the declared ones", () => {
    const workload = security("PeerAuthentication", "reviews", {
      selector: { matchLabels: { app: "reviews" } },
      mtls: { mode: "STRICT" },
      portLevelMtls: { "8080": { mode: "DISABLE" }, "3306": { mode: "PERMISSIVE" } },
    })
    const l = build(threePorts({ peerAuthentications: [workload] }))
    const byName = Object.fromEntries(l.listener_filters.map((f: J) => [f.name, f]))
    expect(byName["envoy.filters.listener.tls_inspector"].filter_disabled).toEqual({
      or_match: {
        rules: [
          { destination_port_range: { start: 8080, end: 8081 } },
          { destination_port_range: { start: 15006, end: 15007 } },
        ],
      },
    })
    // STRICT auto and passthrough chains match no plaintext: nothing needs sniffing.
    expect(byName["envoy.filters.listener.http_inspector"]).toBeUndefined()
    expect(at(l, 8080, ownTls)).toMatchObject({ kind: "http-codec-error" })
    expect(at(l, 8080, plainHttp)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(at(l, 3306, ownTls)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(at(l, 3306, plainTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(at(l, 8000, ownTls)).toMatchObject({ kind: "handshake-failed", reason: "no client certificate" })
    expect(at(l, 7777, plainTcp).kind).toBe("no-chain")

    // PERMISSIVE auto port under a STRICT workload: the HTTP inspector runs for that port only.
    const auto = security("PeerAuthentication", "reviews", {
      selector: { matchLabels: { app: "reviews" } },
      mtls: { mode: "STRICT" },
      portLevelMtls: { "8000": { mode: "PERMISSIVE" } },
    })
    const l2 = build(threePorts({ peerAuthentications: [auto] }))
    const http = l2.listener_filters.find((f: J) => f.name === "envoy.filters.listener.http_inspector")
    expect(http.filter_disabled).toEqual({ not_match: { destination_port_range: { start: 8000, end: 8001 } } })
    expect(at(l2, 8000, plainHttp)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(at(l2, 8000, plainTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
  })

  it("names chains and the passthrough cluster as the reference does, so name-matching EnvoyFilters and tools work", () => {
    const l = build(threePorts())
    const reached = (port: number, client: Client) => (at(l, port, client) as J).chain.name
    expect(reached(8080, meshHttp)).toBe("0.0.0.0_8080")
    expect(reached(8080, plainHttp)).toBe("0.0.0.0_8080")
    expect(reached(3306, ownTls)).toBe("0.0.0.0_3306")
    expect(reached(8000, plainTcp)).toBe("0.0.0.0_8000")
    expect(reached(7777, meshHttp)).toBe("virtualInbound-catchall-http")
    expect(reached(7777, plainHttp)).toBe("virtualInbound-catchall-http")
    expect(reached(7777, meshTcp)).toBe("virtualInbound")
    expect(reached(7777, ownTls)).toBe("virtualInbound")
    expect(reached(7777, plainTcp)).toBe("virtualInbound")
    expect(reached(15006, plainTcp)).toBe("virtualInbound-blackhole")
    for (const client of [meshHttp, plainHttp, meshTcp, plainTcp])
      expect(at(l, 7777, client)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    // The HTTP connection manager keeps its stat prefix.
    expect((at(l, 8080, plainHttp) as J).chain.filters[0].typed_config.stat_prefix).toBe("inbound_0.0.0.0_8080")
  })

  it("a port-level mode for a port no service declares gets passthrough chains of its own", () => {
    const workload = security("PeerAuthentication", "reviews", {
      selector: { matchLabels: { app: "reviews" } },
      mtls: { mode: "STRICT" },
      portLevelMtls: { "7777": { mode: "DISABLE" }, "3306": { mode: "DISABLE" } },
    })
    const l = build(threePorts({ peerAuthentications: [workload] }))
    expect(at(l, 7777, plainHttp)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    expect(at(l, 7777, plainTcp)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    expect((at(l, 7777, plainTcp) as J).chain.name).toBe("virtualInbound")
    // Other undeclared ports keep the workload's STRICT.
    expect(at(l, 7778, plainTcp).kind).toBe("no-chain")
    expect(at(l, 7778, meshTcp)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    // A declared port's level setting shapes its own chains, not a passthrough.
    expect(at(l, 3306, plainTcp)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
  })

  describe("Sidecar ingress TLS", () => {
    const ingress = (protocol: string, tls: Record<string, unknown>) =>
      resource("Sidecar", "reviews", {
        workloadSelector: { labels: { app: "reviews" } },
        ingress: [{ port: { number: 9443, protocol, name: "tls" }, defaultEndpoint: "127.0.0.1:8443", tls }],
      })
    const simple = { mode: "SIMPLE", serverCertificate: "/etc/certs/cert.pem", privateKey: "/etc/certs/key.pem" }
    const mutual = { ...simple, mode: "MUTUAL", caCertificates: "/etc/certs/ca.pem" }
    const portMode = (mode: string) =>
      security("PeerAuthentication", "reviews", {
        selector: { matchLabels: { app: "reviews" } },
        mtls: { mode: "STRICT" },
        portLevelMtls: { "9443": { mode } },
      })
    const withSidecar = (sc: ReturnType<typeof ingress>, mode: string) =>
      build(push({ peerAuthentications: [portMode(mode)] }, { sidecars: [sc] }))
    const https: Client = { tls: true, alpn: ["h2", "http/1.1"], path: "/" }

    it("HTTPS with the port's mTLS disabled: the workload's TLS, then an HTTP connection manager", () => {
      const l = withSidecar(ingress("HTTPS", simple), "DISABLE")
      const r = at(l, 9443, https) as J
      expect(r).toMatchObject({ kind: "allowed", cluster: "inbound|9443||" })
      // Named by the proxy's address, as the reference names Sidecar ingress chains.
      expect(r.chain.name).toBe("10.0.0.5_9443")
      expect(r.route).toMatchObject({
        kind: "route",
        virtualHost: { name: "inbound|http|9443" },
        route: { name: "default" },
      })
      const tls = r.chain.transport_socket.typed_config
      expect(tls.require_client_certificate).toEqual({ value: false })
      expect(tls.common_tls_context.alpn_protocols).toEqual(["h2", "http/1.1"])
      // The files go through the agent's SDS (rotated), never inline in the listener.
      expect(tls.common_tls_context.tls_certificates).toBeUndefined()
      expect(tls.common_tls_context.tls_certificate_sds_secret_configs.map((c: J) => c.name)).toEqual([
        "file-cert:/etc/certs/cert.pem~/etc/certs/key.pem",
      ])
      expect(at(l, 9443, plainHttp).kind).toBe("no-chain")
    })

    it("TLS MUTUAL with the port's mTLS disabled: a TCP proxy behind the workload's mutual TLS", () => {
      const l = withSidecar(ingress("TLS", mutual), "DISABLE")
      expect(at(l, 9443, { tls: true, alpn: ["h2"] })).toMatchObject({
        kind: "handshake-failed",
        reason: "no client certificate",
      })
      const r = at(l, 9443, { tls: true, alpn: ["h2"], principal: "spiffe://example.org/client" }) as J
      expect(r).toMatchObject({ kind: "allowed", cluster: "inbound|9443||" })
      expect(r.chain.filters.at(-1).name).toBe("envoy.filters.network.tcp_proxy")
      // The client CA is the agent's file-root: secret, as a Gateway's.
      const combined = r.chain.transport_socket.typed_config.common_tls_context.combined_validation_context
      expect(combined.validation_context_sds_secret_config.name).toBe("file-root:/etc/certs/ca.pem")
      expect(combined.validation_context_sds_secret_config.sds_config.api_config_source.grpc_services).toEqual([
        { envoy_grpc: { cluster_name: "sds-grpc" } },
      ])
    })

    it("HTTPS OPTIONAL_MUTUAL with the port's mTLS disabled: clients with and without a certificate reach the route", () => {
      const l = withSidecar(ingress("HTTPS", { ...mutual, mode: "OPTIONAL_MUTUAL" }), "DISABLE")
      for (const client of [https, { ...https, principal: "spiffe://example.org/client" }]) {
        const r = at(l, 9443, client) as J
        expect(r).toMatchObject({ kind: "allowed", cluster: "inbound|9443||" })
        expect(r.route).toMatchObject({ kind: "route", virtualHost: { name: "inbound|http|9443" } })
      }
      const tls = (at(l, 9443, https) as J).chain.transport_socket.typed_config
      expect(tls.require_client_certificate).toEqual({ value: false })
      expect(tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name).toBe(
        "file-root:/etc/certs/ca.pem",
      )
      expect(at(l, 9443, plainHttp).kind).toBe("no-chain")
    })

    it("with the port STRICT the mesh's mTLS replaces the workload's TLS, HTTPS served as HTTP", () => {
      const p = push({ peerAuthentications: [portMode("STRICT")] }, { sidecars: [ingress("HTTPS", simple)] })
      const generated = generateInboundListener(p, sidecar())
      expect(generated.warnings.map((w) => w.message)).toEqual([
        expect.stringContaining("field tls: applies only where a PeerAuthentication sets mTLS DISABLE on port 9443"),
      ])
      const l = build(p)
      expect(at(l, 9443, https)).toMatchObject({ kind: "handshake-failed", reason: "no client certificate" })
      const mesh = at(l, 9443, meshHttp) as J
      expect(mesh).toMatchObject({ kind: "allowed", cluster: "inbound|9443||" })
      expect(mesh.route).toMatchObject({ kind: "route", virtualHost: { name: "inbound|http|9443" } })
      expect(
        mesh.chain.transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].name,
      ).toBe("default")
    })

    it("replicas of a workload with Sidecar ingress get chains named by their own address", () => {
      const p = push({}, { sidecars: [ingress("HTTP", simple)] })
      const names = (ip: string) =>
        (generateInboundListener(p, sidecar(ip)).resources[0]!.build() as J).filter_chains
          .map((c: J) => c.name)
          .filter((n: string) => n.endsWith("_9443"))
      expect(new Set(names("10.0.0.5"))).toEqual(new Set(["10.0.0.5_9443"]))
      expect(new Set(names("10.0.0.6"))).toEqual(new Set(["10.0.0.6_9443"]))
    })
  })
})
