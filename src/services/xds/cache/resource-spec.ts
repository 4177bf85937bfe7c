/**
 * The vocabulary every generator and the cache share: a resource to build, typed by the message
 * of its type URL (protocol/xds-types.ts, generated from the xDS protos), and keyed by everything
 * its bytes depend on (the cache encodes it once per key). Its own file so that generators, the
 * cache and codecs import it without importing one another.
 */
import type { XdsResourceMessage } from "../protocol/xds-types.js"

/**
 * A proto-shaped object of no particular message type. What stays untyped, and why:
 * - EnvoyFilter patches: user-supplied proto-JSON, converted and merged into our messages
 *   (proxygen/envoy-filter/**); their shape is checked against the protos at run time, not here.
 * - Struct payloads (metadata, filter state): free-form JSON by design (`toStruct`).
 * - The agent's xDS proxy (agent/xds-proxy, layers/agent/xds-proxy): forwards upstream responses
 *   as bytes; it decodes only NDS tables (its DNS proxy consumes them), ECDS TypedExtensionConfigs
 *   when Wasm remote load is on (modules fetched, configs rewritten, re-encoded), and on delta
 *   streams the envelope (names and versions to replay). What it decodes is whatever the upstream
 *   sent, so it is read as data.
 * - Debug pages and config dumps (debug/config-dump.ts, xds-client): decoded responses shown as
 *   JSON, read field by field as data.
 * - Decoding in the codec (`XdsCodec.decode`): bytes off the wire, of any type URL.
 */
export type ProtoObject = Readonly<Record<string, unknown>>

/**
 * A built message read as data, field by field (EnvoyFilter patching, tests): the typed
 * interfaces have no index signature, so reading them generically goes through here.
 */
export const asProtoData = (message: object): ProtoObject => message as ProtoObject

/** A resource of message type `T` (its type URL's interface, e.g. `ResourceSpec<Cluster>`). */
export interface ResourceSpec<T extends XdsResourceMessage = XdsResourceMessage> {
  readonly name: string
  /** Everything the resource's bytes depend on. */
  readonly key: string
  readonly build: () => T
}
