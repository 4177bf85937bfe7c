/**
 * Builds an Any in the inline form protobufjs encodes (`{"@type": url, ...fields}`), with the
 * fields checked at compile time against the message the URL names (xds-types.ts): a misspelt or
 * wrong-shaped field is a type error instead of a field protobufjs silently drops.
 */
import type { ProtoAny, XdsMessageByTypeUrl } from "./xds-types.js"

export type TypedUrl = keyof XdsMessageByTypeUrl

/** A message being filled in field by field (the generated interfaces are readonly). */
export type Draft<T> = { -readonly [K in keyof T]: T[K] }

/** The fields of an inline Any of type `url` (as `typed` built it); undefined for any other type. */
export const typedFields = <U extends TypedUrl>(
  any: ProtoAny | undefined,
  url: U,
): XdsMessageByTypeUrl[U] | undefined =>
  any?.["@type"] === url ? (any as unknown as XdsMessageByTypeUrl[U]) : undefined

export const typed = <U extends TypedUrl>(url: U, body: XdsMessageByTypeUrl[U]): ProtoAny => ({
  // "@type" first, as the objects were written before (debug output and JSON digests keep their order).
  "@type": url,
  ...body,
})
