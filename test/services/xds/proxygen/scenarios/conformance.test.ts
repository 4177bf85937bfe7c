/**
 * Every resource of every type (CDS, EDS for each EDS cluster, LDS, RDS for each route name the
 * listeners name) that the dispatcher gives a sidecar, a sidecar under a Sidecar resource and a
 * gateway of the reference mesh passes the conformance check: proto shape, validate.rules, and a
 * round trip through the server's own codec (so nothing is dropped on the wire). Beyond what
 * the protos say, the rules the data-plane proxy itself checks when it accepts a set (unique
 * names, addresses, filter chain matches and virtual host domains; the router last) and the
 * consistency of the set (every route, listener and EDS name it refers to is served).
 */
import { describe, expect, it } from "@effect/vitest"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import type { ProxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import { arr, type Obj, obj, str } from "../../../../support/proxygen/matchers.js"
import {
  edsNamesOf,
  ingressRouter,
  meshPush,
  productpageSidecar,
  proxyConfig,
  routeNamesOf,
  sleepProxy,
} from "./mesh.js"

const duplicates = (values: ReadonlyArray<string>): ReadonlyArray<string> =>
  values.filter((v, i) => values.indexOf(v) !== i)

const chainsOf = (listener: Obj): ReadonlyArray<Obj> => [
  ...arr(listener.filter_chains),
  ...(obj(listener.default_filter_chain) !== undefined ? [obj(listener.default_filter_chain)!] : []),
]

const typedConfigs = (filters: unknown): ReadonlyArray<Obj> =>
  arr(filters)
    .map((f) => obj(f.typed_config))
    .filter((t): t is Obj => t !== undefined)

const isType = (t: Obj, suffix: string) => (str(t["@type"]) ?? "").endsWith(suffix)

/** The clusters a listener set sends traffic to (TCP proxies) or fetches from (JWKS). */
const listenerClusters = (listeners: ReadonlyArray<Obj>): ReadonlyArray<string> =>
  listeners.flatMap(chainsOf).flatMap((chain) =>
    typedConfigs(chain.filters).flatMap((t) => {
      if (isType(t, "TcpProxy"))
        return t.cluster !== undefined
          ? [String(t.cluster)]
          : arr(obj(t.weighted_clusters)?.clusters).map((c) => String(c.name))
      if (isType(t, "HttpConnectionManager"))
        return typedConfigs(t.http_filters)
          .filter((h) => isType(h, "JwtAuthentication"))
          .flatMap((h) => Object.values(obj(h.providers) ?? {}))
          .map((p) => str(obj(obj(obj(p)?.remote_jwks)?.http_uri)?.cluster))
          .filter((c): c is string => c !== undefined)
      return []
    }),
  )

const routeClusters = (routes: ReadonlyArray<Obj>): ReadonlyArray<string> =>
  routes
    .flatMap((rc) => arr(rc.virtual_hosts))
    .flatMap((vh) => arr(vh.routes))
    .map((r) => obj(r.route))
    .filter((a): a is Obj => a !== undefined)
    .flatMap((a) => [
      ...(a.cluster !== undefined ? [String(a.cluster)] : []),
      ...arr(obj(a.weighted_clusters)?.clusters).map((c) => String(c.name)),
      ...arr(a.request_mirror_policies).map((m) => String(m.cluster)),
    ])

const push = meshPush()

const proxies: ReadonlyArray<readonly [string, () => ProxyView]> = [
  ["sidecar (productpage)", () => productpageSidecar()],
  ["sidecar under a Sidecar resource (sleep)", sleepProxy],
  ["router (ingress gateway)", () => ingressRouter()],
]

describe.each(proxies)("conformance of what the %s gets", (_, proxy) => {
  const config = proxyConfig(push, proxy())

  it("has every type, every watched name served", () => {
    expect(config.clusters.resources.length).toBeGreaterThan(0)
    expect(config.listeners.resources.length).toBeGreaterThan(0)
    expect(config.routes.resources.length).toBeGreaterThan(0)
    expect(config.endpoints.resources.length).toBeGreaterThan(0)
  })

  it("CDS", () => expectConformant(TypeUrl.Cluster, config.clusters.resources))
  it("EDS", () => expectConformant(TypeUrl.Endpoint, config.endpoints.resources))
  it("LDS", () => expectConformant(TypeUrl.Listener, config.listeners.resources))
  it("RDS", () => expectConformant(TypeUrl.Route, config.routes.resources))

  it("names are unique per type; every watched EDS and RDS name is served", () => {
    for (const specs of [config.clusters, config.listeners, config.routes, config.endpoints])
      expect(duplicates(specs.names)).toEqual([])
    expect(config.endpoints.names).toEqual(edsNamesOf(config.clusters.resources))
    expect(config.routes.names).toEqual(routeNamesOf(config.listeners.resources))
  })

  it("listeners: unique addresses, unique filter chain matches, the HTTP router last", () => {
    const listeners = config.listeners.resources
    const addresses = listeners.map((l) => JSON.stringify(obj(l.address)?.socket_address))
    expect(duplicates(addresses)).toEqual([])
    for (const l of listeners) {
      const matches = arr(l.filter_chains).map((c) => JSON.stringify(c.filter_chain_match ?? {}))
      expect(duplicates(matches), String(l.name)).toEqual([])
      for (const chain of chainsOf(l))
        for (const hcm of typedConfigs(chain.filters).filter((t) => isType(t, "HttpConnectionManager"))) {
          const filters = arr(hcm.http_filters).map((f) => String(f.name))
          expect(filters.at(-1), String(l.name)).toBe("envoy.filters.http.router")
        }
    }
  })

  it("route configurations: unique virtual host names and domains, one `*` at most", () => {
    for (const rc of config.routes.resources) {
      const hosts = arr(rc.virtual_hosts)
      expect(duplicates(hosts.map((h) => String(h.name))), String(rc.name)).toEqual([])
      const domains = hosts.flatMap((h) => (h.domains as ReadonlyArray<string>).map((d) => d.toLowerCase()))
      expect(duplicates(domains), String(rc.name)).toEqual([])
      for (const d of domains) expect(d === "*" || !d.slice(1, -1).includes("*"), d).toBe(true)
    }
  })

  it("every cluster a listener or route names is in CDS", () => {
    const known = new Set(config.clusters.names)
    const missing = [...listenerClusters(config.listeners.resources), ...routeClusters(config.routes.resources)].filter(
      (c) => !known.has(c),
    )
    expect([...new Set(missing)]).toEqual([])
  })
})
