/**
 * Endpoint-only changes cost the changed hosts: `diffInputs` names exactly the hosts whose
 * endpoints changed (identity first, content when identities differ), and a PushContext derived
 * from the previous one equals one built from scratch while sharing every unchanged view.
 */
import { describe, expect, it } from "@effect/vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import type { Endpoint } from "../../../../src/services/registry/model.js"
import { makeResourceCache } from "../../../../src/services/xds/cache/resource-cache.js"
import { deltaResponse, recordDerivation, sotwResponse } from "../../../../src/services/xds/cache/responder.js"
import { clusterName, generate } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import {
  derivePushContext,
  makePushContext,
  type PushContext,
  type PushContextInput,
  replacedInPlace,
} from "../../../../src/services/xds/model/push-context.js"
import type { DeltaWatch } from "../../../../src/services/xds/protocol/delta.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { diffInputs } from "../../../../src/services/xds/push/updates.js"
import { destinationRule, endpoint, input, service, virtualService } from "../../../fixtures/xds/mesh.js"

const host = (i: number) => `svc-${i}.default.svc.cluster.local`
const HOSTS = [0, 1, 2, 3].map(host)

const base: PushContextInput = input({
  services: HOSTS.map((h) => service(h)),
  endpoints: HOSTS.flatMap((h, i) =>
    // svc-3 starts without endpoints
    i === 3
      ? []
      : [
          endpoint(h, `10.0.${i}.1`, 8080, { labels: { version: "v1" } }),
          endpoint(h, `10.0.${i}.2`, 8080, { labels: { version: "v2" } }),
        ],
  ),
  virtualServices: HOSTS.map((h, i) =>
    virtualService(`svc-${i}`, {
      hosts: [h],
      http: [{ route: [{ destination: { host: h, subset: "v1" } }] }],
    }),
  ),
  destinationRules: HOSTS.map((h, i) =>
    destinationRule(`svc-${i}`, {
      host: h,
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
      ],
    }),
  ),
})

/** The input with `host`'s endpoints replaced; every other endpoint object is kept. */
const withEndpoints = (from: PushContextInput, h: string, list: ReadonlyArray<Endpoint>): PushContextInput => ({
  ...from,
  endpoints: [...from.endpoints.filter((e) => e.hostname !== h), ...list],
})

const endpointsOf = (from: PushContextInput, h: string) => from.endpoints.filter((e) => e.hostname === h)

const changes: ReadonlyArray<{ readonly name: string; readonly host: string; readonly next: PushContextInput }> = [
  {
    name: "an endpoint added",
    host: HOSTS[0]!,
    next: withEndpoints(base, HOSTS[0]!, [
      ...endpointsOf(base, HOSTS[0]!),
      endpoint(HOSTS[0]!, "10.0.0.3", 8080, { labels: { version: "v1" } }),
    ]),
  },
  {
    name: "an endpoint removed",
    host: HOSTS[1]!,
    next: withEndpoints(base, HOSTS[1]!, endpointsOf(base, HOSTS[1]!).slice(1)),
  },
  {
    name: "a health change",
    host: HOSTS[2]!,
    next: withEndpoints(
      base,
      HOSTS[2]!,
      endpointsOf(base, HOSTS[2]!).map((e, i) => (i === 0 ? { ...e, healthStatus: "UNHEALTHY" as const } : e)),
    ),
  },
  {
    name: "a host appearing",
    host: HOSTS[3]!,
    next: withEndpoints(base, HOSTS[3]!, [endpoint(HOSTS[3]!, "10.0.3.1", 8080, { labels: { version: "v1" } })]),
  },
  { name: "a host disappearing", host: HOSTS[0]!, next: withEndpoints(base, HOSTS[0]!, []) },
]

const FACETS = ["service", "endpoints", "vs", "dr"] as const

/** Everything a generator or debug view reads, in a comparable form. */
const observable = (push: PushContext) => ({
  services: push.services,
  serviceByHost: [...push.serviceByHost.entries()].sort(),
  endpointsByHost: [...push.endpointsByHost.entries()].sort(([a], [b]) => (a < b ? -1 : 1)),
  virtualServiceByHost: [...push.virtualServiceByHost.entries()].sort(),
  destinationRuleByHost: [...push.destinationRuleByHost.entries()].sort(),
  peerAuthentications: push.peerAuthentications,
  authorizationPolicies: push.authorizationPolicies,
  fingerprints: HOSTS.flatMap((h) => FACETS.map((f) => push.fingerprint(f, h))),
  input: push.input,
  options: push.options,
  version: push.version,
})

