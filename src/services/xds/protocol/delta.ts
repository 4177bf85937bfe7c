/**
 * Delta (incremental) ADS protocol rules for one stream, as pure functions.
 *
 * - The first request of a type opens the watch; its `initial_resource_versions` tell what the
 *   client already holds, so unchanged resources are not resent.
 * - `resource_names_subscribe` / `resource_names_unsubscribe` change the watch without a full
 *   resend; `*` toggles the wildcard subscription (CDS and LDS start wildcard when the first
 *   request names nothing).
 * - A response carries only resources whose version differs from what the client holds, and
 *   names the resources that went away in `removed_resources`.
 * - Nonces and NACKs follow the state-of-the-world rules: stale nonces are ignored, a NACK is
 *   recorded and not answered.
 */
import type { DeltaDiscoveryRequest } from "./messages.js"
import { isNack } from "./messages.js"
import { nackMessage } from "./request-limits.js"
import { isWildcardType } from "./type-urls.js"

export interface DeltaWatch {
  readonly typeUrl: string
  readonly subscribed: ReadonlySet<string>
  readonly wildcard: boolean
  /** Name → version the client holds (as far as the server knows). */
  readonly known: ReadonlyMap<string, string>
  /** Names subscribed since the last response: answered even when they do not exist. */
  readonly pending: ReadonlySet<string>
  readonly nonceSent?: string
  readonly nonceAcked?: string
  readonly lastError?: string
}

export interface DeltaState {
  readonly watches: ReadonlyMap<string, DeltaWatch>
}

export const emptyDeltaState: DeltaState = { watches: new Map() }

export type DeltaEvent =
  | { readonly _tag: "Subscribe"; readonly reconnect: boolean }
  | { readonly _tag: "Ack"; readonly added: number; readonly removed: number }
  | { readonly _tag: "Nack"; readonly error: string }
  | { readonly _tag: "StaleNonce"; readonly nonce: string }

export interface DeltaStep {
  readonly state: DeltaState
  readonly event: DeltaEvent
  readonly respond: boolean
}

const withWatch = (state: DeltaState, watch: DeltaWatch): DeltaState => {
  const watches = new Map(state.watches)
  watches.set(watch.typeUrl, watch)
  return { watches }
}

/** Whether everything the client holds is still wanted (else the next request forgets the rest). */
const holdsOnlyWanted = (watch: DeltaWatch): boolean => {
  if (watch.wildcard) return true
  for (const name of watch.known.keys()) if (!watch.subscribed.has(name)) return false
  return true
}

