/**
 * Egress and ingress as the reference's task docs describe them, asked of the evaluator: the
 * outbound traffic policy (ALLOW_ANY passes unknown destinations through, REGISTRY_ONLY drops
 * them), a Sidecar resource's egress hosts, and the ingress gateway (host routing, 404 for
 * unknown hosts, httpsRedirect, HTTPS SIMPLE with its credential, PASSTHROUGH by SNI,
 * AUTO_PASSTHROUGH to the SNI-named cluster, PILOT_FILTER_GATEWAY_CLUSTER_CONFIG).
 */
import { describe, expect, it } from "@effect/vitest"
import { outboundHttp, outboundTcp, type RouteOutcome } from "../../../../support/proxygen/evaluator.js"
import type { Obj } from "../../../../support/proxygen/matchers.js"
import {
  bookinfoGateway,
  ingressRouter,
  meshPush,
  PRODUCTPAGE,
  productpageSidecar,
  proxyConfig,
  RATINGS,
  REVIEWS,
  sleepProxy,
  sleepSidecar,
  TLS_SVC,
} from "./mesh.js"

const PASSTHROUGH = "PassthroughCluster"
const BLACKHOLE = "BlackHoleCluster"

const domainsOf = (routes: ReadonlyArray<Obj>): ReadonlyArray<string> =>
  routes.flatMap((r) => (r.virtual_hosts as ReadonlyArray<Obj>).flatMap((v) => v.domains as ReadonlyArray<string>))

describe("outbound traffic policy", () => {
  const allowAny = proxyConfig(meshPush(), productpageSidecar())
  const registryOnly = proxyConfig(meshPush({}, { outboundTrafficPolicy: "REGISTRY_ONLY" }), productpageSidecar())

  it("ALLOW_ANY: an unknown IP:port passes through to its original destination", () => {
    const listeners = allowAny.listeners.resources
    expect(outboundTcp({ listeners, vip: "93.184.216.34", port: 12345 })).toMatchObject({ cluster: PASSTHROUGH })
    expect(allowAny.clusters.names).toContain(PASSTHROUGH)
  })

  it("REGISTRY_ONLY: an unknown IP:port goes to the black hole", () => {
    const listeners = registryOnly.listeners.resources
    expect(outboundTcp({ listeners, vip: "93.184.216.34", port: 12345 })).toMatchObject({ cluster: BLACKHOLE })
  })

  it("an unknown host on a known HTTP port: passed through under ALLOW_ANY, 502 under REGISTRY_ONLY", () => {
    const ask = (config: typeof allowAny) =>
      outboundHttp({
        listeners: config.listeners.resources,
        routes: config.routes.resources,
        port: 9080,
        host: "unknown.example.org",
        destinationIp: "93.184.216.34",
      })
    expect(ask(allowAny)).toMatchObject({ kind: "route", cluster: PASSTHROUGH })
    expect(ask(registryOnly)).toMatchObject({ kind: "route", directResponse: { status: 502 } })
  })

  it("known services are reachable either way", () => {
    const config = registryOnly
    const hit = outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port: 9080,
      host: "details:9080",
    })
    expect(hit).toMatchObject({ kind: "route", cluster: `outbound|9080||details.default.svc.cluster.local` })
  })
})

describe("Sidecar egress", () => {
  it("a host outside the egress list has no virtual host (and no cluster); one inside is routed", () => {
    const config = proxyConfig(meshPush(), sleepProxy())
    const domains = domainsOf(config.routes.resources)
    expect(domains.some((d) => d.startsWith("ratings"))).toBe(false)
    expect(config.clusters.names.some((n) => n.includes(RATINGS))).toBe(false)
    const ask = (host: string) =>
      outboundHttp({ listeners: config.listeners.resources, routes: config.routes.resources, port: 9080, host })
    // The Sidecar is REGISTRY_ONLY: the unknown host meets the 502 catch-all, never ratings.
    expect(ask(`${RATINGS}:9080`)).toMatchObject({ kind: "route", directResponse: { status: 502 } })
    expect(ask("reviews.default:9080")).toMatchObject({
      kind: "route",
      weightedClusters: [
        { name: `outbound|9080|v1|${REVIEWS}`, weight: 80 },
        { name: `outbound|9080|v3|${REVIEWS}`, weight: 20 },
      ],
    })
  })

  it("without its own traffic policy, the Sidecar's proxy falls back to the mesh's (ALLOW_ANY)", () => {
    const sidecar = { ...sleepSidecar, spec: { egress: sleepSidecar.spec.egress! } }
    const config = proxyConfig(meshPush({ proxyConfig: { sidecars: [sidecar] } }), sleepProxy())
    const hit = outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port: 9080,
      host: `${RATINGS}:9080`,
    })
    expect(hit).toMatchObject({ kind: "route", cluster: PASSTHROUGH })
    expect(outboundTcp({ listeners: config.listeners.resources, vip: "10.96.0.15", port: 3306 })).toMatchObject({
      cluster: PASSTHROUGH,
    })
  })
})