const codec = loadXdsProtos().codec
const allClusters = HOSTS.flatMap((h) => ["", "v1", "v2"].map((subset) => clusterName(h, 80, subset)))

/** Every resource type, generated and encoded: the bytes a client would get. */
const encodedAll = (push: PushContext) =>
  [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route].map((typeUrl) =>
    generate(push, typeUrl, {
      wildcard: false,
      names: typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Route ? HOSTS.map((h) => `${h}:80`) : allClusters,
    }).resources.map((spec) => ({ name: spec.name, key: spec.key, bytes: codec.encode(typeUrl, spec.build()) })),
  )

describe("diffInputs on endpoint changes", () => {
  for (const change of changes) {
    it(`${change.name}: an endpoint-only request naming exactly that host`, () => {
      const request = diffInputs(base, change.next, 7)
      expect(request?.full).toBe(false)
      expect([...(request?.configsUpdated ?? [])]).toEqual([`ServiceEntry/default/${change.host}`])
      expect(request?.start).toBe(7)
    })
  }

  it("names every changed host and only those, even when every object is a fresh copy", () => {
    const copies = (from: PushContextInput): PushContextInput => ({
      ...from,
      services: from.services.map((s) => structuredClone(s)),
      endpoints: from.endpoints.map((e) => structuredClone(e)),
      virtualServices: from.virtualServices.map((r) => structuredClone(r)),
      destinationRules: from.destinationRules.map((r) => structuredClone(r)),
    })
    expect(diffInputs(base, copies(base), 0)).toBeUndefined()
    const next = copies(withEndpoints(changes[0]!.next, HOSTS[1]!, endpointsOf(changes[1]!.next, HOSTS[1]!)))
    expect([...(diffInputs(base, next, 0)?.configsUpdated ?? [])].sort()).toEqual([
      `ServiceEntry/default/${HOSTS[0]}`,
      `ServiceEntry/default/${HOSTS[1]}`,
    ])
  })

  it("an endpoint reordered within its host is a change of that host; hosts reordered are none", () => {
    const h0 = endpointsOf(base, HOSTS[0]!)
    expect([...(diffInputs(base, withEndpoints(base, HOSTS[0]!, [...h0].reverse()), 0)?.configsUpdated ?? [])]).toEqual(
      [`ServiceEntry/default/${HOSTS[0]}`],
    )
    expect(diffInputs(base, { ...base, endpoints: [...base.endpoints].reverse().reverse() }, 0)).toBeUndefined()
    expect(diffInputs(base, withEndpoints(base, HOSTS[0]!, h0), 0)).toBeUndefined()
  })

  it("a host whose endpoints straddle the unchanged start and end of the list is compared whole", () => {
    const [a1, a2] = endpointsOf(base, HOSTS[0]!)
    const [b1, b2] = endpointsOf(base, HOSTS[1]!)
    const [c1] = endpointsOf(base, HOSTS[2]!)
    const before = { ...base, endpoints: [a1!, b1!, a2!, c1!, b2!] }
    const keys = (endpoints: ReadonlyArray<Endpoint>) => [
      ...(diffInputs(before, { ...base, endpoints }, 0)?.configsUpdated ?? []),
    ]
    // b1 and b2 stay in the common start and end; only svc-0's middle endpoint is new
    const a2copy = { ...a2!, address: "10.9.9.9" }
    expect(keys([a1!, b1!, a2copy, c1!, b2!])).toEqual([`ServiceEntry/default/${HOSTS[0]}`])
    // two hosts swapped in the middle: each host's own endpoints keep their order
    expect(keys([a1!, b1!, c1!, a2!, b2!])).toEqual([])
    // an endpoint of svc-1 moved from the end into the middle, after its sibling: no change
    expect(keys([a1!, b1!, a2!, b2!, c1!])).toEqual([])
    // ... and before its sibling: svc-1 changed order
    expect(keys([b2!, a1!, b1!, a2!, c1!])).toEqual([`ServiceEntry/default/${HOSTS[1]}`])
    // one endpoint of svc-1 gone from the end
    expect(keys([a1!, b1!, a2!, c1!])).toEqual([`ServiceEntry/default/${HOSTS[1]}`])
  })

  it("the same endpoint object twice in a snapshot still counts as its host's change", () => {
    const [x, y] = endpointsOf(base, HOSTS[0]!)
    const others = base.endpoints.filter((e) => e.hostname !== HOSTS[0])
    const before = { ...base, endpoints: [x!, x!, y!, ...others] }
    const changed = [...(diffInputs(before, { ...base, endpoints: [x!, y!, y!, ...others] }, 0)?.configsUpdated ?? [])]
    expect(changed).toEqual([`ServiceEntry/default/${HOSTS[0]}`])
    expect(diffInputs(before, { ...base, endpoints: [x!, y!, ...others] }, 0)?.full).toBe(false)
  })

  it("a change of anything but endpoints is still a full push", () => {
    const vs = base.virtualServices.map((r, i) => (i === 0 ? { ...r, spec: { hosts: [HOSTS[0]], http: [] } } : r))
    const request = diffInputs(base, { ...changes[0]!.next, virtualServices: vs }, 0)
    expect(request?.full).toBe(true)
    expect([...(request?.configsUpdated ?? [])].sort()).toEqual([
      `ServiceEntry/default/${HOSTS[0]}`,
      "VirtualService/default/svc-0",
    ])
    // a resource replaced by an equal copy (same spec, new object) is no change
    const copy = base.virtualServices.map((r) => ({ ...r, spec: structuredClone(r.spec) }))
    expect(diffInputs(base, { ...base, virtualServices: copy }, 0)).toBeUndefined()
  })
})

