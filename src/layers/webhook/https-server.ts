/**
 * The HTTPS listener of `--httpsAddr` (webhooks). It serves the server's own certificate from the
 * shared `ServingCert` source — the one the secure gRPC listener serves, so there is one
 * certificate and one rotation — with the same TLS restrictions. A replacement certificate is
 * installed with `setSecureContext`: new handshakes get it, open connections are not dropped.
 * Without a certificate (`PILOT_CERT_PROVIDER=none`, no `--tlsCertFile`) nothing listens.
 * It closes with its scope, bounded like every HTTP listener (../http/connection-drain.ts).
 */

import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server } from "node:https"
import type { AddressInfo } from "node:net"
import type { SecureContextOptions } from "node:tls"
import { Data, type Duration, Effect, Layer, Runtime } from "effect"
import { closeAtExpiry, drainBudget } from "../../services/lifecycle/shutdown-deadline.js"
import { formatListenAddress, type ListenAddress } from "../../services/net/address.js"
import { type ConnectionDrain, closeLeftovers, DEFAULT_DRAIN, trackConnections } from "../http/connection-drain.js"
import type { ListenerTls, ServingMaterial } from "../secure-grpc/listener.js"
import { ServingCert } from "../secure-grpc/serving-cert.js"

export class HttpsServerError extends Data.TaggedError("HttpsServerError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

export interface HttpsServerSettings {
  /** `--httpsAddr` */
  readonly address: ListenAddress
  /** What the listener is for, in logs ("webhook"). */
  readonly name: string
  /**
   * Time allowed for requests in flight at shutdown before connections are cut, when the program
   * set no shutdown countdown (`ShutdownDeadline`, which takes precedence); default 5s.
   */
  readonly shutdownTimeout?: Duration.Duration
}

export type HttpsHandler = (req: IncomingMessage, res: ServerResponse) => void

const secureContextOptions = (material: ServingMaterial, tls: ListenerTls): SecureContextOptions => ({
  cert: material.certChainPem,
  key: material.keyPem,
  ...(tls.ciphers !== undefined ? { ciphers: tls.ciphers } : {}),
  ...(tls.minVersion !== undefined ? { minVersion: tls.minVersion } : {}),
  ...(tls.maxVersion !== undefined ? { maxVersion: tls.maxVersion } : {}),
  ...(tls.ecdhCurve !== undefined ? { ecdhCurve: tls.ecdhCurve } : {}),
})

/** Serves `handler` over HTTPS for the lifetime of the scope; returns the bound port (undefined when off). */
export const makeHttpsServer = (settings: HttpsServerSettings, handler: HttpsHandler) =>
  Effect.gen(function* () {
    const cert = yield* ServingCert
    const target = formatListenAddress(settings.address)
    if (cert.source === undefined) {
      yield* Effect.logWarning(
        `no serving certificate (PILOT_CERT_PROVIDER=none and no --tlsCertFile): the ${settings.name} HTTPS listener on --httpsAddr=${target} is disabled`,
      )
      return undefined
    }
    let server: Server | undefined
    let latest: ServingMaterial | undefined
    // The first material arrives before the source returns; later ones replace the context.
    yield* cert.source((material) =>
      Effect.try(() => {
        latest = material
        if (server !== undefined) server.setSecureContext(secureContextOptions(material, cert.tls))
      }).pipe(
        Effect.catchAll((e) =>
          Effect.logError(`${settings.name} HTTPS listener: cannot apply a serving certificate: ${e.error}`),
        ),
      ),
    )
    if (latest === undefined) {
      return yield* new HttpsServerError({ reason: `${settings.name} HTTPS listener: no serving certificate` })
    }
    const first = latest
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const drainTime = yield* drainBudget(settings.shutdownTimeout ?? DEFAULT_DRAIN)
    const { listening, connections } = yield* Effect.acquireRelease(
      Effect.async<{ listening: Server; connections: ConnectionDrain }, HttpsServerError>((resume) => {
        const created = createServer(secureContextOptions(first, cert.tls), handler)
        // From the first accept on, TLS handshakes included.
        const connections = trackConnections(created)
        const onError = (error: Error) =>
          resume(
            Effect.fail(
              new HttpsServerError({
                reason: `--httpsAddr=${target}: the ${settings.name} HTTPS listener cannot listen: ${error.message}`,
              }),
            ),
          )
        created.once("error", onError)
        created.listen(settings.address.port, settings.address.host, () => {
          created.off("error", onError)
          created.on("error", (error) => void runFork(Effect.logError(`${settings.name} HTTPS: ${error}`)))
          resume(Effect.succeed({ listening: created, connections }))
        })
      }),
      // Bounded: see connection-drain.ts (half-open TLS handshakes and slowloris heads included).
      ({ connections }) => connections.close(drainTime),
    )
    server = listening
    yield* closeAtExpiry(closeLeftovers(`${settings.name} HTTPS listener`, connections))
    // A replacement that arrived while binding.
    if (latest !== first) listening.setSecureContext(secureContextOptions(latest, cert.tls))
    const port = (listening.address() as AddressInfo).port
    yield* Effect.logInfo(
      `${settings.name} HTTPS listener on ${formatListenAddress({ host: settings.address.host, port })} (--httpsAddr)`,
    )
    return port
  })

export const layer = (
  settings: HttpsServerSettings,
  handler: HttpsHandler,
): Layer.Layer<never, HttpsServerError, ServingCert> => Layer.scopedDiscard(makeHttpsServer(settings, handler))
