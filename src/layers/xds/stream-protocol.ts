/**
 * What the stream loop (stream-loop.ts) is parameterised by: a `StreamProtocol` per protocol
 * (the pure step functions and how a response is built and recorded), the `StreamEnv` every
 * stream of a server shares, and the `StreamChannel` of one stream's transport.
 */
import type { Clock, Effect } from "effect"
import type { ProxyConnectionsShape } from "../../services/registry/autoregistration/proxy-connections.js"
import type { ResourceCache } from "../../services/xds/cache/resource-cache.js"
import type { NonceSource, ProxyInfo } from "../../services/xds/cache/responder.js"
import type { PushContext } from "../../services/xds/model/push-context.js"
import type { NotFoundByType } from "../../services/xds/protocol/connection-status.js"
import type { DebugCaller, DebugService, DebugStatusCode } from "../../services/xds/protocol/debug-type.js"
import type { Status } from "../../services/xds/protocol/messages.js"
import type { NameBudget } from "../../services/xds/protocol/name-budget.js"
import type { WatchProgress } from "../../services/xds/protocol/sync-state.js"
import type { WatchedHosts } from "../../services/xds/push/watched-hosts.js"
import type { ConnectionStatus } from "../../services/xds/server.js"
import type { Connection } from "./connections.js"
import type { Inbox } from "./inbox.js"
import type { NackSeries } from "./nack-series.js"
import type { XdsMetrics } from "./xds-metrics.js"

/** What the step functions of both protocols say a request was. */
export type StreamEvent =
  | { readonly _tag: "Subscribe"; readonly reconnect: boolean }
  | { readonly _tag: "Ack" }
  | { readonly _tag: "Nack"; readonly error: string }
  | { readonly _tag: "StaleNonce"; readonly nonce: string }

export interface StreamRequest {
  readonly type_url?: string
  readonly error_detail?: Status | null
}

export interface StreamWatch extends WatchProgress {
  readonly typeUrl: string
  readonly wildcard: boolean
}

/** A built response: `response` is undefined when there is nothing to send. */
export interface BuiltResponse<Res> {
  readonly response: Res | undefined
  /** Resources taken from a set resolved for another connection (cache reads saved). */
  readonly sharedReads: number
  /** Why each requested name without a resource has none. */
  readonly notFound: ReadonlyArray<string>
}

/**
 * What one protocol brings to the stream loop. `reply` is the event of the request being
 * answered, or undefined for a push.
 */
export interface StreamProtocol<
  Req extends StreamRequest,
  Res,
  State,
  Watch extends StreamWatch,
  Event extends StreamEvent,
  Built extends BuiltResponse<Res>,
> {
  /** The log scope of its streams. */
  readonly logScope: string
  /** How the log names its new streams ("new connection", "new delta connection"). */
  readonly newConnection: string
  /**
   * How a busy stream's requests queue (inbox.ts): one per type URL, the latest replacing the one
   * before (only the latest matters), or each as it came (their changes add up).
   */
  readonly coalescePerType: boolean
  /** Queued requests a stream may hold (after coalescing); one more ends it. */
  readonly maxPending: number
  readonly empty: State
  readonly step: (
    state: State,
    request: Req,
  ) => { readonly state: State; readonly event: Event; readonly respond: boolean }
  readonly watches: (state: State) => ReadonlyMap<string, Watch>
  /** The names a push compares with the hosts it changed. */
  readonly names: (watch: Watch) => Iterable<string>
  /** Whether the next push answers the watch whatever it changed (delta: names still pending). */
  readonly due: (watch: Watch) => boolean
  readonly build: (
    push: PushContext,
    watch: Watch,
    nonce: NonceSource,
    reply: Event | undefined,
    proxy: ProxyInfo | undefined,
    cache: ResourceCache,
    share: boolean,
    /**
     * The hosts an endpoint-only push changed: a SotW endpoint response to a data-plane proxy
     * may then carry only their clusters (the proxy keeps the others, as the protocol says for
     * named types). Undefined: the whole set.
     */
    changedHosts?: ReadonlySet<string>,
  ) => Built
  /** The state once `built` is sent; undefined when it is not to be sent. */
  readonly sent: (
    state: State,
    watch: Watch,
    built: Built,
    push: PushContext,
    reply: Event | undefined,
  ) => State | undefined
  /** The debug line of a push's response. */
  readonly pushLine: (typeUrl: string, id: string, built: Built) => string
  /** The debug line of a request, if its protocol logs one. */
  readonly requestLine: (event: Event, typeUrl: string, id: string, request: Req) => string | undefined
  /** The one-shot answer to a debug request: one resource, `body` as an Any of `typeUrl`. */
  readonly debugReply: (typeUrl: string, name: string, body: Uint8Array, nonce: string) => Res
  readonly status: (
    id: string,
    peer: string,
    proxy: ProxyInfo | undefined,
    connectedAt: number,
    state: State,
    notFound: NotFoundByType,
  ) => ConnectionStatus
}