describe("derived PushContext", () => {
  for (const change of changes) {
    it(`${change.name}: equals a PushContext built from scratch and shares the unchanged views`, () => {
      const previous = makePushContext(base, undefined, "1")
      const previousObservable = observable(previous)
      const previousEncoded = encodedAll(previous)
      const derived = derivePushContext(previous, change.next, new Set([change.host]), "2")
      const scratch = makePushContext(change.next, undefined, "2")
      expect(observable(derived)).toEqual(observable(scratch))
      expect(encodedAll(derived)).toEqual(encodedAll(scratch))
      // the change is visible: the endpoints fingerprint of the host moved, no other did
      for (const h of HOSTS)
        for (const facet of FACETS)
          if (facet === "endpoints" && h === change.host)
            expect(derived.fingerprint(facet, h)).not.toBe(previous.fingerprint(facet, h))
          else expect(derived.fingerprint(facet, h)).toBe(previous.fingerprint(facet, h))
      // shared, not rebuilt
      expect(derived.services).toBe(previous.services)
      expect(derived.serviceByHost).toBe(previous.serviceByHost)
      expect(derived.virtualServiceByHost).toBe(previous.virtualServiceByHost)
      expect(derived.destinationRuleByHost).toBe(previous.destinationRuleByHost)
      expect(derived.peerAuthentications).toBe(previous.peerAuthentications)
      expect(derived.authorizationPolicies).toBe(previous.authorizationPolicies)
      for (const h of HOSTS)
        if (h !== change.host) expect(derived.endpointsByHost.get(h)).toBe(previous.endpointsByHost.get(h))
      // the previous context is untouched: connections still pushing from it see what they saw
      expect(observable(previous)).toEqual(previousObservable)
      expect(encodedAll(previous)).toEqual(previousEncoded)
    })
  }

  it("endpoints replaced where they were: the new lists come from the replaced run, equal to a rebuild", () => {
    const [a1, a2] = endpointsOf(base, HOSTS[0]!)
    const [b1, b2] = endpointsOf(base, HOSTS[1]!)
    const [c1, c2] = endpointsOf(base, HOSTS[2]!)
    const interleaved = { ...base, endpoints: [a1!, b1!, a2!, c1!, b2!, c2!] }
    const previous = makePushContext(interleaved, undefined, "1")
    const a3 = endpoint(HOSTS[0]!, "10.0.0.9", 8080, { labels: { version: "v2" } })
    const b3 = endpoint(HOSTS[1]!, "10.0.1.9", 8080, { labels: { version: "v2" } })
    const c3 = endpoint(HOSTS[2]!, "10.0.2.9", 8080, { labels: { version: "v1" } })
    const d1 = endpoint(HOSTS[3]!, "10.0.3.9", 8080, { labels: { version: "v1" } })
    const cases: ReadonlyArray<{ endpoints: ReadonlyArray<Endpoint>; hosts: ReadonlyArray<string>; inPlace: boolean }> =
      [
        // svc-0's second endpoint replaced; its first stays in the common start
        { endpoints: [a1!, b1!, a3, c1!, b2!, c2!], hosts: [HOSTS[0]!], inPlace: true },
        // a run spanning two hosts, each endpoint replaced (svc-0's by two)
        { endpoints: [a1!, b1!, a3, a2!, c3, b2!, c2!], hosts: [HOSTS[0]!, HOSTS[2]!], inPlace: true },
        // a host that had no endpoints appears in the middle
        { endpoints: [a1!, b1!, a2!, d1, c1!, b2!, c2!], hosts: [HOSTS[3]!], inPlace: true },
        // svc-1 gains an endpoint in a run holding none of its own: where it goes is not in its list
        { endpoints: [a1!, b1!, a2!, b3, c1!, b2!, c2!], hosts: [HOSTS[1]!], inPlace: false },
        // the same object twice: found twice in its host's list
        { endpoints: [a1!, b1!, a1!, c1!, b2!, c2!], hosts: [HOSTS[0]!], inPlace: true },
      ]
    for (const { endpoints, hosts, inPlace } of cases) {
      const next = { ...interleaved, endpoints }
      const lists = replacedInPlace(previous.endpointsByHost, interleaved.endpoints, endpoints, new Set(hosts))
      expect(lists !== undefined).toBe(inPlace)
      const derived = derivePushContext(previous, next, new Set(hosts), "2")
      expect(observable(derived)).toEqual(observable(makePushContext(next, undefined, "2")))
    }
    // a duplicated endpoint in the previous list cannot be placed: scanned instead
    const doubled = { ...base, endpoints: [a1!, b1!, a1!, c1!] }
    const withDouble = makePushContext(doubled, undefined, "1")
    const replaced = [a1!, b1!, a3, c1!]
    expect(replacedInPlace(withDouble.endpointsByHost, doubled.endpoints, replaced, new Set([HOSTS[0]!]))).toBe(
      undefined,
    )
    expect(
      observable(derivePushContext(withDouble, { ...base, endpoints: replaced }, new Set([HOSTS[0]!]), "2")),
    ).toEqual(observable(makePushContext({ ...base, endpoints: replaced }, undefined, "2")))
  })

  it("successive derivations stay equal to a rebuild", () => {
    let push = makePushContext(base, undefined, "0")
    let current = base
    for (const [i, change] of changes.entries()) {
      current = withEndpoints(current, change.host, endpointsOf(change.next, change.host))
      push = derivePushContext(push, current, new Set([change.host]), String(i + 1))
      expect(observable(push)).toEqual(observable(makePushContext(current, undefined, String(i + 1))))
    }
  })
})

