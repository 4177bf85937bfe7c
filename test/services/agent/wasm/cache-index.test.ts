/** The cache index: reuse by checksum and URL, the resource-version rule of Always, and expiry. */
import { describe, expect, it } from "@effect/vitest"
import {
  type CacheKey,
  moduleFilePath,
  moduleNameHash,
  parseModuleFilePlace,
  WasmCacheIndex,
} from "../../../../src/services/agent/wasm/cache-index.js"

const A = "aa".repeat(32)
const B = "bb".repeat(32)
const key = (overrides: Partial<CacheKey> = {}): CacheKey => ({
  url: "oci://ghcr.io/org/filter:v1",
  moduleName: "oci://ghcr.io/org/filter",
  checksum: undefined,
  resourceName: "ns/plugin",
  resourceVersion: "1",
  reuseAcrossVersions: true,
  ...overrides,
})

describe("WasmCacheIndex", () => {
  it("misses an unknown module, then serves what was recorded", () => {
    const index = new WasmCacheIndex()
    expect(index.lookup(key(), 0)).toBeUndefined()
    index.record(key(), A, "/cache/a.wasm", 0)
    expect(index.lookup(key({ resourceVersion: "2" }), 10)?.path).toBe("/cache/a.wasm")
    expect(index.size).toBe(1)
  })

  it("with Always, serves the cache for the same resource version and misses on a new one", () => {
    const index = new WasmCacheIndex()
    const always = key({ reuseAcrossVersions: false })
    index.record(always, A, "/cache/a.wasm", 0)
    expect(index.lookup(always, 1)?.checksum).toBe(A)
    expect(index.lookup({ ...always, resourceVersion: "2" }, 2)).toBeUndefined()
    // The new version pulled a new image; afterwards that version is served from the cache.
    index.record({ ...always, resourceVersion: "2" }, B, "/cache/b.wasm", 3)
    expect(index.lookup({ ...always, resourceVersion: "2" }, 4)?.checksum).toBe(B)
  })

  it("keeps resource versions per resource name", () => {
    const index = new WasmCacheIndex()
    index.record(key({ reuseAcrossVersions: false, resourceName: "p1" }), A, "/a", 0)
    index.record(key({ reuseAcrossVersions: false, resourceName: "p2", resourceVersion: "7" }), A, "/a", 0)
    expect(index.lookup(key({ reuseAcrossVersions: false, resourceName: "p1" }), 1)?.path).toBe("/a")
  })

  it("serves a pinned checksum whatever the URL (tag and digest of one image share an entry)", () => {
    const index = new WasmCacheIndex()
    index.record(key(), A, "/cache/a.wasm", 0)
    const byDigest = key({ url: `oci://ghcr.io/org/filter@sha256:${A}`, checksum: A, reuseAcrossVersions: false })
    expect(index.lookup(byDigest, 1)?.path).toBe("/cache/a.wasm")
    expect(index.lookup({ ...byDigest, checksum: B }, 1)).toBeUndefined()
  })

  it("reports modules unused for longer than the expiry, and forgets them with their URLs", () => {
    const index = new WasmCacheIndex()
    index.record(key(), A, "/a", 0)
    index.record(key({ url: "oci://ghcr.io/org/filter:v2" }), B, "/b", 0)
    index.lookup(key(), 50)
    expect(index.expired(100, 100)).toEqual([])
    const expired = index.expired(101, 100)
    expect(expired.map((m) => m.checksum)).toEqual([B])
    index.remove(expired[0]!)
    expect(index.size).toBe(1)
    expect(index.lookup(key({ url: "oci://ghcr.io/org/filter:v2" }), 102)).toBeUndefined()
    expect(index.lookup(key(), 102)?.checksum).toBe(A)
  })

  it("lays files out by hashed module name and checksum", () => {
    const path = moduleFilePath("/cache", "https://e.com/a.wasm?x=../../etc", A)
    expect(path).toMatch(new RegExp(`^/cache/[0-9a-f]{64}/${A}\\.wasm$`))
  })
})

describe("WasmCacheIndex restored from disk", () => {
  const http = key({ url: "https://e.com/a.wasm", moduleName: "https://e.com/a.wasm", reuseAcrossVersions: false })

  it("serves a restored module only to a request pinning its checksum, then names it", () => {
    const index = new WasmCacheIndex()
    index.restore(moduleNameHash(http.moduleName), A, "/cache/x/a.wasm", 5)
    expect(index.size).toBe(1)
    // Nothing remembers which checksum the URL resolves to: an unpinned request must fetch.
    expect(index.lookup(http, 10)).toBeUndefined()
    expect(index.lookup({ ...http, checksum: B }, 10)).toBeUndefined()
    expect(index.lookup({ ...http, moduleName: "https://e.com/other.wasm", checksum: A }, 10)).toBeUndefined()
    const hit = index.lookup({ ...http, checksum: A }, 10)
    expect(hit?.path).toBe("/cache/x/a.wasm")
    expect(hit?.moduleName).toBe(http.moduleName)
    expect(hit?.lastUsedMs).toBe(10)
  })

  it("expires a restored module by the time it was restored with, and keeps a recorded entry over it", () => {
    const index = new WasmCacheIndex()
    index.record({ ...http, checksum: A }, A, "/recorded", 50)
    index.restore(moduleNameHash(http.moduleName), A, "/restored", 0)
    index.restore(moduleNameHash(http.moduleName), B, "/old", 0)
    expect(index.size).toBe(2)
    expect(index.expired(101, 100).map((m) => m.path)).toEqual(["/old"])
    expect(index.lookup({ ...http, checksum: A }, 102)?.path).toBe("/recorded")
  })

  it("reads a file's place back as name hash and checksum, and nothing else", () => {
    const path = moduleFilePath("/cache", "https://e.com/a.wasm", A)
    const [directory, file] = path.split("/").slice(-2) as [string, string]
    expect(parseModuleFilePlace(directory, file)).toEqual({
      nameHash: moduleNameHash("https://e.com/a.wasm"),
      checksum: A,
    })
    expect(parseModuleFilePlace(directory, `${A}.wasm.0a1b2c.tmp`)).toBeUndefined()
    expect(parseModuleFilePlace("not-a-hash", `${A}.wasm`)).toBeUndefined()
    expect(parseModuleFilePlace(directory, `${A.toUpperCase()}.wasm`)).toBeUndefined()
  })
})
