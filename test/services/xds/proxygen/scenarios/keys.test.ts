/**
 * The cache keys of what the dispatcher generates: replicas of a workload (same labels and
 * namespace, other names and addresses) get the same key for every resource of every type, so
 * they share one encoding; a proxy scoped differently (another namespace under a Sidecar
 * resource) gets other keys; and wherever two proxies' keys agree, their bytes agree too.
 */

import { isDeepStrictEqual } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { proxyShareKey } from "../../../../../src/services/xds/proxygen/generate.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import {
  edsNamesOf,
  generate,
  ingressRouter,
  meshPush,
  productpageSidecar,
  proxyConfig,
  routeNamesOf,
  type Specs,
  sleepProxy,
} from "./mesh.js"

const push = meshPush({}, { accessLogFile: "/dev/stdout" })
const TYPES = [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route] as const

/** Each type as the proxy watches it: wildcard CDS/LDS, EDS/RDS by the names they give. */
const all = (proxy: ProxyView): Readonly<Record<(typeof TYPES)[number], Specs>> => {
  const c = proxyConfig(push, proxy)
  return {
    [TypeUrl.Cluster]: c.clusters,
    [TypeUrl.Endpoint]: c.endpoints,
    [TypeUrl.Listener]: c.listeners,
    [TypeUrl.Route]: c.routes,
  } as Readonly<Record<(typeof TYPES)[number], Specs>>
}

describe("resource keys", () => {
  const a = productpageSidecar(0)
  const b = productpageSidecar(1)

  it("the replicas really differ in name and address, not in scope", () => {
    expect(a.name).not.toBe(b.name)
    expect(a.ips).not.toEqual(b.ips)
    expect(a.scopeKey).toBe(b.scopeKey)
  })

  it.each(TYPES)("two replicas get identical names and keys for %s", (typeUrl) => {
    const [ka, kb] = [all(a)[typeUrl], all(b)[typeUrl]]
    expect(ka.names.length).toBeGreaterThan(0)
    expect(kb.keys).toEqual(ka.keys)
    expect(proxyShareKey(push, b, typeUrl)).toBe(proxyShareKey(push, a, typeUrl))
  })

  it("also for an explicit (non-wildcard) watch", () => {
    const names = routeNamesOf(all(a)[TypeUrl.Listener].resources)
    expect(generate(push, b, TypeUrl.Route, names).keys).toEqual(generate(push, a, TypeUrl.Route, names).keys)
    const clusters = edsNamesOf(all(a)[TypeUrl.Cluster].resources).slice(0, 3)
    expect(generate(push, b, TypeUrl.Endpoint, clusters).keys).toEqual(
      generate(push, a, TypeUrl.Endpoint, clusters).keys,
    )
  })

  it("a sidecar in another namespace under a Sidecar resource gets different CDS keys", () => {
    const sleep = all(sleepProxy())[TypeUrl.Cluster]
    const mine = all(a)[TypeUrl.Cluster]
    expect(new Set(sleep.keys)).not.toEqual(new Set(mine.keys))
    // the scoped proxy sees fewer clusters; the shared ones it does see keep their own key set
    expect(sleep.names.length).toBeLessThan(mine.names.length)
    expect(proxyShareKey(push, sleepProxy(), TypeUrl.Cluster)).not.toBe(proxyShareKey(push, a, TypeUrl.Cluster))
  })

  it("a workload with other labels in the same namespace gets different inbound keys", () => {
    const other = proxyView(a.id, { ...a.metadata, LABELS: { app: "other", version: "v1" } })!
    expect(proxyShareKey(push, other, TypeUrl.Listener)).not.toBe(proxyShareKey(push, a, TypeUrl.Listener))
    // its policies (PeerAuthentication, AuthorizationPolicy, RequestAuthentication) select app=productpage
    const key = (proxy: ProxyView) =>
      generate(push, proxy, TypeUrl.Listener).keys.find((k) => k.startsWith("virtualInbound="))
    expect(key(other)).toBeDefined()
    expect(key(other)).not.toBe(key(a))
  })

  it("wherever two proxies' keys agree, the bytes agree", () => {
    const proxies = [a, b, sleepProxy(), ingressRouter(), ingressRouter("10.0.10.2")]
    for (const typeUrl of TYPES) {
      const byKey = new Map<string, { proxy: string; resource: unknown }>()
      for (const proxy of proxies) {
        const specs = all(proxy)[typeUrl]
        specs.keys.forEach((key, i) => {
          const seen = byKey.get(key)
          if (seen === undefined) byKey.set(key, { proxy: proxy.id, resource: specs.resources[i] })
          else if (!isDeepStrictEqual(seen.resource, specs.resources[i]))
            throw new Error(`${typeUrl}: ${key} built differently for ${seen.proxy} and ${proxy.id}`)
        })
      }
    }
  })

  it("a change to an input a resource depends on changes its key", () => {
    const before = all(a)
    const after = proxyConfig(meshPush({}, { accessLogFile: "" }), a)
    // the access log is in every listener's HTTP connection managers
    const changed = after.listeners.keys.filter((k) => !before[TypeUrl.Listener].keys.includes(k))
    expect(changed.length).toBeGreaterThan(0)
    // clusters do not depend on it
    expect(after.clusters.keys).toEqual(before[TypeUrl.Cluster].keys)
  })
})