describe("responses shared between connections", () => {
  const push = makePushContext(base, undefined, "1")
  const watch = (names: ReadonlyArray<string>) => ({ typeUrl: TypeUrl.Endpoint, names, wildcard: false })
  const names = [clusterName(HOSTS[0]!, 80, "v1"), clusterName(HOSTS[1]!, 80, "v1")]

  it("SotW: connections watching the same names get the same resources, only the nonce differs", () => {
    const cache = makeResourceCache(codec)
    const a = sotwResponse(push, cache, watch(names), "n1")
    const b = sotwResponse(push, cache, watch(names), "n2")
    expect(a.sharedReads).toBe(0)
    expect(b.sharedReads).toBe(2)
    expect(b.response.resources).toBe(a.response.resources)
    expect([a.response.nonce, b.response.nonce]).toEqual(["n1", "n2"])
    expect(b.digest).toBe(a.digest)
    expect(cache.stats().hits + cache.stats().misses).toBe(2)
    // other names, or another PushContext: resolved afresh
    expect(sotwResponse(push, cache, watch(names.slice(1)), "n3").sharedReads).toBe(0)
    const next = makePushContext(base, undefined, "2")
    const c = sotwResponse(next, cache, watch(names), "n4")
    expect(c.sharedReads).toBe(0)
    expect(c.response.version_info).toBe("2")
  })

  it("without sharing (cache off) every connection resolves its own set", () => {
    const cache = makeResourceCache(codec)
    sotwResponse(push, cache, watch(names), "n1", undefined, false)
    const b = sotwResponse(push, cache, watch(names), "n2", undefined, false)
    expect(b.sharedReads).toBe(0)
    expect(cache.stats().hits + cache.stats().misses).toBe(4)
  })

  it("inbound listeners depend on the workload and are never shared", () => {
    const cache = makeResourceCache(codec)
    const inbound = {
      typeUrl: TypeUrl.Listener,
      names: ["xds.mesh.io/grpc/lds/inbound/10.0.0.1:8080"],
      wildcard: false,
    }
    sotwResponse(push, cache, inbound, "n1")
    expect(sotwResponse(push, cache, inbound, "n2").sharedReads).toBe(0)
  })

  it("delta: the subscribed set is shared whatever order it was subscribed in", () => {
    const cache = makeResourceCache(codec)
    const delta = (subscribed: ReadonlyArray<string>): DeltaWatch => ({
      typeUrl: TypeUrl.Endpoint,
      wildcard: false,
      subscribed: new Set(subscribed),
      known: new Map(),
      pending: new Set(),
    })
    const a = deltaResponse(push, cache, delta(names), "n1", false)
    const b = deltaResponse(push, cache, delta([...names].reverse()), "n2", false)
    expect(b.sharedReads).toBe(2)
    expect(b.sent).toEqual(a.sent)
  })
})

