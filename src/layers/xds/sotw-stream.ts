/**
 * State-of-the-world streams (StreamAggregatedResources) for the stream loop: the pure rules of
 * services/xds/protocol/sotw.ts, responses carrying every resource of the watch, and a push that
 * skips a watch whose resources are the same bytes as last sent.
 */
import { type SotwResponse, sotwResponse } from "../../services/xds/cache/responder.js"
import { sotwStatus } from "../../services/xds/protocol/connection-status.js"
import type { DiscoveryRequest, DiscoveryResponse } from "../../services/xds/protocol/messages.js"
import { quoted } from "../../services/xds/protocol/request-limits.js"
import {
  emptySotwState,
  onSotwRequest,
  onSotwSent,
  type SotwEvent,
  type SotwState,
  type SotwWatch,
  sotwNeedsPush,
} from "../../services/xds/protocol/sotw.js"
import { PUSH_ORDER, shortType } from "../../services/xds/protocol/type-urls.js"
import type { StreamProtocol } from "./stream-protocol.js"

export const sotwProtocol: StreamProtocol<
  DiscoveryRequest,
  DiscoveryResponse,
  SotwState,
  SotwWatch,
  SotwEvent,
  SotwResponse
> = {
  logScope: "ads",
  newConnection: "new connection",
  // Never more than one request per (known) type.
  coalescePerType: true,
  maxPending: PUSH_ORDER.length,
  empty: emptySotwState,
  step: onSotwRequest,
  watches: (state) => state.watches,
  names: (watch) => watch.names,
  due: () => false,
  build: (push, watch, nonce, _reply, proxy, cache, share, changedHosts) =>
    sotwResponse(push, cache, watch, nonce, proxy, share, changedHosts),
  // A push (no request to answer) is written only when it changes what the client holds.
  sent: (state, watch, built, push, reply) =>
    reply === undefined && !sotwNeedsPush(watch, built.digest)
      ? undefined
      : onSotwSent(state, watch.typeUrl, { nonce: built.response.nonce, version: push.version, digest: built.digest }),
  pushLine: (typeUrl, id, built) =>
    `${shortType(typeUrl).toUpperCase()}: PUSH ${id} resources:${built.response.resources.length} size:${built.bytes}`,
  requestLine: (event, typeUrl, id, request) => {
    switch (event._tag) {
      case "StaleNonce":
        return `${shortType(typeUrl).toUpperCase()}: expired nonce ${quoted(event.nonce, 64)} ${id}`
      case "Subscribe":
        return `${shortType(typeUrl).toUpperCase()}: ${event.reconnect ? "RECONNECT" : "REQ"} ${id} names:${(request.resource_names ?? []).length}`
      default:
        return undefined
    }
  },
  // No version: a debug answer is no configuration, and is never acknowledged.
  debugReply: (typeUrl, _name, body, nonce) => ({
    version_info: "",
    type_url: typeUrl,
    nonce,
    resources: [{ type_url: typeUrl, value: body }],
  }),
  status: sotwStatus,
}
