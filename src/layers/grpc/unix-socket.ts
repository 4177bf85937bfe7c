/**
 * A grpc-js server on a Unix socket, for the agent's local listeners (the SDS server and the
 * xDS proxy): the socket's directory is made, the server bound (a failure is a `ListenError`
 * naming the socket), and when the scope closes the server stops at once — its streams are
 * long-lived and their peer is the local proxy — and the socket file is removed.
 */
import { mkdir, rm } from "node:fs/promises"
import { dirname } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { Effect, type Scope } from "effect"
import { bindReason, ListenError } from "../../services/net/listen-error.js"

export interface UnixSocketSettings {
  readonly socketPath: string
  /** What listens there, for the error (`the SDS socket`). */
  readonly source: string
  /** Remove a file left at the path by an earlier run before binding. */
  readonly replaceStale?: boolean
}

export const bindUnixSocket = (
  server: grpc.Server,
  settings: UnixSocketSettings,
): Effect.Effect<void, ListenError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* Effect.promise(() => mkdir(dirname(settings.socketPath), { recursive: true }))
    if (settings.replaceStale === true) yield* Effect.promise(() => rm(settings.socketPath, { force: true }))
    yield* Effect.acquireRelease(
      Effect.async<void, ListenError>((resume) => {
        server.bindAsync(`unix://${settings.socketPath}`, grpc.ServerCredentials.createInsecure(), (error) =>
          resume(
            error
              ? Effect.fail(
                  new ListenError({ source: settings.source, address: settings.socketPath, reason: bindReason(error) }),
                )
              : Effect.void,
          ),
        )
      }),
      () =>
        Effect.sync(() => server.forceShutdown()).pipe(
          Effect.zipRight(Effect.promise(() => rm(settings.socketPath, { force: true }))),
        ),
    )
  })
