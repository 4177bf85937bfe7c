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
})
