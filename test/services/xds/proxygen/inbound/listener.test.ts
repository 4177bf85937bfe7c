/**
 * The sidecar's virtualInbound listener: chains per port and mTLS mode, passthrough, Sidecar
 * ingress, conflicts and key sharing; every listener checked against the proxy's protos and
 * validate.rules, and traffic decided by the test evaluator.
 */
import { describe, expect, it } from "vitest"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import type { PushContext } from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import {
  generateInboundListener,
  inboundListenerConflicts,
} from "../../../../../src/services/xds/proxygen/inbound/index.js"
import type { ProxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { resource } from "../../../../fixtures/xds/mesh.js"
import { inbound } from "../../../../support/proxygen/evaluator.js"
import { conformanceProblems, ep, push, RATINGS, REVIEWS, security, sidecar, svc } from "./fixtures.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const PEER = "spiffe://cluster.local/ns/default/sa/productpage"

const build = (p: PushContext, proxy: ProxyView = sidecar()): J => {
  const generated = generateInboundListener(p, proxy)
  expect(generated.resources).toHaveLength(1)
  const listener = generated.resources[0]!.build()
  expect(conformanceProblems(TypeUrl.Listener, [listener])).toEqual([])
  return listener
}

const chains = (l: J, port?: number): ReadonlyArray<J> =>
  l.filter_chains.filter((c: J) => (port === undefined ? true : c.filter_chain_match.destination_port?.value === port))

const pa = (name: string, spec: unknown, namespace = "default") => security("PeerAuthentication", name, spec, namespace)

/** What a mesh peer (mTLS) or a plaintext client gets at `port`. */
const reach = (listener: J, port: number, tls: boolean, http = true, alpn?: ReadonlyArray<string>) =>
  inbound({
    listeners: [listener],
    port,
    tls,
    ...(tls ? { principal: PEER } : {}),
    ...(http ? { path: "/" } : {}),
    ...(alpn !== undefined ? { alpn } : {}),
  })

describe("virtualInbound", () => {
  it("listens on 15006 with the inspectors, and PERMISSIVE ports take mTLS and plaintext", () => {
    const l = build(push())
    expect(l.name).toBe("virtualInbound")
    expect(l.address.socket_address).toEqual({ address: "0.0.0.0", port_value: 15006 })
    expect(l.traffic_direction).toBe("INBOUND")
    expect(l.listener_filters.map((f: J) => f.name)).toEqual([
      "envoy.filters.listener.original_dst",
      "envoy.filters.listener.tls_inspector",
      "envoy.filters.listener.http_inspector",
    ])
    // Both ports declare their protocol: no sniffing for them (nor for the listener's own port).
    expect(l.listener_filters[2].filter_disabled).toEqual({
      or_match: {
        rules: [
          { destination_port_range: { start: 3306, end: 3307 } },
          { destination_port_range: { start: 8080, end: 8081 } },
          { destination_port_range: { start: 15006, end: 15007 } },
        ],
      },
    })
    const http = chains(l, 8080)
    // Every chain of a port carries the reference's name for it.
    expect(http.map((c) => c.name)).toEqual(["0.0.0.0_8080", "0.0.0.0_8080"])
    expect(http[0].filter_chain_match.transport_protocol).toBe("tls")
    // Only the mesh's own ALPN: a client with its own TLS (h2, http/1.1) never lands on the mTLS chain.
    expect(http[0].filter_chain_match.application_protocols).toEqual([
      "istio",
      "istio-peer-exchange",
      "istio-http/1.0",
      "istio-http/1.1",
      "istio-h2",
    ])
    const tls = http[0].transport_socket.typed_config
    expect(tls.require_client_certificate).toEqual({ value: true })
    expect(tls.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe("default")
    expect(
      tls.common_tls_context.tls_certificate_sds_secret_configs[0].sds_config.api_config_source.grpc_services[0]
        .envoy_grpc.cluster_name,
    ).toBe("sds-grpc")
    expect(tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name).toBe("ROOTCA")
    expect(tls.common_tls_context.tls_params.tls_minimum_protocol_version).toBe("TLSv1_2")
    expect(tls.common_tls_context.alpn_protocols).toEqual(["h2", "http/1.1"])
    expect(http[1].filter_chain_match.transport_protocol).toBe("raw_buffer")
    expect(http[1].transport_socket).toBeUndefined()

    expect(reach(l, 8080, true)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(reach(l, 8080, false)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(reach(l, 3306, true, false)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(reach(l, 3306, false, false)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    // The workload's own TLS on a TCP port passes through, not terminated.
    const own = inbound({ listeners: [l], port: 3306, tls: true, ownTls: true, alpn: ["h2"] })
    expect(own).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect((own as J).chain.transport_socket).toBeUndefined()
  })

  it("builds the HTTP connection manager as the reference's inbound one", () => {
    const l = build(push())
    const hcm = chains(l, 8080)[0].filters[0].typed_config
    expect(hcm.stat_prefix).toBe("inbound_0.0.0.0_8080")
    expect(hcm.forward_client_cert_details).toBe("APPEND_FORWARD")
    expect(hcm.set_current_client_cert_details).toEqual({ subject: { value: true }, dns: true, uri: true })
    const vh = hcm.route_config.virtual_hosts[0]
    expect(hcm.route_config.name).toBe("inbound|8080||")
    expect(vh.name).toBe("inbound|http|8080")
    expect(vh.domains).toEqual(["*"])
    expect(vh.routes[0].route.cluster).toBe("inbound|8080||")
    expect(vh.routes[0].route.timeout).toEqual({ seconds: "0", nanos: 0 })
    expect(vh.routes[0].decorator.operation).toBe(`${REVIEWS}:9080/*`)
    expect(hcm.http_filters.map((f: J) => f.name)).toEqual(["envoy.filters.http.router"])
    const tcp = chains(l, 3306)[0].filters
    expect(tcp.map((f: J) => f.name)).toEqual(["envoy.filters.network.tcp_proxy"])
    expect(tcp[0].typed_config).toMatchObject({ cluster: "inbound|3306||", stat_prefix: "inbound|3306||" })
  })

  it("STRICT mesh-wide: only mTLS, on service ports and passthrough", () => {
    const l = build(push({ peerAuthentications: [pa("default", { mtls: { mode: "STRICT" } }, "mesh-system")] }))
    expect(chains(l, 8080).map((c) => c.filter_chain_match.transport_protocol)).toEqual(["tls"])
    expect(reach(l, 8080, false).kind).toBe("no-chain")
    expect(reach(l, 8080, true)).toMatchObject({ kind: "allowed", cluster: "inbound|8080||" })
    expect(reach(l, 3306, false, false).kind).toBe("no-chain")
    // A port no service declares: passthrough, STRICT too.
    expect(reach(l, 7777, false).kind).toBe("no-chain")
    // (The proxy takes the first ALPN the client offers that has a chain: one ALPN here.)
    expect(reach(l, 7777, true, true, ["istio-http/1.1"])).toMatchObject({
      kind: "allowed",
      cluster: "InboundPassthroughCluster",
    })
    expect(reach(l, 7777, true, false)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    const passthrough = chains(l).filter((c) => c.filter_chain_match.destination_port === undefined)
    expect(passthrough.every((c) => c.filter_chain_match.transport_protocol === "tls")).toBe(true)
  })

  it("namespace DISABLE, workload STRICT and port-level overrides", () => {
    const namespaceDisable = pa("ns", { mtls: { mode: "DISABLE" } })
    let l = build(push({ peerAuthentications: [namespaceDisable] }))
    expect(reach(l, 8080, false)).toMatchObject({ kind: "allowed" })
    expect(chains(l, 8080).some((c) => c.transport_socket !== undefined)).toBe(false)
    expect(reach(l, 7777, false, false)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })

    const workloadStrict = pa("reviews", {
      selector: { matchLabels: { app: "reviews" } },
      mtls: { mode: "STRICT" },
      portLevelMtls: { "3306": { mode: "DISABLE" } },
    })
    l = build(push({ peerAuthentications: [namespaceDisable, workloadStrict] }))
    expect(reach(l, 8080, false).kind).toBe("no-chain")
    expect(reach(l, 8080, true)).toMatchObject({ kind: "allowed" })
    // Port-level DISABLE (keyed by the target port).
    expect(reach(l, 3306, false, false)).toMatchObject({ kind: "allowed", cluster: "inbound|3306||" })
    expect(chains(l, 3306).some((c) => c.transport_socket !== undefined)).toBe(false)
    // Another workload in the namespace keeps the namespace's DISABLE.
    const other = build(
      push({ peerAuthentications: [namespaceDisable, workloadStrict] }),
      sidecar("10.0.0.5", { app: "other" }),
    )
    expect(reach(other, 8080, false)).toMatchObject({ kind: "allowed" })
  })

  it("has a black hole for its own port and passthrough chains for undeclared ports", () => {
    const l = build(push())
    // The reference's order and names: the black hole, then the passthrough (HTTP chains the
    // catch-all, TCP ones the listener's name), then the ports.
    const names = chains(l).map((c) => c.name)
    expect(names.slice(0, 6)).toEqual([
      "virtualInbound-blackhole",
      "virtualInbound-catchall-http",
      "virtualInbound-catchall-http",
      "virtualInbound",
      "virtualInbound",
      "virtualInbound",
    ])
    expect(names.slice(6)).toEqual(["0.0.0.0_3306", "0.0.0.0_3306", "0.0.0.0_3306", "0.0.0.0_8080", "0.0.0.0_8080"])
    expect(reach(l, 15006, false, false)).toMatchObject({ kind: "allowed", cluster: "BlackHoleCluster" })
    expect(reach(l, 7777, false)).toMatchObject({ kind: "allowed", cluster: "InboundPassthroughCluster" })
    // An undeclared port with a mesh TCP peer: the TCP passthrough.
    expect(reach(l, 7777, true, false, ["istio-peer-exchange", "istio"])).toMatchObject({
      kind: "allowed",
      cluster: "InboundPassthroughCluster",
    })
  })

  it("serves auto-protocol ports with both HTTP and TCP chains and sniffs them", () => {
    const p = push({
      services: [svc(REVIEWS, [{ name: "web", port: 80, protocol: "UNSUPPORTED" }])],
      endpoints: [ep(REVIEWS, "10.0.0.5", "web", 8000)],
    })
    const l = build(p)
    // Sniffed, as is every port but the listener's own.
    expect(l.listener_filters[2].filter_disabled).toEqual({ destination_port_range: { start: 15006, end: 15007 } })
    expect(reach(l, 8000, false)).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    expect(reach(l, 8000, false, false)).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
    expect(reach(l, 8000, true, true, ["istio-http/1.1"])).toMatchObject({ kind: "allowed", route: { kind: "route" } })
    const tcpPeer = reach(l, 8000, true, false, ["istio-peer-exchange", "istio"]) as J
    expect(tcpPeer).toMatchObject({ kind: "allowed", cluster: "inbound|8000||" })
    expect(tcpPeer.chain.name).toBe("0.0.0.0_8000")
    expect(tcpPeer.chain.filters.at(-1).name).toBe("envoy.filters.network.tcp_proxy")
  })

  it("takes the Sidecar's ingress listeners instead of the service ports", () => {
    const sc = resource("Sidecar", "reviews", {
      workloadSelector: { labels: { app: "reviews" } },
      ingress: [
        { port: { number: 9090, protocol: "HTTP", name: "web" }, defaultEndpoint: "127.0.0.1:8080" },
        {
          port: { number: 9443, protocol: "HTTPS", name: "tls" },
          defaultEndpoint: "127.0.0.1:8443",
          tls: { mode: "SIMPLE", serverCertificate: "/etc/certs/cert.pem", privateKey: "/etc/certs/key.pem" },
        },
      ],
    })
    const l = build(push({}, { sidecars: [sc] }))
    expect(chains(l, 8080)).toHaveLength(0)
    // Sidecar ingress chains are named by the proxy's address.
    expect(chains(l, 9090).map((c) => c.name)).toEqual(["10.0.0.5_9090", "10.0.0.5_9090"])
    // PERMISSIVE (no PeerAuthentication): the mesh's chains, HTTPS served as HTTP after termination;
    // the workload's own TLS only where the port's mTLS is DISABLE (reference-matching.test.ts).
    const served = chains(l, 9443)
    expect(served.map((c) => c.filter_chain_match.transport_protocol)).toEqual(["tls", "raw_buffer"])
    expect(served[0].transport_socket.typed_config.common_tls_context.tls_certificate_sds_secret_configs[0].name).toBe(
      "default",
    )
    expect(served.every((c) => c.filters.at(-1).name === "envoy.filters.network.http_connection_manager")).toBe(true)
  })

  it("counts instances whose protocol conflicts on a target port and keeps the first", () => {
    const p = push({
      services: [
        svc(RATINGS, [{ name: "tcp", port: 7000, protocol: "TCP" }]),
        svc(REVIEWS, [{ name: "http", port: 9080, protocol: "HTTP" }]),
      ],
      endpoints: [ep(RATINGS, "10.0.0.5", "tcp", 8080), ep(REVIEWS, "10.0.0.5", "http", 8080)],
    })
    expect(inboundListenerConflicts(p, sidecar())).toBe(1)
    const l = build(p)
    // ratings sorts first: its TCP chains win.
    expect(chains(l, 8080)[0].filters.at(-1).name).toBe("envoy.filters.network.tcp_proxy")
    expect(inboundListenerConflicts(push(), sidecar())).toBe(0)
  })

  it("shares one encoding between replicas, not between workloads policies tell apart", () => {
    const ap = security("AuthorizationPolicy", "deny-other", {
      selector: { matchLabels: { app: "other" } },
      action: "DENY",
      rules: [{}],
    })
    const p = push({ authorizationPolicies: [ap] })
    const key = (proxy: ProxyView) => generateInboundListener(p, proxy).resources[0]!.key
    expect(key(sidecar("10.0.0.5"))).toBe(key(sidecar("10.0.0.6")))
    const other = { app: "other" }
    expect(key(sidecar("10.0.0.5", other))).not.toBe(key(sidecar("10.0.0.5")))
    // A policy change that does not select the workload leaves its key alone.
    const p2 = push({ authorizationPolicies: [{ ...ap, spec: { ...ap.spec, action: "AUDIT" } }] })
    expect(generateInboundListener(p2, sidecar()).resources[0]!.key).toBe(key(sidecar()))
    // An option the listener reads changes it.
    const slow = push({}, {}, { ...p.options, proxy: { ...p.options.proxy, protocolDetectionTimeoutMs: 5000 } })
    const built = generateInboundListener(slow, sidecar()).resources[0]!
    expect(built.key).not.toBe(key(sidecar()))
    expect((built.build() as ProtoObject).listener_filters_timeout).toEqual({ seconds: "5", nanos: 0 })
  })

  it("marks the listener transparent for TPROXY and serves none without capture", () => {
    const p = push()
    expect(build(p, sidecar("10.0.0.5", { app: "reviews" }, { INTERCEPTION_MODE: "TPROXY" })).transparent).toEqual({
      value: true,
    })
    expect(
      generateInboundListener(p, sidecar("10.0.0.5", { app: "reviews" }, { INTERCEPTION_MODE: "NONE" })).resources,
    ).toEqual([])
  })
})
