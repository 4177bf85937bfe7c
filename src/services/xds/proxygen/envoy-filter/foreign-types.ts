/**
 * Typed configs of types the xDS server's codec does not load, encoded before they reach it.
 * The codec knows the Envoy types the generators write; an EnvoyFilter may add a filter of any
 * other (Lua, a rate limiter, ...), whose inline form the codec would encode as an empty Any. Such
 * values are encoded here, with the protos read for EnvoyFilter patching, into the
 * `{type_url, value}` form every codec passes through unchanged. Known types stay inline (what
 * the debug dump and the tests read); only the paths holding a foreign value are copied.
 */
import { codecKnowsType, encodeAny } from "./proto-types.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value)

/** `value` with every inline Any of a type the codec does not know encoded; the same object if none. */
export const encodeForeignTypedConfigs = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    let out: Array<unknown> | undefined
    value.forEach((item, i) => {
      const sealed = encodeForeignTypedConfigs(item)
      if (sealed !== item) {
        out ??= [...value]
        out[i] = sealed
      }
    })
    return out ?? value
  }
  if (!isRecord(value)) return value
  let out: Record<string, unknown> | undefined
  for (const [key, field] of Object.entries(value)) {
    const sealed = encodeForeignTypedConfigs(field)
    if (sealed !== field) {
      out ??= { ...value }
      out[key] = sealed
    }
  }
  const fields = out ?? value
  const typeUrl = fields["@type"]
  if (typeof typeUrl !== "string" || codecKnowsType(typeUrl)) return fields
  const { "@type": _type, ...rest } = fields
  return encodeAny(typeUrl, rest) ?? fields
}
