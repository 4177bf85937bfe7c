/**
 * Reading the type of an encoded ADS response without decoding it: the xDS proxy relays most
 * responses (clusters, endpoints, routes: often megabytes) as bytes and only decodes the few
 * types it acts on (NDS, ECDS), so it must tell them apart at the cost of a field scan.
 */

/** `type_url` is field 4, length-delimited, in both DiscoveryResponse and DeltaDiscoveryResponse. */
const TYPE_URL_FIELD = 4

const WIRE_VARINT = 0
const WIRE_FIXED64 = 1
const WIRE_LENGTH_DELIMITED = 2
const WIRE_FIXED32 = 5

/** A varint at `offset`: [value, next offset]; undefined when it runs past the end. */
const readVarint = (bytes: Uint8Array, offset: number): [number, number] | undefined => {
  let value = 0
  let shift = 0
  for (let i = offset; i < bytes.length; i++) {
    const b = bytes[i]!
    value += (b & 0x7f) * 2 ** shift
    if ((b & 0x80) === 0) return [value, i + 1]
    shift += 7
    if (shift > 63) return undefined
  }
  return undefined
}

const decoder = new TextDecoder()

/**
 * The `type_url` of an encoded (Delta)DiscoveryResponse; undefined when absent or when the bytes
 * are not a well-formed message (those are relayed as they are, and the downstream NACKs them).
 * Only top-level field headers are read: each resource entry is skipped by its length.
 */
export const responseTypeUrl = (bytes: Uint8Array): string | undefined => {
  let typeUrl: string | undefined
  let offset = 0
  while (offset < bytes.length) {
    const tag = readVarint(bytes, offset)
    if (tag === undefined) return undefined
    const [key, afterTag] = tag
    const field = Math.floor(key / 8)
    switch (key & 7) {
      case WIRE_VARINT: {
        const skipped = readVarint(bytes, afterTag)
        if (skipped === undefined) return undefined
        offset = skipped[1]
        break
      }
      case WIRE_FIXED64:
        offset = afterTag + 8
        break
      case WIRE_FIXED32:
        offset = afterTag + 4
        break
      case WIRE_LENGTH_DELIMITED: {
        const length = readVarint(bytes, afterTag)
        if (length === undefined) return undefined
        const [size, start] = length
        const end = start + size
        if (end > bytes.length) return undefined
        // a singular field given twice: the last one counts (protobuf merge rule)
        if (field === TYPE_URL_FIELD) typeUrl = decoder.decode(bytes.subarray(start, end))
        offset = end
        break
      }
      default:
        return undefined
    }
  }
  return offset === bytes.length ? typeUrl : undefined
}
