/**
 * A grpc-js server on one address: what the plaintext ADS listener (`--grpcAddr`) and the TLS
 * listener (`--secureGRPCAddr`) share. Services are added first and the server bound after
 * (`start`), so a client never sees the port answer UNIMPLEMENTED while the server is starting.
 *
 * Shutdown, once bound, runs when the listener's scope closes: grpc-js stops taking calls and
 * waits for open ones (`tryShutdown`); calls still open when the drain time is over are cut
 * (`forceShutdown`: every HTTP/2 session destroyed). The drain time is what the program's
 * shutdown countdown has left (`ShutdownDeadline`), or `shutdownTimeout` when it set none.
 * Streams that can end sooner are ended by their service's scope, which closes before the
 * listener's (see the ADS service's `serve`).
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Scope } from "effect"
import { closeAtExpiry, drainBudget } from "../../services/lifecycle/shutdown-deadline.js"

/** Node's timers take at most this many milliseconds; a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface GrpcListenerSettings<E> {
  /** The address as grpc-js takes it: `host:port`, IPv6 hosts in brackets. */
  readonly target: string
  readonly credentials: grpc.ServerCredentials
  /** grpc-js server options (keepalive, message sizes, streams). */
  readonly options: grpc.ServerOptions
  /**
   * Time allowed for calls to finish at shutdown before they are cut, when the program set no
   * shutdown countdown (`ShutdownDeadline`, which takes precedence).
   */
  readonly shutdownTimeout: Duration.Duration
  /**
   * The error a failed bind fails `start` with. Each listener marks it as a bind failure its own
   * way (the program names the flag that set the address).
   */
  readonly bindError: (error: Error) => E
  /** Runs once, after the first successful bind (the "listening on" line). */
  readonly onBound?: (port: number) => Effect.Effect<void>
}

export interface GrpcListener<E> {
  /** Adds a service for the lifetime of the calling scope. */
  readonly addService: (
    definition: grpc.ServiceDefinition,
    implementation: grpc.UntypedServiceImplementation,
  ) => Effect.Effect<void, never, Scope.Scope>
  /** Binds the listener (once; later calls return the same port). */
  readonly start: Effect.Effect<number, E>
  /** The bound port, once started. */
  readonly port: Effect.Effect<number | undefined>
}

/**
 * Stops the server: waits for its calls to finish, and cuts them after `drainTime` (asked now).
 * Finalizers run uninterruptibly, so a timeout raced against `tryShutdown` could never win (open
 * ADS streams keep it waiting): the force timer lives in the callback.
 */
const shutdown = (server: grpc.Server, drainTime: Effect.Effect<Duration.Duration>): Effect.Effect<void> =>
  Effect.flatMap(drainTime, (time) =>
    Effect.async<void>((resume) => {
      const timer = setTimeout(
        () => {
          server.forceShutdown()
          resume(Effect.void)
        },
        Math.min(MAX_TIMER_MS, Duration.toMillis(time)),
      )
      server.tryShutdown(() => {
        clearTimeout(timer)
        resume(Effect.void)
      })
    }),
  )

/** A listener whose shutdown belongs to the calling scope (whoever starts it). */
export const makeGrpcListener = <E>(
  settings: GrpcListenerSettings<E>,
): Effect.Effect<GrpcListener<E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const server = new grpc.Server(settings.options)
    const scope = yield* Effect.scope
    const drainTime = yield* drainBudget(settings.shutdownTimeout)
    let bound: number | undefined
    // Cuts what is left even while the services' scopes, which close first, still wait: an
    // ADS service gives its streams a grace to end before the listener's turn comes.
    yield* closeAtExpiry(
      Effect.suspend(() =>
        bound === undefined
          ? Effect.void
          : Effect.zipRight(
              Effect.logInfo(
                `gRPC listener on port ${bound}: closing the calls still open when the shutdown drain ended`,
              ),
              Effect.sync(() => server.forceShutdown()),
            ),
      ),
    )

    const bind = Effect.async<number, E>((resume) => {
      server.bindAsync(settings.target, settings.credentials, (error, port) => {
        if (error !== null) resume(Effect.fail(settings.bindError(error)))
        else resume(Effect.succeed(port))
      })
    })
    const lock = yield* Effect.makeSemaphore(1)
    const start = lock.withPermits(1)(
      Effect.gen(function* () {
        if (bound !== undefined) return bound
        // Not interrupted mid-bind (by a sibling listener failing at start-up, say): a server
        // bound without its shutdown finalizer would keep the process from exiting. Whatever
        // was started is shut down with the listener's scope, not the caller's.
        const port = yield* Effect.uninterruptible(
          Effect.tap(bind, () => Scope.addFinalizer(scope, shutdown(server, drainTime))),
        )
        bound = port
        if (settings.onBound !== undefined) yield* settings.onBound(port)
        return port
      }),
    )
    const listener: GrpcListener<E> = {
      addService: (definition, implementation) =>
        Effect.acquireRelease(
          Effect.sync(() => server.addService(definition, implementation)),
          () => Effect.sync(() => server.removeService(definition)),
        ),
      start,
      port: Effect.sync(() => bound),
    }
    return listener
  })