describe("ingress gateway", () => {
  const config = proxyConfig(meshPush(), ingressRouter())
  const listeners = config.listeners.resources
  const routes = config.routes.resources
  const http = (host: string, path: string, port = 8080, sni?: string): RouteOutcome | { kind: string } =>
    outboundHttp({ listeners, routes, port, host, path, ...(sni !== undefined ? { sni } : {}) })

  it("Host bookinfo.example.com, /productpage → productpage (with or without the port in Host)", () => {
    for (const host of ["bookinfo.example.com", "bookinfo.example.com:8080", "BookInfo.Example.com"])
      expect(http(host, "/productpage"), host).toMatchObject({
        kind: "route",
        cluster: `outbound|9080||${PRODUCTPAGE}`,
      })
    expect(http("bookinfo.example.com", "/static/css/app.css")).toMatchObject({
      cluster: `outbound|9080||${PRODUCTPAGE}`,
    })
  })

  it("a path no route matches, or an unknown host, gets no route (404)", () => {
    expect(http("bookinfo.example.com", "/other")).toMatchObject({ kind: "no-route" })
    expect(http("unknown.example.com", "/productpage")).toMatchObject({ kind: "no-virtual-host" })
  })

  it("httpsRedirect: plaintext requests for the host are redirected to https", () => {
    expect(http("secure.example.com", "/productpage")).toMatchObject({
      kind: "route",
      redirect: { https_redirect: true },
    })
  })

  it("HTTPS SIMPLE: TLS with SNI is terminated with the credential and routed", () => {
    expect(http("secure.example.com", "/productpage", 8443, "secure.example.com")).toMatchObject({
      kind: "route",
      cluster: `outbound|9080||${PRODUCTPAGE}`,
    })
    const listener = listeners.find((l) => l.name === "0.0.0.0_8443")!
    expect(JSON.stringify(listener)).toContain("secure-credential")
    expect(JSON.stringify(listener)).toContain("DownstreamTlsContext")
    // another SNI finds no chain
    expect(http("other.example.com", "/", 8443, "other.example.com")).toMatchObject({ kind: "no-chain" })
  })

  it("PASSTHROUGH: the TLS connection goes by SNI to the TLS route's cluster, not terminated", () => {
    const hit = outboundTcp({ listeners, vip: "10.0.10.1", port: 9443, sni: "passthrough.example.com" })
    expect(hit).toMatchObject({ kind: "cluster", cluster: `outbound|8443||${TLS_SVC}` })
    expect((hit as { chain: Obj }).chain.transport_socket).toBeUndefined()
  })

  it("AUTO_PASSTHROUGH: the SNI names the cluster (mesh mTLS passes through)", () => {
    const sni = `outbound_.9080_.v1_.${REVIEWS}`
    const hit = outboundTcp({ listeners, vip: "10.0.10.1", port: 15443, sni, applicationProtocols: ["istio"] })
    expect(hit).toMatchObject({ kind: "cluster", cluster: sni })
    const cluster = config.clusters.resources.find((c) => c.name === sni) as Obj
    expect(cluster).toMatchObject({ type: "EDS", eds_cluster_config: { service_name: `outbound|9080|v1|${REVIEWS}` } })
  })

  it("PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: only the clusters its routes (and AUTO_PASSTHROUGH hosts) reach", () => {
    const outboundOf = (gateway: typeof bookinfoGateway) =>
      proxyConfig(
        meshPush({ proxyConfig: { gateways: [gateway] } }, { filterGatewayClusterConfig: true }),
        ingressRouter(),
      ).clusters.names.filter((n) => n.startsWith("outbound|"))
    const servers = bookinfoGateway.spec.servers.filter((s) => s.tls?.mode !== "AUTO_PASSTHROUGH")
    const routed = outboundOf({ ...bookinfoGateway, spec: { ...bookinfoGateway.spec, servers } })
    expect(new Set(routed.map((n) => n.slice(n.lastIndexOf("|") + 1)))).toEqual(new Set([PRODUCTPAGE, TLS_SVC]))
    // `*.local` on AUTO_PASSTHROUGH: every mesh service may be reached through the gateway.
    const withAuto = outboundOf(bookinfoGateway)
    expect(withAuto).toContain(`outbound|9080|v1|${RATINGS}`)
    expect(withAuto.some((n) => n.endsWith("|httpbin.org"))).toBe(false)
  })
})
