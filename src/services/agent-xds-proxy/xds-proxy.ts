/**
 * The agent's xDS proxy (spec 001 §1, issue 6 §3): contracts and the replay rule. Each downstream
 * ADS stream (proxy or proxyless gRPC application on the local socket) gets one upstream stream to
 * the discovery server; messages pass through as bytes. When the upstream stream breaks, the
 * agent reconnects with backoff and replays the downstream's subscriptions so the downstream
 * stream survives.
 */
import { Context, type Effect } from "effect"

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

export const deltaReplay = (state: ReplayState<DeltaRequest>): ReadonlyArray<DeltaRequest> =>
  [...state.byType.values()].map((request, i) =>
    i === 0 && state.node !== undefined ? { ...request, node: state.node } : request,
  )
