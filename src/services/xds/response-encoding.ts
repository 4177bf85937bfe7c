/**
 * Encode once, share across connections, for whole responses: a DiscoveryResponse (or
 * DeltaDiscoveryResponse) sent to a thousand proxies carries the same resources to each, and
 * only its nonce (and version) is the proxy's own. The `resources` field (2 in both messages) is
 * encoded once per resource object and once per shared resources array; each response then
 * costs the encoding of its few scalar fields and a copy.
 *
 * This relies on the protobuf wire format: a message's fields may come in any order, and a
 * repeated field's entries are the concatenation of its encoded elements, so
 * `encode({...scalars}) ++ encode({resources: [r1]}) ++ encode({resources: [r2]})` decodes as
 * the whole message. Resource objects must not change once sent (they are cache entries).
 */

interface WithResources {
  readonly resources?: ReadonlyArray<object> | null
}

/** Wraps a method's response serializer so that the resources of a response are encoded once. */
export const sharingResourceEncoding = <M extends WithResources>(
  serialize: (message: M) => Buffer,
): ((message: M) => Buffer) => {
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
  return (message) => {
    const resources = message.resources
    if (resources === undefined || resources === null || resources.length === 0) return serialize(message)
    let section = sections.get(resources)
    if (section === undefined) {
      section = Buffer.concat(resources.map(entry))
      sections.set(resources, section)
    }
    return Buffer.concat([serialize({ ...message, resources: [] }), section])
  }
}
