/**
 * The project's own ADS client (state of the world and delta): the contract, and the pure rules
 * for turning responses into ACKs or NACKs. Tests, benchmarks, meshctl and the agent use it.
 */
import { Context, Data, type Duration, type Effect } from "effect"
import type { ProtoObject } from "../xds/cache/resource-spec.js"
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
  Node,
} from "../xds/protocol/messages.js"

export interface HeldResource {
  readonly version: string
  /** Decoded resource (`@type` plus fields), when the client decodes. */
  readonly resource?: ProtoObject
  readonly bytes: number
}

export interface ClientTypeState {
  readonly typeUrl: string
  readonly wildcard: boolean
  readonly names: ReadonlyArray<string>
  /** Last accepted version (SotW version_info / delta system_version_info). */
  readonly version: string
  readonly nonce: string
  readonly resources: ReadonlyMap<string, HeldResource>
  readonly responses: number
  readonly acks: number
  readonly nacks: number
  readonly lastError?: string
  /** Names the last delta response removed. */
  readonly lastRemoved: ReadonlyArray<string>
  readonly bytesReceived: number
}

export interface ClientSnapshot {
  readonly connected: boolean
  readonly types: ReadonlyMap<string, ClientTypeState>
}

export const emptySnapshot: ClientSnapshot = { connected: false, types: new Map() }

export const emptyTypeState = (typeUrl: string, names: ReadonlyArray<string>, wildcard: boolean): ClientTypeState => ({
  typeUrl,
  wildcard,
  names,
  version: "",
  nonce: "",
  resources: new Map(),
  responses: 0,
  acks: 0,
  nacks: 0,
  lastRemoved: [],
  bytesReceived: 0,
})

/** Decides whether a response is acceptable: a message rejects it (NACK). */
export type Validate = (
  typeUrl: string,
  resources: ReadonlyArray<{ readonly name: string; readonly resource?: ProtoObject }>,
) => string | undefined

export interface AdsClientOptions {
  /** `host:port` of the ADS server. */
  readonly address: string
  readonly mode: "sotw" | "delta"
  readonly node: Node
  /** Decode resources (off for light benchmark clients). */
  readonly decode?: boolean
  /**
   * Without decoding, still read each resource's name from its bytes (field 1), so that held
   * resources and response events carry names (benchmarks that track which clusters a push touched).
   */
  readonly names?: boolean
  /**
   * gRPC channel options, e.g. `grpc.max_receive_message_length` -1 for a proxy's full config past
   * gRPC's 4 MiB default, `grpc.use_local_subchannel_pool` 1 for a connection of its own per client.
   */
  readonly channelOptions?: Readonly<Record<string, string | number>>
  readonly validate?: Validate
  /** Re-open the stream with backoff when it ends, resubscribing with what is held (default on). */
  readonly reconnect?: boolean
  /** Called after each response is handled (benchmarks record timings here). */
  readonly onResponse?: (event: ResponseEvent) => void
}

export interface ResponseEvent {
  readonly typeUrl: string
  readonly version: string
  readonly resources: number
  readonly removed: number
  readonly bytes: number
  readonly accepted: boolean
  /** The resources' names (empty strings for undecoded resources unless `names` is on). */
  readonly names: ReadonlyArray<string>
}

export interface AdsClientShape {
  /** Adds names to a type's subscription (no names on CDS/LDS = wildcard). */
  readonly subscribe: (typeUrl: string, names?: ReadonlyArray<string>) => Effect.Effect<void>
  readonly unsubscribe: (typeUrl: string, names: ReadonlyArray<string>) => Effect.Effect<void>
  readonly snapshot: Effect.Effect<ClientSnapshot>
  /** Waits until the snapshot satisfies a condition, failing after the timeout. */
  readonly waitFor: (
    condition: (snapshot: ClientSnapshot) => boolean,
    timeout: Duration.DurationInput,
  ) => Effect.Effect<ClientSnapshot, AdsClientError>
  /** Raw requests sent (for protocol tests). */
  readonly sendRaw: (request: DiscoveryRequest | DeltaDiscoveryRequest) => Effect.Effect<void>
  /** Stops acknowledging (protocol tests): responses are recorded but not ACKed. */
  readonly setAutoAck: (enabled: boolean) => Effect.Effect<void>
}

export class AdsClient extends Context.Tag("mesh/AdsClient")<AdsClient, AdsClientShape>() {}

export class AdsClientError extends Data.TaggedError("AdsClientError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const NACK_CODE = 3 // INVALID_ARGUMENT

/** SotW: applies a response and returns the ACK/NACK to send. */
export const sotwClientOnResponse = (
  state: ClientTypeState,
  response: DiscoveryResponse,
  resources: ReadonlyArray<{ readonly name: string; readonly resource?: ProtoObject; readonly bytes: number }>,
  error: string | undefined,
): { readonly state: ClientTypeState; readonly reply: DiscoveryRequest } => {
  const bytes = resources.reduce((n, r) => n + r.bytes, 0)
  const base = {
    ...state,
    nonce: response.nonce,
    responses: state.responses + 1,
    bytesReceived: state.bytesReceived + bytes,
  }
  if (error !== undefined) {
    return {
      state: { ...base, nacks: state.nacks + 1, lastError: error },
      reply: {
        type_url: state.typeUrl,
        version_info: state.version,
        response_nonce: response.nonce,
        resource_names: state.wildcard ? [] : [...state.names],
        error_detail: { code: NACK_CODE, message: error },
      },
    }
  }
  const held = new Map<string, HeldResource>()
  for (const r of resources)
    held.set(r.name, {
      version: response.version_info,
      bytes: r.bytes,
      ...(r.resource !== undefined ? { resource: r.resource } : {}),
    })
  const { lastError: _cleared, ...rest } = base
  return {
    state: { ...rest, version: response.version_info, resources: held, acks: state.acks + 1 },
    reply: {
      type_url: state.typeUrl,
      version_info: response.version_info,
      response_nonce: response.nonce,
      resource_names: state.wildcard ? [] : [...state.names],
    },
  }
}

/** Delta: applies a response (changed resources, removals) and returns the ACK/NACK. */
export const deltaClientOnResponse = (
  state: ClientTypeState,
  response: DeltaDiscoveryResponse,
  resources: ReadonlyArray<{
    readonly name: string
    readonly version: string
    readonly resource?: ProtoObject
    readonly bytes: number
  }>,
  error: string | undefined,
): { readonly state: ClientTypeState; readonly reply: DeltaDiscoveryRequest } => {
  const bytes = resources.reduce((n, r) => n + r.bytes, 0)
  const base = {
    ...state,
    nonce: response.nonce,
    responses: state.responses + 1,
    bytesReceived: state.bytesReceived + bytes,
  }
  if (error !== undefined) {
    return {
      state: { ...base, nacks: state.nacks + 1, lastError: error },
      reply: {
        type_url: state.typeUrl,
        response_nonce: response.nonce,
        error_detail: { code: NACK_CODE, message: error },
      },
    }
  }
  const held = new Map(state.resources)
  for (const r of resources)
    held.set(r.name, {
      version: r.version,
      bytes: r.bytes,
      ...(r.resource !== undefined ? { resource: r.resource } : {}),
    })
  for (const name of response.removed_resources ?? []) held.delete(name)
  const { lastError: _cleared, ...rest } = base
  return {
    state: {
      ...rest,
      version: response.system_version_info,
      resources: held,
      acks: state.acks + 1,
      lastRemoved: [...(response.removed_resources ?? [])],
    },
    reply: { type_url: state.typeUrl, response_nonce: response.nonce },
  }
}
