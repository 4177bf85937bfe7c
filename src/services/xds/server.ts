/**
 * The XdsServer service: the ADS server's contract. Feed it PushContext inputs; it debounces,
 * builds PushContexts, and pushes to every connected client (SotW and delta).
 */

import { Context, Data, Duration, type Effect, type Scope } from "effect"
import { type CacheOptions, type CacheStats, defaultCacheOptions } from "./cache/resource-cache.js"
import type { ProxyInfo } from "./cache/responder.js"
import {
  defaultPushContextOptions,
  type PushContext,
  type PushContextInput,
  type PushContextOptions,
} from "./model/push-context.js"
import type { DebugService } from "./protocol/debug-type.js"
import { defaultNameLimits, type NameLimits } from "./protocol/name-budget.js"
import { type DebounceOptions, defaultDebounceOptions } from "./push/debounce.js"

export interface XdsServerConfig {
  /** Bind host; undefined = every interface. */
  readonly host: string | undefined
  /** 0 picks a free port. */
  readonly port: number
  readonly keepaliveInterval: Duration.Duration
  readonly keepaliveTimeout: Duration.Duration
  readonly maxConnectionAge: Duration.Duration
  /** MESH_GPRC_MAXRECVMSGSIZE */
  readonly maxRecvMsgSize: number
  /** MESH_GPRC_MAXSTREAMS */
  readonly maxStreams: number
  readonly debounce: DebounceOptions
  /** PILOT_PUSH_THROTTLE (0 = chosen from the machine size). */
  readonly pushThrottle: number
  /** PILOT_MAX_REQUESTS_PER_SECOND: new streams per second (0 = chosen from the machine size). */
  readonly maxRequestsPerSecond: number
  readonly cache: CacheOptions
  readonly pushContext: PushContextOptions
  /** MESH_DELTA_XDS: serve DeltaAggregatedResources. */
  readonly deltaXds: boolean
  /** Time allowed for streams to close at shutdown (--shutdownDuration). */
  readonly shutdownDuration: Duration.Duration
  /** PILOT_XDS_SEND_TIMEOUT: a response write taking longer ends its stream (0 = no limit; unset = 5s). */
  readonly sendTimeout?: Duration.Duration
  /** Response bytes in flight across the server's streams before writes wait; unset: the default (64 MiB). */
  readonly writeBudgetBytes?: number
  /**
   * MESH_XDS_MAX_STREAM_NAMES, MESH_XDS_MAX_STREAM_NAME_BYTES, MESH_XDS_MAX_NAMES,
   * MESH_XDS_MAX_NAME_BYTES: the resource names streams may hold; unset: `defaultNameLimits`.
   */
  readonly nameLimits?: NameLimits
  /** MESH_XDS_PLAINTEXT_DEBUG_REMOTE: debug requests on the plaintext port from other hosts too (unset: loopback only). */
  readonly plaintextDebugRemote?: boolean
}

export const defaultXdsServerConfig: XdsServerConfig = {
  host: undefined,
  port: 15010,
  keepaliveInterval: Duration.seconds(30),
  keepaliveTimeout: Duration.seconds(10),
  maxConnectionAge: Duration.infinity,
  maxRecvMsgSize: 4194304,
  maxStreams: 100000,
  debounce: defaultDebounceOptions,
  pushThrottle: 0,
  maxRequestsPerSecond: 0,
  cache: defaultCacheOptions,
  pushContext: defaultPushContextOptions,
  deltaXds: true,
  shutdownDuration: Duration.seconds(10),
  sendTimeout: Duration.seconds(5),
  nameLimits: defaultNameLimits,
  plaintextDebugRemote: false,
}

export interface WatchStatus {
  readonly typeUrl: string
  readonly wildcard: boolean
  readonly names: ReadonlyArray<string>
  readonly nonceSent?: string
  readonly nonceAcked?: string
  readonly versionSent?: string
  readonly versionAcked?: string
  /** Last NACK's error_detail message (cleared by an ACK). */
  readonly lastError?: string
  /** Why requested names have no resource ("requested listener foo:80 not found: ..."). */
  readonly warnings?: ReadonlyArray<string>
  /** Since when (epoch millis) the watch has been in its sync state (sync-state.ts). */
  readonly stateSince?: number
}

export interface ConnectionStatus {
  readonly id: string
  readonly peer: string
  readonly nodeId: string
  readonly generator: string
  /** What the server knows of the node (id, metadata, the proxy's view), once it sent one. */
  readonly proxy?: ProxyInfo
  readonly delta: boolean
  readonly connectedAt: number
  readonly watches: ReadonlyArray<WatchStatus>
}

export interface PushStats {
  readonly pushes: number
  readonly version: string
  /** When the latest push started (the debounce released it), epoch millis; 0 before any. */
  readonly lastPushStartedAt: number
}

export interface XdsServerShape {
  /** The port actually bound. */
  readonly port: number
  /**
   * Completes once streams are admitted: in mesh-discovery, when the first input (the synced
   * config and registries) has arrived; until then streams are refused as UNAVAILABLE.
   */
  readonly serving: Effect.Effect<void>
  /** Offers new inputs: diffed with the previous ones, debounced, then pushed. */
  readonly update: (input: PushContextInput) => Effect.Effect<void>
  readonly pushContext: Effect.Effect<PushContext>
  readonly connections: Effect.Effect<ReadonlyArray<ConnectionStatus>>
  readonly cacheStats: Effect.Effect<CacheStats>
  readonly pushStats: Effect.Effect<PushStats>
  /** Ends the streams of a proxy (node id or connection id) gracefully; how many were ended. */
  readonly disconnect: (proxyID: string) => Effect.Effect<number>
  /**
   * Answers debug requests on the ADS streams from `service` until the scope closes (the debug
   * interface registers itself; without it they are refused as unavailable).
   */
  readonly serveDebug?: (service: DebugService) => Effect.Effect<void, never, Scope.Scope>
}

export class XdsServer extends Context.Tag("mesh/XdsServer")<XdsServer, XdsServerShape>() {}

export class XdsServerError extends Data.TaggedError("XdsServerError")<{
  readonly message: string
  readonly cause?: unknown
  /** The listener could not bind its address (the program names the flag that set it). */
  readonly bindFailed?: boolean
}> {}
