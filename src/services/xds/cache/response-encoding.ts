/**
 * Encode once, share across connections, for whole responses: a DiscoveryResponse (or
 * DeltaDiscoveryResponse) sent to a thousand proxies carries the same resources to each, and
 * only its nonce (and version) is the proxy's own. The `resources` field (2 in both messages) is
 * encoded once per resource object and once per shared resources array; each response then
 * costs the encoding of its few scalar fields and a copy.
 *
 * The rest of a response is shared too: every connection pushed in one push gets the same
 * version and type, so those fields are encoded once per type and version and only the nonce
 * (field 5 of both messages) is written per response, by hand: a tag byte, a length, the text.
 *
 * A response object is encoded once however many connections it is written to: a push gives
 * the connections due the same response the same object (responder.ts).
 *
 * This relies on the protobuf wire format: a message's fields may come in any order, and a
 * repeated field's entries are the concatenation of its encoded elements, so
 * `encode({...scalars}) ++ nonce ++ encode({resources: [r1]}) ++ encode({resources: [r2]})`
 * decodes as the whole message. Resource objects must not change once sent (they are cache entries).
 */

interface WithResources {
  readonly resources?: ReadonlyArray<object> | null
  readonly nonce?: string | null
}

/** `nonce` is field 5, length-delimited, in DiscoveryResponse and DeltaDiscoveryResponse. */
const NONCE_TAG = (5 << 3) | 2

/** The encoded nonce field: tag, varint length, UTF-8 text. */
const nonceField = (nonce: string): Buffer => {
  const length = Buffer.byteLength(nonce)
  const header: Array<number> = [NONCE_TAG]
  for (let n = length; ; n >>>= 7) {
    if (n < 0x80) {
      header.push(n)
      break
    }
    header.push((n & 0x7f) | 0x80)
  }
  const bytes = Buffer.allocUnsafe(header.length + length)
  for (let i = 0; i < header.length; i++) bytes[i] = header[i]!
  bytes.write(nonce, header.length, "utf8")
  return bytes
}

/** Same keys with the same values (strings and numbers by value, empty arrays alike). */
const sameFields = (a: Record<string, unknown>, b: Record<string, unknown>): boolean => {
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    const x = a[key]
    const y = b[key]
    if (x === y) continue
    if (Array.isArray(x) && Array.isArray(y) && x.length === 0 && y.length === 0) continue
    return false
  }
  return true
}

export interface SharingEncoder<M> {
  /** The method's response serializer, encoding each resource once. */
  readonly serialize: (message: M) => Buffer
  /**
   * Encodes resource objects now that responses will carry (an endpoint change inside the
   * debounce window): the push's first response then only encodes its own fields.
   */
  readonly encodeAhead: (resources: ReadonlyArray<object>) => void
  /**
   * About how many bytes `serialize(message)` gives, without building it: the shared resources
   * section (encoded now if it was not, as the write would) and a bound on the other fields.
   * The writer's budget counts these.
   */
  readonly size: (message: M) => number
}

/** A generous bound on a response's fields besides its resources (type, version, nonce, ...). */
const FIELDS_BOUND = 256

/** Wraps a method's response serializer so that the resources of a response are encoded once. */
export const sharingResourceEncoding = <M extends WithResources>(
  serialize: (message: M) => Buffer,
): SharingEncoder<M> => {
  /** Resource object → its encoded entry of field 2 (tag, length, message). */
  const entries = new WeakMap<object, Buffer>()
  /** Resources array (shared by every connection watching the same names) → all its entries. */
  const sections = new WeakMap<ReadonlyArray<object>, Buffer>()
  const entry = (resource: object): Buffer => {
    let bytes = entries.get(resource)
    if (bytes === undefined) {
      bytes = serialize({ resources: [resource] } as unknown as M)
      entries.set(resource, bytes)
    }
    return bytes
  }
  /**
   * The fields other than resources and nonce, encoded, the last ones per type: the responses
   * of one push to a type carry the same version and type whatever resources they carry
   * (compared field by field; a differing one is encoded afresh and kept instead).
   */
  const scalars = new Map<unknown, { readonly rest: Record<string, unknown>; readonly bytes: Buffer }>()
  const sharedScalars = (message: M): Buffer => {
    const { nonce: _own, ...rest } = { ...message, resources: [] } as unknown as Record<string, unknown>
    const held = scalars.get(rest.type_url)
    if (held !== undefined && sameFields(held.rest, rest)) return held.bytes
    const bytes = serialize(rest as unknown as M)
    scalars.set(rest.type_url, { rest, bytes })
    return bytes
  }
  /** Whole responses: a push sends one response object to every connection due the same one. */
  const messages = new WeakMap<object, Buffer>()
  const sectionOf = (resources: ReadonlyArray<object>): Buffer => {
    let section = sections.get(resources)
    if (section === undefined) {
      section = Buffer.concat(resources.map(entry))
      sections.set(resources, section)
    }
    return section
  }
  const encode = (message: M): Buffer => {
    const resources = message.resources
    if (resources === undefined || resources === null || resources.length === 0) return serialize(message)
    const section = sectionOf(resources)
    const nonce = message.nonce
    if (typeof nonce !== "string" || nonce === "")
      return Buffer.concat([serialize({ ...message, resources: [] }), section])
    return Buffer.concat([sharedScalars(message), nonceField(nonce), section])
  }
  return {
    serialize: (message) => {
      let bytes = messages.get(message)
      if (bytes === undefined) {
        bytes = encode(message)
        messages.set(message, bytes)
      }
      return bytes
    },
    encodeAhead: (resources) => {
      for (const resource of resources) entry(resource)
    },
    size: (message) => {
      const done = messages.get(message)
      if (done !== undefined) return done.length
      const resources = message.resources
      if (resources === undefined || resources === null || resources.length === 0) return FIELDS_BOUND
      return sectionOf(resources).length + FIELDS_BOUND
    },
  }
}