describe("one response object per push and content", () => {
  const push = makePushContext(base, undefined, "1")
  const names = [clusterName(HOSTS[0]!, 80, "v1"), clusterName(HOSTS[1]!, 80, "v1")]
  const nonces = () => {
    let n = 0
    return () => `push-${++n}`
  }

  it("SotW: a push's connections watching the same names share the response and its nonce", () => {
    const cache = makeResourceCache(codec)
    const watch = { typeUrl: TypeUrl.Endpoint, names, wildcard: false }
    const nonce = nonces()
    const a = sotwResponse(push, cache, watch, nonce)
    const b = sotwResponse(push, cache, { ...watch }, nonce)
    expect(b.response).toBe(a.response)
    expect(a.response.nonce).toBe("push-1")
    // a request's answer keeps its own nonce; another PushContext gets a new response
    expect(sotwResponse(push, cache, watch, "own").response.nonce).toBe("own")
    const next = sotwResponse(makePushContext(base, undefined, "2"), cache, watch, nonce)
    expect(next.response.nonce).toBe("push-2")
    // unshared sets (cache off) build a response per connection
    const c = sotwResponse(push, cache, watch, nonce, undefined, false)
    const d = sotwResponse(push, cache, watch, nonce, undefined, false)
    expect(c.response).not.toBe(d.response)
    expect(new Set([c.response.nonce, d.response.nonce]).size).toBe(2)
  })

  it("delta: connections holding the same versions share the response; others get their own", () => {
    const cache = makeResourceCache(codec)
    const nonce = nonces()
    const fresh = deltaResponse(push, cache, delta(names, new Map()), nonce, false)
    const again = deltaResponse(push, cache, delta(names, new Map()), nonce, false)
    expect(again.response).toBe(fresh.response)
    expect(again.sent).toEqual(fresh.sent)
    // holding the first cluster already: only the second is sent, in a response of its own
    const holding = new Map([[fresh.sent[0]!.name, fresh.sent[0]!.version]])
    const partial = deltaResponse(push, cache, delta(names, holding), nonce, false)
    expect(partial.response).not.toBe(fresh.response)
    expect(partial.response?.nonce).toBe("push-2")
    expect(partial.sent.map((r) => r.name)).toEqual([fresh.sent[1]!.name])
    // holding a name no longer served: its removal makes another response
    const stale = deltaResponse(push, cache, delta(names, new Map([["outbound|80|v9|gone", "x"]])), nonce, false)
    expect(stale.response?.removed_resources).toEqual(["outbound|80|v9|gone"])
    expect(stale.response?.nonce).toBe("push-3")
  })

  it("delta: connections watching different sets that need the same update share the response", () => {
    const cache = makeResourceCache(codec)
    const [first, second] = names as [string, string]
    const other = clusterName(HOSTS[2]!, 80, "v1")
    const resolved = deltaResponse(push, cache, delta([first, second, other], new Map()), "n", false)
    const versions = new Map(resolved.sent.map((r) => [r.name, r.version]))
    // both hold everything but the first cluster, and watch one other cluster each
    const holding = (watched: ReadonlyArray<string>) =>
      new Map(watched.filter((name) => name !== first).map((name) => [name, versions.get(name)!]))
    const nonce = nonces()
    const a = deltaResponse(push, cache, delta([first, second], holding([first, second])), nonce, false)
    const b = deltaResponse(push, cache, delta([first, other], holding([first, other])), nonce, false)
    expect(a.sent.map((r) => r.name)).toEqual([first])
    expect(b.response).toBe(a.response)
    // another type with the same names is another response
    const c = deltaResponse(
      push,
      cache,
      { ...delta([first, second], holding([first, second])), typeUrl: TypeUrl.Cluster },
      nonce,
      false,
    )
    expect(c.response?.type_url).toBe(TypeUrl.Cluster)
    expect(c.response).not.toBe(a.response)
  })
})

