/**
 * Encode once: resources are built and encoded only when no resource with the same type, name
 * and dependency key was encoded before; every connection that needs it shares the same bytes.
 * Bounded by `PILOT_XDS_CACHE_SIZE` (oldest entries evicted first). With the cache disabled
 * (`PILOT_ENABLE_XDS_CACHE=false`, or per type with `PILOT_ENABLE_CDS_CACHE` /
 * `PILOT_ENABLE_RDS_CACHE`), every request encodes afresh.
 */
import { Context } from "effect"
import type { ProtoObject, ResourceSpec } from "./grpc-gen.js"
import type { AnyMessage } from "./messages.js"
import { digest } from "./push-context.js"
import { TypeUrl } from "./type-urls.js"

/** Turns resource objects into bytes and back (implemented over the xDS protos by a layer). */
export interface XdsCodecShape {
  readonly encode: (typeUrl: string, resource: ProtoObject) => Uint8Array
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
}

export const defaultCacheOptions: CacheOptions = { enabled: true, maxSize: 60000, enableCds: true, enableRds: true }

export interface CacheStats {
  readonly hits: number
  readonly misses: number
  readonly size: number
  readonly encodedBytes: number
}

export interface ResourceCache {
  readonly resolve: (typeUrl: string, specs: ReadonlyArray<ResourceSpec>) => ReadonlyArray<EncodedResource>
  readonly stats: () => CacheStats
  readonly clear: () => void
}

export const makeResourceCache = (codec: XdsCodecShape, options: CacheOptions = defaultCacheOptions): ResourceCache => {
  const entries = new Map<string, EncodedResource>()
  let hits = 0
  let misses = 0
  let encodedBytes = 0
  const cacheable = (typeUrl: string): boolean =>
    options.enabled &&
    options.maxSize > 0 &&
    (typeUrl !== TypeUrl.Cluster || options.enableCds) &&
    (typeUrl !== TypeUrl.Route || options.enableRds)

  const encode = (typeUrl: string, spec: ResourceSpec): EncodedResource => {
    misses++
    const value = codec.encode(typeUrl, spec.build())
    encodedBytes += value.length
    return { name: spec.name, version: digest(value), resource: { type_url: typeUrl, value } }
  }

  const resolve = (typeUrl: string, specs: ReadonlyArray<ResourceSpec>): ReadonlyArray<EncodedResource> => {
    if (!cacheable(typeUrl)) return specs.map((spec) => encode(typeUrl, spec))
    return specs.map((spec) => {
      const key = `${typeUrl}\u0000${spec.name}\u0000${spec.key}`
      const hit = entries.get(key)
      if (hit !== undefined) {
        hits++
        return hit
      }
      const encoded = encode(typeUrl, spec)
      entries.set(key, encoded)
      if (entries.size > options.maxSize) {
        const oldest = entries.keys().next()
        if (!oldest.done) entries.delete(oldest.value)
      }
      return encoded
    })
  }

  return {
    resolve,
    stats: () => ({ hits, misses, size: entries.size, encodedBytes }),
    clear: () => entries.clear(),
  }
}
