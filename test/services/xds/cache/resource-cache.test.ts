import { describe, expect, it } from "vitest"
import {
  type CacheObserver,
  type EvictionReason,
  makeResourceCache,
  type XdsCodecShape,
} from "../../../../src/services/xds/cache/resource-cache.js"
import type { ResourceSpec } from "../../../../src/services/xds/cache/resource-spec.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const codec: XdsCodecShape = {
  encode: (_typeUrl, resource) => new TextEncoder().encode(JSON.stringify(resource)),
  decode: (_typeUrl, bytes) => JSON.parse(new TextDecoder().decode(bytes)),
}

const spec = (name: string, key: string): ResourceSpec => ({ name, key, build: () => ({ name, key }) })

const recorder = () => {
  const reads: Array<boolean> = []
  const evictions: Array<[EvictionReason, number]> = []
  const sizes = new Map<string, number>()
  const observer: CacheObserver = {
    read: (hit) => reads.push(hit),
    evicted: (reason, count) => evictions.push([reason, count]),
    size: (typeUrl, entries) => sizes.set(typeUrl, entries),
  }
  return { reads, evictions, sizes, observer }
}

const options = { enabled: true, maxSize: 100, enableCds: true, enableRds: true }

describe("resource cache index clearing (PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL)", () => {
  it("drops a superseded version nobody read for a whole interval, keeps the current one", () => {
    const r = recorder()
    const cache = makeResourceCache(codec, options, r.observer)
    cache.resolve(TypeUrl.Endpoint, [spec("a", "v1"), spec("b", "v1")])
    cache.resolve(TypeUrl.Endpoint, [spec("a", "v2")]) // a changed: v1 is superseded
    // Everything was used during this interval: nothing goes yet.
    expect(cache.clearIndex()).toBe(0)
    cache.resolve(TypeUrl.Endpoint, [spec("a", "v2")])
    expect(cache.clearIndex()).toBe(1)
    expect(r.evictions).toEqual([["clear", 1]])
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 })
    expect(r.sizes.get(TypeUrl.Endpoint)).toBe(2)
    // v2 is still cached (a hit), a@v1 is gone (encoded again: a miss).
    const misses = cache.stats().misses
    cache.resolve(TypeUrl.Endpoint, [spec("a", "v2")])
    expect(cache.stats().misses).toBe(misses)
    cache.resolve(TypeUrl.Endpoint, [spec("a", "v1")])
    expect(cache.stats().misses).toBe(misses + 1)
  })

  it("keeps the only version of a resource even when nobody read it", () => {
    const cache = makeResourceCache(codec, options)
    cache.resolve(TypeUrl.Cluster, [spec("c", "k")])
    expect(cache.clearIndex()).toBe(0)
    expect(cache.clearIndex()).toBe(0)
    expect(cache.stats().size).toBe(1)
  })

  it("keeps the newest of several unread versions", () => {
    const cache = makeResourceCache(codec, options)
    cache.resolve(TypeUrl.Route, [spec("r", "1")])
    cache.resolve(TypeUrl.Route, [spec("r", "2")])
    cache.resolve(TypeUrl.Route, [spec("r", "3")])
    cache.clearIndex()
    expect(cache.clearIndex()).toBe(2)
    const misses = cache.stats().misses
    cache.resolve(TypeUrl.Route, [spec("r", "3")])
    expect(cache.stats().misses).toBe(misses)
  })

  it("keeps superseded versions that are still read (another proxy's view)", () => {
    const cache = makeResourceCache(codec, options)
    cache.resolve(TypeUrl.Listener, [spec("l", "view-1"), spec("l", "view-2")])
    cache.clearIndex()
    cache.resolve(TypeUrl.Listener, [spec("l", "view-1"), spec("l", "view-2")])
    expect(cache.clearIndex()).toBe(0)
    expect(cache.stats().size).toBe(2)
  })
})

describe("resource cache metrics", () => {
  it("counts hits and misses only with PILOT_XDS_CACHE_STATS", () => {
    const off = recorder()
    const quiet = makeResourceCache(codec, options, off.observer)
    quiet.resolve(TypeUrl.Cluster, [spec("c", "1"), spec("c", "1")])
    expect(off.reads).toEqual([])
    const on = recorder()
    const counted = makeResourceCache(codec, { ...options, stats: true }, on.observer)
    counted.resolve(TypeUrl.Cluster, [spec("c", "1"), spec("c", "1")])
    expect(on.reads).toEqual([false, true])
  })

  it("reports size evictions and the size per type, and the index forgets evicted entries", () => {
    const r = recorder()
    const cache = makeResourceCache(codec, { ...options, maxSize: 2 }, r.observer)
    cache.resolve(TypeUrl.Cluster, [spec("c", "1")])
    cache.resolve(TypeUrl.Route, [spec("r", "1")])
    cache.resolve(TypeUrl.Route, [spec("r", "2")]) // evicts c@1, the oldest
    expect(r.evictions).toEqual([["size", 1]])
    expect(r.sizes.get(TypeUrl.Cluster)).toBe(0)
    expect(r.sizes.get(TypeUrl.Route)).toBe(2)
    expect(cache.stats()).toMatchObject({ size: 2, evictions: 1 })
    cache.resolve(TypeUrl.Route, [spec("r", "2")])
    expect(cache.clearIndex()).toBe(0) // r@1 was stored during this interval
    cache.resolve(TypeUrl.Route, [spec("r", "2")])
    expect(cache.clearIndex()).toBe(1)
    cache.clear()
    expect(r.sizes.get(TypeUrl.Route)).toBe(0)
    expect(cache.stats().size).toBe(0)
  })

  it("encodes afresh and indexes nothing when the cache is disabled", () => {
    const r = recorder()
    const cache = makeResourceCache(codec, { ...options, enabled: false, stats: true }, r.observer)
    cache.resolve(TypeUrl.Cluster, [spec("c", "1"), spec("c", "1")])
    expect(cache.stats()).toMatchObject({ misses: 2, hits: 0, size: 0 })
    expect(r.reads).toEqual([false, false])
    expect(cache.clearIndex()).toBe(0)
    expect(cache.holds(TypeUrl.Cluster, "c")).toBe(false)
  })

  it("tells which resources it holds a version of, per type, until they are evicted", () => {
    const cache = makeResourceCache(codec, { ...options, maxSize: 2 })
    cache.resolve(TypeUrl.Cluster, [spec("c", "1")])
    expect(cache.holds(TypeUrl.Cluster, "c")).toBe(true)
    expect(cache.holds(TypeUrl.Endpoint, "c")).toBe(false)
    expect(cache.holds(TypeUrl.Cluster, "d")).toBe(false)
    cache.resolve(TypeUrl.Cluster, [spec("d", "1"), spec("e", "1")]) // evicts c
    expect(cache.holds(TypeUrl.Cluster, "c")).toBe(false)
    cache.clear()
    expect(cache.holds(TypeUrl.Cluster, "e")).toBe(false)
  })
})

describe("resource cache locals (state kept per cache by code reading through it)", () => {
  it("makes a slot's state once per cache, and never shares it between caches", () => {
    let made = 0
    const slot = { make: () => ({ n: ++made }) }
    const a = makeResourceCache(codec, options)
    const b = makeResourceCache(codec, options)
    expect(a.local(slot)).toBe(a.local(slot))
    expect(b.local(slot)).not.toBe(a.local(slot))
    expect(made).toBe(2)
    // Another slot is another state, in the same cache.
    expect(a.local({ make: () => ({ n: 0 }) })).not.toBe(a.local(slot))
  })
})