export const onDeltaRequest = (state: DeltaState, request: DeltaDiscoveryRequest): DeltaStep => {
  const typeUrl = request.type_url ?? ""
  const previous = state.watches.get(typeUrl)
  const nonce = request.response_nonce ?? ""
  const subscribe = request.resource_names_subscribe ?? []
  const unsubscribe = request.resource_names_unsubscribe ?? []

  if (previous !== undefined && nonce !== "" && previous.nonceSent !== undefined && nonce !== previous.nonceSent) {
    return { state, event: { _tag: "StaleNonce", nonce }, respond: false }
  }

  if (previous === undefined) {
    const subscribed = new Set(subscribe)
    const star = subscribed.delete("*")
    const wildcard = star || (isWildcardType(typeUrl) && subscribed.size === 0)
    const known = new Map(Object.entries(request.initial_resource_versions ?? {}))
    const watch: DeltaWatch = { typeUrl, subscribed, wildcard, known, pending: new Set(subscribed) }
    if (isNack(request)) {
      const error = nackMessage(request)
      return { state: withWatch(state, { ...watch, lastError: error }), event: { _tag: "Nack", error }, respond: false }
    }
    return {
      state: withWatch(state, watch),
      event: { _tag: "Subscribe", reconnect: known.size > 0 || nonce !== "" },
      respond: true,
    }
  }

  if (subscribe.length === 0 && unsubscribe.length === 0 && holdsOnlyWanted(previous)) {
    // A plain ACK (or NACK), by far the most common request: the names and what the client
    // holds stay as they are, in the same objects (nothing to copy, nothing derived to redo).
    const base: DeltaWatch = { ...previous, ...(nonce !== "" ? { nonceAcked: nonce } : {}) }
    if (isNack(request)) {
      const error = nackMessage(request)
      return { state: withWatch(state, { ...base, lastError: error }), event: { _tag: "Nack", error }, respond: false }
    }
    const { lastError: _cleared, ...acked } = base
    return {
      state: withWatch(state, nonce !== "" ? acked : base),
      event: { _tag: "Ack", added: 0, removed: 0 },
      respond: false,
    }
  }

  const subscribed = new Set(previous.subscribed)
  const known = new Map(previous.known)
  const pending = new Set(previous.pending)
  let wildcard = previous.wildcard
  let added = 0
  let namesChanged = false
  for (const name of subscribe) {
    if (name === "*") {
      if (!wildcard) added++
      wildcard = true
    } else if (!subscribed.has(name)) {
      subscribed.add(name)
      pending.add(name)
      added++
      namesChanged = true
    }
  }
  for (const name of unsubscribe) {
    if (name === "*") {
      wildcard = false
    } else {
      if (subscribed.delete(name)) namesChanged = true
      pending.delete(name)
    }
    known.delete(name)
  }
  // Resources held only through the wildcard are forgotten when the wildcard goes.
  if (!wildcard) for (const name of [...known.keys()]) if (!subscribed.has(name)) known.delete(name)

  const base: DeltaWatch = {
    ...previous,
    // The same names keep the same set: what is derived from it stays cached across ACKs.
    subscribed: namesChanged ? subscribed : previous.subscribed,
    wildcard,
    known,
    pending,
    ...(nonce !== "" ? { nonceAcked: nonce } : {}),
  }
  if (isNack(request)) {
    const error = nackMessage(request)
    return {
      state: withWatch(state, { ...base, lastError: error }),
      event: { _tag: "Nack", error },
      respond: added > 0,
    }
  }
  const { lastError: _cleared, ...acked } = base
  return {
    state: withWatch(state, nonce !== "" ? acked : base),
    event: { _tag: "Ack", added, removed: unsubscribe.length },
    respond: added > 0,
  }
}

export interface VersionedName {
  readonly name: string
  readonly version: string
}

export interface DeltaPlan {
  /** Names whose resources must be sent (new or changed). */
  readonly send: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
}

/** Which names a watch wants out of everything that exists of its type. */
export const deltaWants = (watch: DeltaWatch, name: string): boolean => watch.wildcard || watch.subscribed.has(name)

/**
 * Compares the resources that exist now (already filtered to what the watch wants) with what
 * the client holds.
 */
export const planDelta = (watch: DeltaWatch, current: ReadonlyArray<VersionedName>): DeltaPlan => {
  const send: Array<string> = []
  let held = 0
  for (const { name, version } of current) {
    const known = watch.known.get(name)
    if (known !== undefined) held++
    if (known !== version) send.push(name)
  }
  // The common case on a push: everything the client holds still exists, nothing is pending.
  if (held === watch.known.size && watch.pending.size === 0) return { send, removed: [] }
  const present = new Set(current.map((r) => r.name))
  const removed = new Set<string>()
  for (const name of watch.known.keys()) if (!present.has(name)) removed.add(name)
  for (const name of watch.pending) if (!present.has(name)) removed.add(name)
  return { send, removed: [...removed].sort() }
}

/** Records a delta response sent (or a plan with nothing to send, which only clears `pending`). */
export const onDeltaSent = (
  state: DeltaState,
  typeUrl: string,
  sent: {
    readonly nonce?: string
    readonly versions: ReadonlyArray<VersionedName>
    readonly removed: ReadonlyArray<string>
  },
): DeltaState => {
  const previous = state.watches.get(typeUrl)
  if (previous === undefined) return state
  const known = new Map(previous.known)
  for (const { name, version } of sent.versions) known.set(name, version)
  for (const name of sent.removed) known.delete(name)
  return withWatch(state, {
    ...previous,
    known,
    pending: previous.pending.size === 0 ? previous.pending : new Set(),
    ...(sent.nonce !== undefined ? { nonceSent: sent.nonce } : {}),
  })
}