/** What every stream of a server shares. */
export interface StreamEnv {
  /** Told when a proxy's stream is authorized and when it ends. */
  readonly proxyConnections: ProxyConnectionsShape
  /** The PushContext a request is answered from. */
  readonly current: () => PushContext
  readonly register: (connection: Connection) => void
  readonly unregister: (connection: Connection) => void
  readonly reindex: (connection: Connection) => void
  readonly cache: ResourceCache
  /** Which hosts the streams' watched names stand for, memoised for this server. */
  readonly hosts: WatchedHosts
  /** Whether responses of a type may share the sets resolved for other connections. */
  readonly sharable: (typeUrl: string) => boolean
  /** After each response built: counts its shared reads, logs what the generators noticed. */
  readonly built: (sharedReads: number) => void
  /** A debug line from plain code: only built when debug lines are written. */
  readonly pushDebug: (line: () => string) => void
  readonly nacks: NackSeries
  readonly metrics: Pick<XdsMetrics, "sendTime" | "pushTime" | "pushes" | "convergence" | "expiredNonce">
  /** Pushes run as plain calls (write callbacks, no fibers): they read the clock directly. */
  readonly clock: Clock.Clock
  /** What answers debug requests (debug-type.ts); undefined while no debug interface serves. */
  readonly debug: () => DebugService | undefined
  /** MESH_XDS_PLAINTEXT_DEBUG_REMOTE: debug requests on the plaintext port from other hosts too. */
  readonly plaintextDebugRemote: boolean
  /** The resource names the server's streams may hold (name-budget.ts). */
  readonly names: NameBudget
}

/** The gRPC statuses the stream loop ends a stream with. */
export type StreamStatusCode = DebugStatusCode | "RESOURCE_EXHAUSTED"

/** A stream's inbox; `proxy` is the proxy its first request named (set once it is taken). */
export interface ProxyInbox<Req> extends Inbox<Req> {
  readonly proxy: () => ProxyInfo
}

/** The transport side of one stream. */
export interface StreamChannel<Req, Res> {
  readonly id: string
  readonly peer: () => string
  /** Opens the stream's inbox; `acceptNow` takes plain ACKs where they are read. */
  readonly open: (acceptNow: (request: Req) => boolean) => Effect.Effect<ProxyInbox<Req>>
  /** Hands a response to the transport; `onWritten` once it was taken (see writer.ts). */
  readonly write: (response: Res, onWritten: () => void) => void
  /** Whether the caller may act as `proxy`; the stream is ended when it may not. */
  readonly authorize: (proxy: ProxyInfo) => Effect.Effect<boolean>
  /** Ends the stream, unless it ended already. */
  readonly end: () => void
  /** Who opened the stream, for debug requests. */
  readonly caller: DebugCaller
  /** Ends the stream with a gRPC status (a refused or failed debug request, names over the bounds). */
  readonly fail: (code: StreamStatusCode, message: string) => Effect.Effect<void>
  /**
   * A warning about the stream, throttled per `kind` (a fixed text, never a caller's): a caller
   * repeating a refused request costs a line per interval, not one per request.
   */
  readonly warn: (kind: string, message: string) => Effect.Effect<void>
}
