/**
 * The vocabulary every generator and the cache share: a resource as a plain proto-shaped object,
 * and a resource to build, keyed by everything its bytes depend on (the cache encodes it once per
 * key). Its own file so that generators, the cache and codecs import it without importing one
 * another.
 */

export type ProtoObject = Readonly<Record<string, unknown>>

export interface ResourceSpec {
  readonly name: string
  /** Everything the resource's bytes depend on. */
  readonly key: string
  readonly build: () => ProtoObject
}
