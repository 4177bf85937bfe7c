/**
 * The agent's xDS proxy (spec 001 §1, issue 6 §3): contracts and the replay rule. Each downstream
 * ADS stream (proxy or proxyless gRPC application on the local socket) gets one upstream stream to
 * the discovery server; messages pass through as bytes. When the upstream stream breaks, the
 * agent reconnects with backoff and replays the downstream's subscriptions so the downstream
 * stream survives.
 */
import { Context, type Effect } from "effect"
import { isWildcardType } from "../../xds/protocol/type-urls.js"

export interface XdsProxyShape {
  /** The socket path the proxy listens on. */
  readonly socketPath: string
  /** Whether a response has come from upstream on any stream (readiness). */
  readonly receivedResponse: Effect.Effect<boolean>
  /** Downstream streams currently open. */
  readonly activeStreams: Effect.Effect<number>
}

export class XdsProxy extends Context.Tag("mesh/agent/XdsProxy")<XdsProxy, XdsProxyShape>() {}

/** The fields of DiscoveryRequest / DeltaDiscoveryRequest the replay needs (proto-loader objects). */
export interface SotwRequest {
  readonly version_info?: string
  readonly node?: unknown
  readonly resource_names?: ReadonlyArray<string>
  readonly type_url?: string
  readonly response_nonce?: string
  readonly error_detail?: unknown
  readonly [key: string]: unknown
}

export interface DeltaRequest {
  readonly node?: unknown
  readonly type_url?: string
  readonly resource_names_subscribe?: ReadonlyArray<string>
  readonly resource_names_unsubscribe?: ReadonlyArray<string>
  readonly initial_resource_versions?: Readonly<Record<string, string>>
  readonly response_nonce?: string
  readonly error_detail?: unknown
  readonly [key: string]: unknown
}

/** What a downstream stream has asked for so far, per type URL (in first-seen order). */
export interface ReplayState<R> {
  readonly node: unknown
  readonly byType: ReadonlyMap<string, R>
}

export const emptyReplay = <R>(): ReplayState<R> => ({ node: undefined, byType: new Map() })

/** SotW: the latest request per type is the subscription. */
export const recordSotw = (state: ReplayState<SotwRequest>, request: SotwRequest): ReplayState<SotwRequest> => {
  const node = state.node ?? request.node
  const typeUrl = request.type_url ?? ""
  const byType = new Map(state.byType)
  byType.set(typeUrl, request)
  return { node, byType }
}

/**
 * SotW replay for a new upstream stream: each type's last subscription with the version the
 * downstream last accepted, no nonce (a new stream has none) and no error; the node on the first.
 */
export const sotwReplay = (state: ReplayState<SotwRequest>): ReadonlyArray<SotwRequest> =>
  [...state.byType.values()].map((request, i) => {
    const { response_nonce: _nonce, error_detail: _error, node: _node, ...rest } = request
    return i === 0 && state.node !== undefined ? { ...rest, node: state.node } : rest
  })

/** Delta: accumulate the subscribed names per type. */
export const recordDelta = (state: ReplayState<DeltaRequest>, request: DeltaRequest): ReplayState<DeltaRequest> => {
  const node = state.node ?? request.node
  const typeUrl = request.type_url ?? ""
  const previous = state.byType.get(typeUrl)
  const names = new Set(previous?.resource_names_subscribe ?? [])
  for (const n of request.resource_names_subscribe ?? []) names.add(n)
  for (const n of request.resource_names_unsubscribe ?? []) names.delete(n)
  const byType = new Map(state.byType)
  byType.set(typeUrl, { type_url: typeUrl, resource_names_subscribe: [...names] })
  return { node, byType }
}

/** The fields of DeltaDiscoveryResponse the version tracking needs. */
export interface DeltaResponse {
  readonly type_url?: string
  readonly nonce?: string
  readonly resources?: ReadonlyArray<{ readonly name?: string; readonly version?: string }>
  readonly removed_resources?: ReadonlyArray<string>
}

