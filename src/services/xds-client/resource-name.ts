/**
 * The name of an xDS resource read from its encoded bytes without decoding it. Cluster, Listener,
 * RouteConfiguration and Secret keep their name in field 1, ClusterLoadAssignment its cluster_name:
 * light benchmark clients that skip decoding still learn which resources a response carried (which
 * clusters an endpoint push touched) at the cost of a few varint reads per resource.
 */

/** Reads a varint at `at`; returns [value, next offset], or undefined past the end. */
const varint = (bytes: Uint8Array, at: number): [number, number] | undefined => {
  let value = 0
  let scale = 1
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    const byte = bytes[i]!
    value += (byte & 0x7f) * scale
    if ((byte & 0x80) === 0) return [value, i + 1]
    scale *= 128
  }
  return undefined
}

const decoder = new TextDecoder()

/** Field 1 as a string when it is length-delimited, else "" (a malformed message also gives ""). */
export const resourceNameOf = (bytes: Uint8Array): string => {
  let at = 0
  while (at < bytes.length) {
    const key = varint(bytes, at)
    if (key === undefined) return ""
    const [tag, afterKey] = key
    const field = Math.floor(tag / 8)
    const wire = tag & 7
    if (wire === 0) {
      const skipped = varint(bytes, afterKey)
      if (skipped === undefined) return ""
      at = skipped[1]
    } else if (wire === 1) at = afterKey + 8
    else if (wire === 5) at = afterKey + 4
    else if (wire === 2) {
      const length = varint(bytes, afterKey)
      if (length === undefined) return ""
      const [size, start] = length
      if (start + size > bytes.length) return ""
      if (field === 1) return decoder.decode(bytes.subarray(start, start + size))
      at = start + size
    } else return ""
  }
  return ""
}
