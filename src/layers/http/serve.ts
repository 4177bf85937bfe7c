/**
 * Serves an HttpRouter on a Go-style listen address for as long as the layer lives. Logs the
 * bound address, which matters when the port was 0. A bind failure is a ListenError naming
 * `source` (the flag or variable that set the address), so start-up stops with a message the
 * user can act on.
 *
 * The listener closes with the scope, bounded (connection-drain.ts): connections with no request
 * in a handler close at once, requests in flight may finish within the program's shutdown
 * countdown (`ShutdownDeadline`, else `DEFAULT_DRAIN`), and what is open when it ends is
 * destroyed, whether or not the listener's turn to close has come.
 */
import { createServer } from "node:http"
import { type HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { closeAtExpiry, drainBudget } from "../../services/lifecycle/shutdown-deadline.js"
import type { ListenAddress } from "../../services/net/address.js"
import { type ListenError, listenError } from "../../services/net/listen-error.js"
import { closeLeftovers, DEFAULT_DRAIN, trackConnections } from "./connection-drain.js"

export const serveRouter = <E, R>(
  name: string,
  address: ListenAddress,
  router: HttpRouter.HttpRouter<E, R>,
  source = `the ${name} listener`,
): Layer.Layer<never, ListenError, Exclude<R, HttpServer.HttpServer | HttpRouter.RouteContext>> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const server = yield* closedEvenIfListeningLate
      const connections = trackConnections(server)
      const drainTime = yield* drainBudget(DEFAULT_DRAIN)
      yield* closeAtExpiry(closeLeftovers(name, connections))
      const listening = NodeHttpServer.layer(() => server, {
        port: address.port,
        ...(address.host !== undefined ? { host: address.host } : {}),
      }).pipe(Layer.mapError((error) => listenError(source, address, error.cause)))
      return Layer.scopedDiscard(
        Effect.gen(function* () {
          const bound = (yield* HttpServer.HttpServer).address
          yield* Effect.logInfo(
            `${name} listening on ${bound._tag === "TcpAddress" ? `${bound.hostname}:${bound.port}` : bound.path}`,
          )
          // Built after the router is served and the server bound, so this closes first: the
          // platform's own close (which waits for every connection, however stuck) then finds
          // the server closed, and the router still answers the requests being drained.
          yield* Effect.addFinalizer(() => connections.close(drainTime))
        }),
      ).pipe(Layer.provideMerge(HttpServer.serve(router)), Layer.provide(listening))
    }),
  ) as never

/**
 * A server that is closed with the scope even when it starts listening after the scope closed.
 * `listen` resolves its host asynchronously: when a sibling listener fails start-up while this
 * one is between `listen` and bound, the platform's close comes first (and is refused: not
 * running yet), the bind completes afterwards, and the process would stay up forever on a
 * listener nobody owns (a failed start-up that printed its error and never exited).
 */
const closedEvenIfListeningLate = Effect.acquireRelease(
  Effect.sync(() => createServer()),
  (server) =>
    Effect.sync(() => {
      if (!server.listening) server.once("listening", () => server.close())
    }),
)
