/**
 * Serves an HttpRouter on a Go-style listen address for as long as the layer lives; the
 * listener closes with the scope (graceful shutdown). Logs the bound address, which matters
 * when the port was 0. A bind failure is a ListenError naming `source` (the flag or variable
 * that set the address), so start-up stops with a message the user can act on.
 */
import { createServer } from "node:http"
import { type HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import type { ListenAddress } from "../../services/net/address.js"
import { type ListenError, listenError } from "../../services/net/listen-error.js"

export const serveRouter = <E, R>(
  name: string,
  address: ListenAddress,
  router: HttpRouter.HttpRouter<E, R>,
  source = `the ${name} listener`,
): Layer.Layer<never, ListenError, Exclude<R, HttpServer.HttpServer | HttpRouter.RouteContext>> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const server = yield* HttpServer.HttpServer
      const bound = server.address
      yield* Effect.logInfo(
        `${name} listening on ${bound._tag === "TcpAddress" ? `${bound.hostname}:${bound.port}` : bound.path}`,
      )
    }),
  ).pipe(
    Layer.provideMerge(HttpServer.serve(router)),
    Layer.provide(
      Layer.unwrapScoped(
        Effect.map(closedEvenIfListeningLate, (server) =>
          NodeHttpServer.layer(() => server, {
            port: address.port,
            ...(address.host !== undefined ? { host: address.host } : {}),
          }).pipe(Layer.mapError((error) => listenError(source, address, error.cause))),
        ),
      ),
    ),
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
