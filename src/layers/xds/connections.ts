/**
 * The ADS server's open connections: what a push fan-out asks of each stream, and the registry
 * of streams whose proxy is known, indexed by the hosts their EDS watch names (so an
 * endpoint-only push asks only the streams watching a changed host).
 */

import type { PushContext } from "../../services/xds/model/push-context.js"
import type { ProxyView } from "../../services/xds/proxygen/proxy-view.js"
import { type EndpointWatch, makeEndpointWatchers } from "../../services/xds/push/endpoint-watchers.js"
import type { PushRequest } from "../../services/xds/push/push-request.js"
import type { ConnectionStatus } from "../../services/xds/server.js"

/** One ADS stream, either protocol, as the push fan-out and the debug views see it. */
export interface Connection {
  readonly id: string
  /**
   * Whether a push request can change anything this connection watches. Synchronous, over the
   * connection's latest watches: a full push asks every connection, an endpoint-only push the
   * connections the registry names for its hosts.
   */
  readonly affectedBy: (push: PushContext, request: PushRequest) => boolean
  /** What its EDS watch covers now, for the endpoint-push index. */
  readonly endpointWatch: () => EndpointWatch
  readonly status: () => ConnectionStatus
  /** The sidecar or gateway proxy on the stream, once its node is known (not proxyless clients). */
  readonly proxyView: () => ProxyView | undefined
  /**
   * Starts a push to this stream: writes at once every response the request calls for, and
   * calls `done` once gRPC has taken them all.
   */
  readonly startPush: (request: PushRequest, done: () => void) => void
  /** Ends the stream gracefully (its status follows what it was sent). */
  readonly end: () => void
}

export interface ConnectionRegistry {
  readonly size: () => number
  readonly add: (connection: Connection) => void
  /** Whether it was registered. */
  readonly delete: (connection: Connection) => boolean
  /** Re-indexes a registered connection after its watches changed. */
  readonly reindex: (connection: Connection) => void
  readonly all: () => IterableIterator<Connection>
  /** The connections an endpoint change of `hosts` may affect. */
  readonly candidates: (hosts: Iterable<string>) => Iterable<Connection>
  /** Whether any connection may be affected by an endpoint change of `hosts`. */
  readonly watched: (hosts: Iterable<string>) => boolean
}

export const makeConnectionRegistry = (): ConnectionRegistry => {
  const connections = new Map<string, Connection>()
  const endpointWatchers = makeEndpointWatchers<Connection>()
  const reindex = (connection: Connection) => {
    if (connections.get(connection.id) === connection) endpointWatchers.set(connection, connection.endpointWatch())
  }
  return {
    size: () => connections.size,
    add: (connection) => {
      connections.set(connection.id, connection)
      reindex(connection)
    },
    delete: (connection) => {
      endpointWatchers.delete(connection)
      return connections.delete(connection.id)
    },
    reindex,
    all: () => connections.values(),
    candidates: (hosts) => endpointWatchers.candidates(hosts),
    watched: (hosts) => endpointWatchers.watched(hosts),
  }
}
