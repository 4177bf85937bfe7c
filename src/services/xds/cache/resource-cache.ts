/**
 * Encode once: resources are built and encoded only when no resource with the same type, name
 * and dependency key was encoded before; every connection that needs it shares the same bytes.
 * Bounded by `PILOT_XDS_CACHE_SIZE` (oldest entries evicted first). With the cache disabled
 * (`PILOT_ENABLE_XDS_CACHE=false`, or per type with `PILOT_ENABLE_CDS_CACHE` /
 * `PILOT_ENABLE_RDS_CACHE`), every request encodes afresh.
 *
 * The index (type and name → the keys held for that resource) lets `clearIndex` drop the
 * versions that a newer version superseded once nobody read them for a whole
 * `PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL`: after an endpoint change the old bytes of that cluster
 * would otherwise sit in the cache until the size limit pushes them out. The last version of
 * each resource stays (a reconnecting proxy needs it).
 */
import { Context, type Duration } from "effect"
import { type LocalSlot, type Locals, makeLocals } from "../model/local-slot.js"
import { digest } from "../model/push-context.js"
import type { AnyMessage } from "../protocol/messages.js"
import { TypeUrl } from "../protocol/type-urls.js"
import type { ProtoObject, ResourceSpec } from "./resource-spec.js"

/** Turns resource objects into bytes and back (implemented over the xDS protos by a layer). */
export interface XdsCodecShape {
  /** Encodes a message of the type URL's type (a generator's typed resource, or a decoded one). */
  encode(typeUrl: string, resource: object): Uint8Array
  /** Bytes off the wire or from the cache, of any type URL: read as data (resource-spec.ts). */
  readonly decode: (typeUrl: string, bytes: Uint8Array) => ProtoObject
}

export class XdsCodec extends Context.Tag("mesh/XdsCodec")<XdsCodec, XdsCodecShape>() {}

export interface EncodedResource {
  readonly name: string
  /** Digest of the bytes: the delta resource version. */
  readonly version: string
  readonly resource: AnyMessage
}

export interface CacheOptions {
  readonly enabled: boolean
  readonly maxSize: number
  readonly enableCds: boolean
  readonly enableRds: boolean
  /** PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL: how often the server calls `clearIndex` (unset or 0 = never). */
  readonly indexClearInterval?: Duration.Duration
  /** PILOT_XDS_CACHE_STATS: count hits and misses (`xds_cache_reads`). */
  readonly stats?: boolean
}

export type EvictionReason = "size" | "clear"

/** Where the cache reports what the metrics show; every hook is optional. */
export interface CacheObserver {
  readonly read?: (hit: boolean) => void
  readonly evicted?: (reason: EvictionReason, count: number) => void
  /** Entries held of one type, after every change. */
  readonly size?: (typeUrl: string, entries: number) => void
}

export const defaultCacheOptions: CacheOptions = { enabled: true, maxSize: 60000, enableCds: true, enableRds: true }

export interface CacheStats {
  readonly hits: number
  readonly misses: number
  readonly size: number
  readonly encodedBytes: number
  readonly evictions: number
}

/**
 * A slot for state kept per cache by code that reads through it (the responder's memo tables and
 * generator notice log): the slot object is the key, `make` builds the state on first use.
 */
export type CacheLocal<T> = LocalSlot<T>

export interface ResourceCache {
  readonly resolve: (typeUrl: string, specs: ReadonlyArray<ResourceSpec>) => ReadonlyArray<EncodedResource>
  /** Whether some version of the resource is cached (it was asked for before). */
  readonly holds: (typeUrl: string, name: string) => boolean
  readonly stats: () => CacheStats
  readonly clear: () => void
  /** Drops superseded versions not read since the previous call; returns how many. */
  readonly clearIndex: () => number
  /**
   * This cache's state in `slot`: what is memoised over its entries lives and dies with it, so
   * two servers in one process, each with its own cache, share nothing.
   */
  readonly local: Locals
}