/**
 * Delta: which resource versions the downstream holds, per type. A response counts only once the
 * downstream ACKs its nonce (a NACKed response changed nothing), so a reconnect's
 * `initial_resource_versions` name exactly what the downstream accepted.
 */
export interface DeltaVersions {
  /** Responses sent downstream and not yet ACKed or NACKed, by nonce. */
  readonly pending: ReadonlyMap<string, DeltaResponse>
  /** Type URL → resource name → version, as ACKed. */
  readonly accepted: ReadonlyMap<string, ReadonlyMap<string, string>>
}

export const emptyDeltaVersions: DeltaVersions = { pending: new Map(), accepted: new Map() }

/**
 * At most this many unanswered responses are remembered: a downstream answers every nonce, so
 * more only happens when it is stuck, and then the oldest are the first not to matter.
 */
export const MAX_PENDING_DELTA_RESPONSES = 64

/** A response passed downstream: remembered until the downstream answers its nonce. */
export const recordDeltaResponse = (versions: DeltaVersions, response: DeltaResponse): DeltaVersions => {
  if (!response.nonce) return versions
  const pending = new Map(versions.pending)
  pending.set(response.nonce, response)
  while (pending.size > MAX_PENDING_DELTA_RESPONSES) pending.delete(pending.keys().next().value!)
  return { pending, accepted: versions.accepted }
}

/**
 * A downstream request: an ACK applies the response it names, a NACK drops it; names it
 * unsubscribes are no longer held (a later subscription must not claim their old version).
 */
export const recordDeltaAnswer = (versions: DeltaVersions, request: DeltaRequest): DeltaVersions => {
  const nonce = request.response_nonce ?? ""
  const response = nonce === "" ? undefined : versions.pending.get(nonce)
  const unsubscribe = request.resource_names_unsubscribe ?? []
  if (response === undefined && unsubscribe.length === 0) return versions
  const pending = new Map(versions.pending)
  const accepted = new Map(versions.accepted)
  if (response !== undefined) {
    pending.delete(nonce)
    // a NACK (error_detail set) accepted nothing
    if (request.error_detail === undefined || request.error_detail === null) {
      const typeUrl = response.type_url ?? ""
      const held = new Map(accepted.get(typeUrl) ?? [])
      for (const r of response.resources ?? []) if (r.name) held.set(r.name, r.version ?? "")
      for (const name of response.removed_resources ?? []) held.delete(name)
      accepted.set(typeUrl, held)
    }
  }
  const typeUrl = request.type_url ?? ""
  if (unsubscribe.length > 0 && accepted.has(typeUrl)) {
    const held = new Map(accepted.get(typeUrl))
    for (const name of unsubscribe) held.delete(name)
    accepted.set(typeUrl, held)
  }
  return { pending, accepted }
}

/**
 * Delta replay for a new upstream stream: each type's accumulated subscription, with the
 * versions the downstream holds (of the names it still subscribes to, or all for a wildcard
 * subscription) as `initial_resource_versions`; the node on the first.
 */
export const deltaReplay = (
  state: ReplayState<DeltaRequest>,
  versions: DeltaVersions = emptyDeltaVersions,
): ReadonlyArray<DeltaRequest> =>
  [...state.byType.values()].map((request, i) => {
    const names = request.resource_names_subscribe ?? []
    const wildcard = names.includes("*") || (names.length === 0 && isWildcardType(request.type_url ?? ""))
    const held = [...(versions.accepted.get(request.type_url ?? "") ?? [])].filter(
      ([name]) => wildcard || names.includes(name),
    )
    const withVersions = held.length > 0 ? { ...request, initial_resource_versions: Object.fromEntries(held) } : request
    return i === 0 && state.node !== undefined ? { ...withVersions, node: state.node } : withVersions
  })
