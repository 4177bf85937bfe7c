import { describe, expect, it } from "vitest"
import { TypedConfig } from "../../../src/services/xds/proxygen/well-known.js"
import { inbound, outboundHttp, outboundTcp, selectFilterChain } from "./evaluator.js"
import {
  httpListener,
  REVIEWS,
  reviews,
  routes9080,
  SLEEP,
  tcpListener,
  tcpProxy,
  virtualInbound,
  virtualOutbound,
} from "./fixtures.js"

const outbound = [httpListener, tcpListener, virtualOutbound("PassthroughCluster")]
const http = (req: { host: string; path?: string; headers?: Record<string, string>; method?: string }) =>
  outboundHttp({ listeners: outbound, routes: [routes9080], port: 9080, ...req })

describe("outbound HTTP", () => {
  it("splits traffic by weight, with the route's retries and timeout", () => {
    const out = http({ host: "reviews:9080", path: "/reviews/1" })
    expect(out).toMatchObject({
      kind: "route",
      weightedClusters: [
        { name: reviews("v1"), weight: 90 },
        { name: reviews("v3"), weight: 10 },
      ],
      timeoutSeconds: 0,
      retries: { attempts: 2, retryOn: "connect-failure,refused-stream,unavailable" },
    })
  })

  it("routes by header (any case) to its own subset, with the delay fault", () => {
    const out = http({ host: REVIEWS, path: "/", headers: { "End-User": "jason" } })
    expect(out).toMatchObject({ kind: "route", cluster: reviews("v2"), fault: { delay: { seconds: 7, percent: 100 } } })
    expect(http({ host: REVIEWS, headers: { "end-user": "json" } })).toMatchObject({
      weightedClusters: expect.any(Array),
    })
  })

  it("redirects, matches wildcard domains, and falls to the catch-all host", () => {
    expect(http({ host: "old.example.com", path: "/moved" })).toMatchObject({
      kind: "route",
      redirect: { host_redirect: "new.example.com", path_redirect: "/new" },
    })
    expect(http({ host: "a.old.example.com", path: "/moved?x=1" })).toMatchObject({ redirect: expect.anything() })
    expect(http({ host: "old.example.com", path: "/elsewhere" })).toMatchObject({ kind: "no-route" })
    expect(http({ host: "unknown.example.com" })).toMatchObject({ kind: "route", cluster: "PassthroughCluster" })
  })

  it("reports a listener without its route configuration and a port without a listener", () => {
    expect(outboundHttp({ listeners: outbound, routes: [], port: 9080, host: REVIEWS })).toEqual({
      kind: "no-route-config",
      name: "9080",
    })
    expect(outboundHttp({ listeners: [httpListener], routes: [routes9080], port: 8000, host: "x" })).toEqual({
      kind: "no-listener",
    })
  })
})

describe("outbound TCP", () => {
  it("sends a service VIP to its cluster and anything else through the virtual outbound listener", () => {
    expect(outboundTcp({ listeners: outbound, vip: "10.0.0.9", port: 3306 })).toMatchObject({
      kind: "cluster",
      cluster: "outbound|3306||mysql.default.svc.cluster.local",
    })
    expect(outboundTcp({ listeners: outbound, vip: "192.0.2.1", port: 443, sni: "example.com" })).toMatchObject({
      kind: "cluster",
      cluster: "PassthroughCluster",
    })
    const registryOnly = [tcpListener, virtualOutbound("BlackHoleCluster")]
    expect(outboundTcp({ listeners: registryOnly, vip: "192.0.2.1", port: 443 })).toMatchObject({
      cluster: "BlackHoleCluster",
    })
    expect(outboundTcp({ listeners: outbound, vip: "10.0.0.3", port: 9080 })).toMatchObject({ kind: "http" })
  })

  it("picks chains by port, then server name, preferring the specific and then the default chain", () => {
    const listener = {
      name: "0.0.0.0_443",
      filter_chains: [
        { name: "any", filters: [tcpProxy("any")] },
        { name: "sni", filter_chain_match: { server_names: ["*.example.com"] }, filters: [tcpProxy("wild")] },
        { name: "exact", filter_chain_match: { server_names: ["a.example.com"] }, filters: [tcpProxy("exact")] },
        { name: "port", filter_chain_match: { destination_port: { value: 8443 } }, filters: [tcpProxy("port")] },
      ],
      default_filter_chain: { name: "default", filters: [tcpProxy("default")] },
    }
    const pick = (port: number, sni?: string) =>
      selectFilterChain(listener, {
        destinationPort: port,
        sni,
        transportProtocol: sni === undefined ? "raw_buffer" : "tls",
        applicationProtocols: [],
      })?.name
    expect(pick(443, "a.example.com")).toBe("exact")
    expect(pick(443, "b.example.com")).toBe("sni")
    expect(pick(443, "other.org")).toBe("any")
    expect(pick(8443, "a.example.com")).toBe("port")
    const onlyPort = { ...listener, filter_chains: [listener.filter_chains[3]!] }
    expect(
      selectFilterChain(onlyPort, { destinationPort: 1, transportProtocol: "raw_buffer", applicationProtocols: [] })
        ?.name,
    ).toBe("default")
  })
})

