/**
 * State-of-the-world ADS protocol rules for one stream, as pure functions: which requests are
 * new subscriptions, ACKs, NACKs or stale, and which need a response.
 *
 * - An empty nonce is a new watch, or a reconnect carrying the client's last `version_info`:
 *   both are answered.
 * - A nonce other than the last one sent on this stream is stale: ignored (counted).
 * - `error_detail` set = NACK: the error is recorded, the last ACKed version stays, no response.
 * - An ACK records nonce and version; it is answered only when the subscribed names changed.
 * - CDS and LDS with no names (or `*`) are wildcard subscriptions.
 */
import type { DiscoveryRequest } from "./messages.js"
import { isNack } from "./messages.js"
import { nackMessage } from "./request-limits.js"
import { isWildcardType } from "./type-urls.js"

export interface SotwWatch {
  readonly typeUrl: string
  /** Sorted, de-duplicated names (without `*`). */
  readonly names: ReadonlyArray<string>
  readonly wildcard: boolean
  readonly nonceSent?: string
  readonly versionSent?: string
  readonly nonceAcked?: string
  readonly versionAcked?: string
  /** Message of the last NACK, cleared by the next ACK. */
  readonly lastError?: string
  /** Version the last NACK rejected. */
  readonly versionNacked?: string
  /** Digest of the resource set last sent, to skip pushes that would resend the same bytes. */
  readonly digestSent?: string
  /**
   * The names as the last request listed them: a proxy repeats its list with every ACK, and a
   * list equal to the last one needs no normalizing to tell that the names did not change.
   */
  readonly requested?: ReadonlyArray<string>
}

export interface SotwState {
  readonly watches: ReadonlyMap<string, SotwWatch>
}

export const emptySotwState: SotwState = { watches: new Map() }

export type SotwEvent =
  | { readonly _tag: "Subscribe"; readonly reconnect: boolean }
  | { readonly _tag: "Ack"; readonly namesChanged: boolean }
  | { readonly _tag: "Nack"; readonly error: string }
  | { readonly _tag: "StaleNonce"; readonly nonce: string }

export interface SotwStep {
  readonly state: SotwState
  readonly event: SotwEvent
  /** Whether the request must be answered with the current resources of its type. */
  readonly respond: boolean
}

const normalizeNames = (names: ReadonlyArray<string> | undefined): { names: ReadonlyArray<string>; star: boolean } => {
  const set = new Set(names ?? [])
  const star = set.delete("*")
  return { names: [...set].sort(), star }
}

const sameNames = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((name, i) => name === b[i])

const withWatch = (state: SotwState, watch: SotwWatch): SotwState => {
  const watches = new Map(state.watches)
  watches.set(watch.typeUrl, watch)
  return { watches }
}

/** Applies one DiscoveryRequest to the stream state. */
export const onSotwRequest = (state: SotwState, request: DiscoveryRequest): SotwStep => {
  const typeUrl = request.type_url ?? ""
  const previous = state.watches.get(typeUrl)
  const requested = request.resource_names ?? []
  const { names, star } =
    previous?.requested !== undefined && sameNames(previous.requested, requested)
      ? { names: previous.names, star: requested.includes("*") }
      : normalizeNames(requested)
  const wildcard = star || (isWildcardType(typeUrl) && names.length === 0)
  const nonce = request.response_nonce ?? ""

  if (isNack(request)) {
    const error = nackMessage(request)
    // A NACK of a stale response is still only a stale request.
    if (previous !== undefined && nonce !== "" && previous.nonceSent !== undefined && nonce !== previous.nonceSent) {
      return { state, event: { _tag: "StaleNonce", nonce }, respond: false }
    }
    const base: SotwWatch = previous ?? { typeUrl, names, wildcard }
    const watch: SotwWatch = {
      ...base,
      lastError: error,
      ...(request.version_info !== undefined ? { versionNacked: request.version_info } : {}),
    }
    return { state: withWatch(state, watch), event: { _tag: "Nack", error }, respond: false }
  }

  if (nonce === "" || previous === undefined) {
    // New watch; or a reconnect (version_info set, nonce empty or from another server instance).
    const watch: SotwWatch = {
      typeUrl,
      names,
      wildcard,
      requested,
      ...(request.version_info ? { versionAcked: request.version_info } : {}),
    }
    return {
      state: withWatch(state, watch),
      event: { _tag: "Subscribe", reconnect: (request.version_info ?? "") !== "" || nonce !== "" },
      respond: true,
    }
  }

  if (previous.nonceSent !== nonce) {
    return { state, event: { _tag: "StaleNonce", nonce }, respond: false }
  }

  const namesChanged = previous.wildcard !== wildcard || !sameNames(previous.names, names)
  const { lastError: _cleared, ...rest } = previous
  const watch: SotwWatch = {
    ...rest,
    // The same names keep the same array: what is derived from it stays cached across ACKs.
    names: namesChanged ? names : previous.names,
    wildcard,
    requested,
    nonceAcked: nonce,
    versionAcked: request.version_info ?? "",
  }
  // Dropping every name of a named type is an unsubscribe: nothing to send.
  const respond = namesChanged && (wildcard || names.length > 0)
  return { state: withWatch(state, watch), event: { _tag: "Ack", namesChanged }, respond }
}

/** Records a response sent for a type. */
export const onSotwSent = (
  state: SotwState,
  typeUrl: string,
  sent: { readonly nonce: string; readonly version: string; readonly digest: string },
): SotwState => {
  const previous = state.watches.get(typeUrl)
  if (previous === undefined) return state
  return withWatch(state, { ...previous, nonceSent: sent.nonce, versionSent: sent.version, digestSent: sent.digest })
}

/** Whether a push of a resource set with this digest would change what the client holds. */
export const sotwNeedsPush = (watch: SotwWatch, digest: string): boolean => watch.digestSent !== digest
