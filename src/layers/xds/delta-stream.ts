/**
 * Delta streams (DeltaAggregatedResources) for the stream loop: the pure rules of
 * services/xds/protocol/delta.ts, responses carrying only what changed for the client (and what
 * went away), everything again when a request subscribes.
 */
import { type DeltaResponse, deltaResponse } from "../../services/xds/cache/responder.js"
import { deltaStatus } from "../../services/xds/protocol/connection-status.js"
import {
  type DeltaEvent,
  type DeltaState,
  type DeltaWatch,
  emptyDeltaState,
  onDeltaRequest,
  onDeltaSent,
} from "../../services/xds/protocol/delta.js"
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse } from "../../services/xds/protocol/messages.js"
import { shortType } from "../../services/xds/protocol/type-urls.js"
import type { StreamProtocol } from "./stream-protocol.js"

/**
 * Delta requests a stream may queue while its fiber is busy (see inbox.ts): the call is paused
 * at the first, so only what grpc-js had read already can follow it; one more ends the stream.
 */
const MAX_PENDING_DELTA = 16

export const deltaProtocol: StreamProtocol<
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DeltaState,
  DeltaWatch,
  DeltaEvent,
  DeltaResponse
> = {
  logScope: "delta",
  newConnection: "new delta connection",
  coalescePerType: false,
  maxPending: MAX_PENDING_DELTA,
  empty: emptyDeltaState,
  step: onDeltaRequest,
  watches: (state) => state.watches,
  names: (watch) => watch.subscribed,
  // Names subscribed since the last response are answered even when nothing changed for them.
  due: (watch) => watch.pending.size > 0,
  build: (push, watch, nonce, reply, proxy, cache, share) =>
    deltaResponse(push, cache, watch, nonce, reply?._tag === "Subscribe", proxy, share),
  sent: (state, watch, built) =>
    built.response === undefined
      ? undefined
      : onDeltaSent(state, watch.typeUrl, {
          nonce: built.response.nonce,
          versions: built.sent,
          removed: built.removed,
        }),
  pushLine: (typeUrl, id, built) =>
    `${shortType(typeUrl).toUpperCase()}: DELTA PUSH ${id} resources:${built.sent.length} removed:${built.removed.length} size:${built.bytes}`,
  requestLine: () => undefined,
  debugReply: (typeUrl, name, body, nonce) => ({
    system_version_info: "",
    type_url: typeUrl,
    nonce,
    removed_resources: [],
    resources: [{ name, version: "", resource: { type_url: typeUrl, value: body } }],
  }),
  status: deltaStatus,
}