interface Entry {
  readonly encoded: EncodedResource
  readonly typeUrl: string
  /** `typeUrl\0name`: the index slot. */
  readonly resource: string
  /** Read (or stored) since the last `clearIndex`. */
  read: boolean
}

export const makeResourceCache = (
  codec: XdsCodecShape,
  options: CacheOptions = defaultCacheOptions,
  observer: CacheObserver = {},
): ResourceCache => {
  /** Insertion order = eviction order. */
  const entries = new Map<string, Entry>()
  const index = new Map<string, Set<string>>()
  const sizeByType = new Map<string, number>()
  let hits = 0
  let misses = 0
  let encodedBytes = 0
  let evictions = 0
  const countStats = options.stats === true
  const local = makeLocals()
  const resize = (typeUrl: string, by: number) => {
    const n = (sizeByType.get(typeUrl) ?? 0) + by
    sizeByType.set(typeUrl, n)
    observer.size?.(typeUrl, n)
  }
  const remove = (key: string, entry: Entry) => {
    entries.delete(key)
    const keys = index.get(entry.resource)
    keys?.delete(key)
    if (keys?.size === 0) index.delete(entry.resource)
    resize(entry.typeUrl, -1)
  }
  const cacheable = (typeUrl: string): boolean =>
    options.enabled &&
    options.maxSize > 0 &&
    (typeUrl !== TypeUrl.Cluster || options.enableCds) &&
    (typeUrl !== TypeUrl.Route || options.enableRds)

  const encode = (typeUrl: string, spec: ResourceSpec): EncodedResource => {
    misses++
    if (countStats) observer.read?.(false)
    const value = codec.encode(typeUrl, spec.build())
    encodedBytes += value.length
    return { name: spec.name, version: digest(value), resource: { type_url: typeUrl, value } }
  }

  const resolve = (typeUrl: string, specs: ReadonlyArray<ResourceSpec>): ReadonlyArray<EncodedResource> => {
    if (!cacheable(typeUrl)) return specs.map((spec) => encode(typeUrl, spec))
    return specs.map((spec) => {
      const resource = `${typeUrl}\u0000${spec.name}`
      const key = `${resource}\u0000${spec.key}`
      const hit = entries.get(key)
      if (hit !== undefined) {
        hits++
        if (countStats) observer.read?.(true)
        hit.read = true
        return hit.encoded
      }
      const encoded = encode(typeUrl, spec)
      entries.set(key, { encoded, typeUrl, resource, read: true })
      const keys = index.get(resource)
      if (keys === undefined) index.set(resource, new Set([key]))
      else keys.add(key)
      resize(typeUrl, 1)
      if (entries.size > options.maxSize) {
        const oldest = entries.entries().next()
        if (!oldest.done) {
          remove(oldest.value[0], oldest.value[1])
          evictions++
          observer.evicted?.("size", 1)
        }
      }
      return encoded
    })
  }

  const clearIndex = (): number => {
    let dropped = 0
    for (const keys of [...index.values()]) {
      if (keys.size < 2) continue
      for (const key of [...keys]) {
        const entry = entries.get(key)
        if (entry === undefined || entry.read || keys.size < 2) continue
        remove(key, entry)
        dropped++
      }
    }
    for (const entry of entries.values()) entry.read = false
    if (dropped > 0) {
      evictions += dropped
      observer.evicted?.("clear", dropped)
    }
    return dropped
  }

  return {
    resolve,
    holds: (typeUrl, name) => index.has(`${typeUrl}\u0000${name}`),
    stats: () => ({ hits, misses, size: entries.size, encodedBytes, evictions }),
    clear: () => {
      entries.clear()
      index.clear()
      for (const typeUrl of sizeByType.keys()) resize(typeUrl, -(sizeByType.get(typeUrl) ?? 0))
    },
    clearIndex,
    local,
  }
}
