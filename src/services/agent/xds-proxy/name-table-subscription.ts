/**
 * The agent's own NDS subscription (spec 001 part 1 rule 4): when the DNS proxy runs, the xDS
 * proxy asks the discovery server for the name table on every upstream stream, after the
 * downstream's first request (which carries the node, so the server knows the proxy and whether
 * its metadata has `DNS_CAPTURE`: it sends a table to capturing sidecars only). The responses are
 * the agent's: decoded, handed to the DNS proxy, ACKed (or NACKed) upstream by the agent, never
 * passed to the downstream, which did not ask for them.
 *
 * A reconnect asks again with what the agent accepted last (the SotW version, the delta
 * resource version), so an unchanged table need not be resent.
 */

import { TypeUrl } from "../../xds/protocol/type-urls.js"
import type { NameInfo, NameTable } from "../../xds/proxygen/nds/name-table.js"
import type { DeltaRequest, SotwRequest } from "./xds-proxy.js"

export const NAME_TABLE_TYPE_URL = TypeUrl.NameTable

/** google.rpc.Code INVALID_ARGUMENT: the status of a NACK, as the proxy's own NACKs carry. */
const NACK_CODE = 3

/** What the agent holds of its subscription on one downstream stream. */
export interface NameTableSubscription {
  /** Asked for since the downstream's first request: every new upstream stream asks again. */
  readonly subscribed: boolean
  /** SotW: the version_info last ACKed; delta: the version of the table resource last ACKed. */
  readonly accepted: string | undefined
}

export const notSubscribed: NameTableSubscription = { subscribed: false, accepted: undefined }

/** The SotW request that (re)subscribes: wildcard, with the version held when there is one. */
export const sotwNameTableRequest = (subscription: NameTableSubscription): SotwRequest => ({
  type_url: NAME_TABLE_TYPE_URL,
  resource_names: [],
  ...(subscription.accepted !== undefined ? { version_info: subscription.accepted } : {}),
})

/** The delta request that (re)subscribes: wildcard, naming the table version held. */
export const deltaNameTableRequest = (subscription: NameTableSubscription): DeltaRequest => ({
  type_url: NAME_TABLE_TYPE_URL,
  resource_names_subscribe: [],
  ...(subscription.accepted !== undefined ? { initial_resource_versions: { "": subscription.accepted } } : {}),
})

/** A decoded NameTable (proto-loader's object form, defaults omitted) with every field present. */
export const toNameTable = (decoded: unknown): NameTable => {
  const entries = (decoded as { table?: Record<string, Partial<NameInfo>> } | undefined)?.table ?? {}
  const table: Record<string, NameInfo> = {}
  for (const [host, info] of Object.entries(entries)) {
    table[host] = {
      ips: [...(info.ips ?? [])],
      registry: info.registry ?? "",
      ...(info.shortname ? { shortname: info.shortname } : {}),
      ...(info.namespace ? { namespace: info.namespace } : {}),
      ...(info.alt_hosts && info.alt_hosts.length > 0 ? { alt_hosts: [...info.alt_hosts] } : {}),
    }
  }
  return { table }
}

/** What to do with one NDS response. */
export interface NameTableOutcome {
  /** The table to give the DNS proxy; undefined = keep the one it has. */
  readonly table: NameTable | undefined
  /** The ACK or NACK to send upstream on the stream that delivered the response. */
  readonly reply: SotwRequest | DeltaRequest
  readonly subscription: NameTableSubscription
  /** Why the response was NACKed. */
  readonly rejected?: string
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The fields of a SotW response read here; `resources` are the `Any` values, decoded by `decode`. */
export interface SotwNameTableResponse {
  readonly version_info?: string
  readonly nonce?: string
  readonly resources?: ReadonlyArray<unknown>
}

/**
 * SotW: the response holds the whole table (one resource; none means an empty table, as for a
 * proxy the server sends no names). A table that cannot be decoded is NACKed with the version
 * last accepted, and the DNS proxy keeps its table.
 */
export const onSotwNameTable = (
  subscription: NameTableSubscription,
  response: SotwNameTableResponse,
  decode: (resource: unknown) => unknown,
): NameTableOutcome => {
  const nonce = response.nonce ?? ""
  try {
    const first = response.resources?.[0]
    const table = first === undefined ? { table: {} } : toNameTable(decode(first))
    const accepted = response.version_info ?? ""
    return {
      table,
      reply: { type_url: NAME_TABLE_TYPE_URL, version_info: accepted, response_nonce: nonce, resource_names: [] },
      subscription: { subscribed: true, accepted },
    }
  } catch (error) {
    const rejected = `name table: ${message(error)}`
    return {
      table: undefined,
      reply: {
        type_url: NAME_TABLE_TYPE_URL,
        version_info: subscription.accepted ?? "",
        response_nonce: nonce,
        resource_names: [],
        error_detail: { code: NACK_CODE, message: rejected },
      },
      subscription,
      rejected,
    }
  }
}

/** The fields of a delta response read here; each resource's `resource` is decoded by `decode`. */
export interface DeltaNameTableResponse {
  readonly nonce?: string
  readonly resources?: ReadonlyArray<{ readonly name?: string; readonly version?: string; readonly resource?: unknown }>
  readonly removed_resources?: ReadonlyArray<string>
}

/**
 * Delta: a resource replaces the table, a removal empties it, a response with neither changes
 * nothing (yet is ACKed).
 */
export const onDeltaNameTable = (
  subscription: NameTableSubscription,
  response: DeltaNameTableResponse,
  decode: (resource: unknown) => unknown,
): NameTableOutcome => {
  const nonce = response.nonce ?? ""
  try {
    const sent = response.resources?.find((r) => r.resource !== undefined && r.resource !== null)
    if (sent !== undefined) {
      const table = toNameTable(decode(sent.resource))
      return {
        table,
        reply: { type_url: NAME_TABLE_TYPE_URL, response_nonce: nonce },
        subscription: { subscribed: true, accepted: sent.version ?? "" },
      }
    }
    const removed = (response.removed_resources ?? []).length > 0
    return {
      table: removed ? { table: {} } : undefined,
      reply: { type_url: NAME_TABLE_TYPE_URL, response_nonce: nonce },
      subscription: removed ? { subscribed: true, accepted: undefined } : subscription,
    }
  } catch (error) {
    const rejected = `name table: ${message(error)}`
    return {
      table: undefined,
      reply: {
        type_url: NAME_TABLE_TYPE_URL,
        response_nonce: nonce,
        error_detail: { code: NACK_CODE, message: rejected },
      },
      subscription,
      rejected,
    }
  }
}