describe("inbound", () => {
  const strict = [virtualInbound("STRICT")]

  it("under STRICT takes mTLS and closes plaintext connections", () => {
    expect(
      inbound({ listeners: strict, port: 8080, tls: true, principal: SLEEP, method: "GET", path: "/" }),
    ).toMatchObject({
      kind: "allowed",
      cluster: "inbound|8080||",
      policy: "ns[default]-policy[allow-sleep]-rule[0]",
    })
    expect(inbound({ listeners: strict, port: 8080, tls: false, method: "GET", path: "/" })).toEqual({
      kind: "no-chain",
    })
    expect(inbound({ listeners: strict, port: 8080, tls: true, method: "GET", path: "/" })).toMatchObject({
      kind: "handshake-failed",
      reason: "no client certificate",
    })
  })

  it("under PERMISSIVE takes plaintext too", () => {
    const open = [virtualInbound("PERMISSIVE", [])]
    expect(inbound({ listeners: open, port: 8080, tls: false, method: "GET", path: "/" })).toMatchObject({
      kind: "allowed",
      cluster: "inbound|8080||",
    })
    expect(inbound({ listeners: open, port: 8080, tls: true, principal: SLEEP, method: "POST" })).toMatchObject({
      kind: "allowed",
    })
  })

  it("applies DENY before ALLOW, ignores AUDIT and shadow rules, and denies what no ALLOW policy matches", () => {
    const req = (principal: string | undefined, method: string, path: string, listeners = strict) =>
      inbound({ listeners, port: 8080, tls: principal !== undefined, principal, method, path })
    expect(req(SLEEP, "GET", "/admin/users")).toMatchObject({
      kind: "denied",
      policy: "ns[default]-policy[deny-admin]-rule[0]",
    })
    expect(req(SLEEP, "POST", "/")).toMatchObject({ kind: "denied", filter: "envoy.filters.http.rbac" })
    expect(req(SLEEP, "POST", "/").kind === "denied" && "policy" in req(SLEEP, "POST", "/")).toBe(false)
    expect(req("spiffe://cluster.local/ns/other/sa/x", "GET", "/")).toMatchObject({ kind: "denied" })
    expect(req(undefined, "GET", "/", [virtualInbound("PERMISSIVE")])).toMatchObject({ kind: "denied" })
  })

  it("passes other ports through, with network RBAC on TCP chains", () => {
    expect(inbound({ listeners: strict, port: 9999, tls: false })).toMatchObject({
      kind: "allowed",
      cluster: "InboundPassthroughCluster",
    })
    const denyTcp = {
      ...virtualInbound("STRICT"),
      filter_chains: [
        {
          filter_chain_match: { destination_port: { value: 3306 } },
          filters: [
            {
              name: "envoy.filters.network.rbac",
              typed_config: {
                "@type": TypedConfig.networkRbac,
                stat_prefix: "tcp.",
                rules: {
                  action: "DENY",
                  policies: {
                    deny: {
                      permissions: [{ destination_port: 3306 }],
                      principals: [{ source_ip: { address_prefix: "10.0.0.0", prefix_len: { value: 8 } } }],
                    },
                  },
                },
              },
            },
            tcpProxy("inbound|3306||"),
          ],
        },
      ],
    }
    expect(inbound({ listeners: [denyTcp], port: 3306, tls: false, sourceIp: "10.1.2.3" })).toMatchObject({
      kind: "denied",
      filter: "envoy.filters.network.rbac",
      policy: "deny",
    })
    expect(inbound({ listeners: [denyTcp], port: 3306, tls: false, sourceIp: "192.168.0.1" })).toMatchObject({
      kind: "allowed",
      cluster: "inbound|3306||",
    })
  })
})