const delta = (subscribed: ReadonlyArray<string>, known: ReadonlyMap<string, string>): DeltaWatch => ({
  typeUrl: TypeUrl.Endpoint,
  wildcard: false,
  subscribed: new Set(subscribed),
  known,
  pending: new Set(),
})

describe("endpoint sets carried over to a derived PushContext", () => {
  const watch = { typeUrl: TypeUrl.Endpoint, names: [...allClusters].sort(), wildcard: false }
  const previous = makePushContext(base, undefined, "1")

  for (const change of changes) {
    it(`${change.name}: only that host's clusters are resolved again, and the set equals a fresh one`, () => {
      const cache = makeResourceCache(codec)
      const before = sotwResponse(previous, cache, watch, "n1")
      const derived = derivePushContext(previous, change.next, new Set([change.host]), "2")
      recordDerivation(cache, derived, previous, new Set([change.host]))
      const reads = cache.stats().hits + cache.stats().misses
      const after = sotwResponse(derived, cache, watch, "n2")
      // three clusters per host (no subset, v1, v2)
      expect(cache.stats().hits + cache.stats().misses - reads).toBe(3)
      const fresh = sotwResponse(makePushContext(change.next, undefined, "2"), makeResourceCache(codec), watch, "n3")
      expect(after.response.resources.map((r) => r.value)).toEqual(fresh.response.resources.map((r) => r.value))
      expect(after.digest).toBe(fresh.digest)
      // the other hosts' entries are the same objects as before
      after.response.resources.forEach((r, i) => {
        if (!watch.names[i]!.endsWith(`|${change.host}`)) expect(r).toBe(before.response.resources[i])
      })
    })
  }

  it("a set the previous context never resolved is resolved whole", () => {
    const cache = makeResourceCache(codec)
    const change = changes[0]!
    const derived = derivePushContext(previous, change.next, new Set([change.host]), "2")
    recordDerivation(cache, derived, previous, new Set([change.host]))
    sotwResponse(derived, cache, watch, "n1")
    expect(cache.stats().hits + cache.stats().misses).toBe(allClusters.length)
  })

  it("a set whose hosts did not change keeps its resources array (and so its encoded section)", () => {
    const cache = makeResourceCache(codec)
    const names = { ...watch, names: [clusterName(HOSTS[1]!, 80, "v1")] }
    const before = sotwResponse(previous, cache, names, "n1")
    const change = changes[0]!
    const derived = derivePushContext(previous, change.next, new Set([change.host]), "2")
    recordDerivation(cache, derived, previous, new Set([change.host]))
    const after = sotwResponse(derived, cache, names, "n2")
    expect(after.response.resources).toBe(before.response.resources)
    expect(after.response.version_info).toBe("2")
  })
})
