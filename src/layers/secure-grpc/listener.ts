/**
 * The secure gRPC listener of `--secureGRPCAddr`: one TLS grpc-js server that the CA service
 * and the secure ADS service are added to. It owns the credentials (a serving certificate from a
 * `ServingCertSource`, replaced while serving so rotation never drops a connection), the TLS
 * restrictions (`--tls-cipher-suites`, `COMPLIANCE_POLICY`) and its bind error; binding and
 * shutdown are those of every gRPC listener (src/layers/grpc/grpc-listener.ts).
 *
 * Services are added first and the listener bound after (`layerStart`), so a client
 * never sees the port answer UNIMPLEMENTED while the server is still starting.
 */
import type { PeerCertificate, SecureVersion } from "node:tls"
import * as grpc from "@grpc/grpc-js"
import { Context, Data, Duration, Effect, Layer, type Scope } from "effect"
import { formatListenAddress, type ListenAddress } from "../../services/net/address.js"
import { bindReason, describeAddress } from "../../services/net/listen-error.js"
import { type GrpcListener, makeGrpcListener } from "../grpc/grpc-listener.js"

export class SecureGrpcError extends Data.TaggedError("SecureGrpcError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** TLS restrictions of the listener (`--tls-cipher-suites`, `COMPLIANCE_POLICY`). */
export interface ListenerTls {
  /** OpenSSL cipher list. */
  readonly ciphers?: string
  readonly minVersion?: SecureVersion
  readonly maxVersion?: SecureVersion
  /** ECDH curves, e.g. "P-256:P-384". */
  readonly ecdhCurve?: string
}

/** What the listener serves with: its certificate chain and key, and the client-certificate roots. */
export interface ServingMaterial {
  /** Roots client certificates are verified against (PEM, may hold several). */
  readonly clientCaPem: string
  readonly certChainPem: string
  readonly keyPem: string
}

/**
 * Where the serving certificate comes from: applies the first material before it returns (a
 * failure is a start-up error) and keeps applying replacements from fibers in the scope.
 */
export type ServingCertSource<E = never, R = never> = (
  apply: (material: ServingMaterial) => Effect.Effect<void>,
) => Effect.Effect<void, E, R | Scope.Scope>

/**
 * Server credentials whose certificate and trust bundle can be replaced while serving. Client
 * certificates are requested but optional: grpc-js reports a peer certificate only when it
 * verified against the trust bundle.
 */
class ReloadableServerCredentials extends grpc.ServerCredentials {
  constructor(private readonly tls: ListenerTls) {
    super({ requestCert: true, rejectUnauthorized: false })
  }
  update(material: ServingMaterial) {
    // The TLS restrictions belong to the secure context: repeat them on every replacement.
    this.updateSecureContextOptions({
      ca: material.clientCaPem,
      cert: material.certChainPem,
      key: material.keyPem,
      ...(this.tls.ciphers !== undefined ? { ciphers: this.tls.ciphers } : {}),
      ...(this.tls.minVersion !== undefined ? { minVersion: this.tls.minVersion } : {}),
      ...(this.tls.maxVersion !== undefined ? { maxVersion: this.tls.maxVersion } : {}),
      ...(this.tls.ecdhCurve !== undefined ? { ecdhCurve: this.tls.ecdhCurve } : {}),
    })
  }
  override _equals(other: grpc.ServerCredentials): boolean {
    return this === other
  }
}

/** URI SANs of a peer certificate as Node reports them ("URI:spiffe://..., DNS:..."). */
export const peerUris = (cert: PeerCertificate | undefined): ReadonlyArray<string> | undefined => {
  if (cert === undefined) return undefined
  const san = cert.subjectaltname ?? ""
  return san
    .split(/,\s*/)
    .filter((part) => part.startsWith("URI:"))
    .map((part) => part.slice(4))
}

/** The listener: add services, then `start` it. */
export type SecureGrpcListenerShape = GrpcListener<SecureGrpcError>

export class SecureGrpcListener extends Context.Tag("mesh/SecureGrpcListener")<
  SecureGrpcListener,
  SecureGrpcListenerShape
>() {}

export interface SecureGrpcSettings {
  /** `--secureGRPCAddr` */
  readonly address: ListenAddress
  readonly tls?: ListenerTls
  /** grpc-js server options (keepalive, message sizes, streams). */
  readonly serverOptions?: grpc.ServerOptions
  /** Time allowed for calls to finish at shutdown before they are cut; default 5s. */
  readonly shutdownTimeout?: Duration.Duration
}

export const makeSecureGrpcListener = <E, R>(settings: SecureGrpcSettings, source: ServingCertSource<E, R>) =>
  Effect.gen(function* () {
    const credentials = new ReloadableServerCredentials(settings.tls ?? {})
    yield* source((material) =>
      Effect.try(() => credentials.update(material)).pipe(
        Effect.catchAll((e) => Effect.logError(`secure gRPC listener: cannot apply a serving certificate: ${e}`)),
      ),
    )
    const listener: SecureGrpcListenerShape = yield* makeGrpcListener({
      target: formatListenAddress({ host: settings.address.host ?? "0.0.0.0", port: settings.address.port }),
      credentials,
      options: settings.serverOptions ?? {},
      shutdownTimeout: settings.shutdownTimeout ?? Duration.seconds(5),
      bindError: (error) =>
        new SecureGrpcError({
          reason: `--secureGRPCAddr ${describeAddress(settings.address)}: ${bindReason(error)}`,
        }),
      onBound: (port) =>
        Effect.logInfo(`secure gRPC listener on ${formatListenAddress({ host: settings.address.host, port })} (TLS)`),
    })
    return listener
  })

export const layer = <E, R>(
  settings: SecureGrpcSettings,
  source: ServingCertSource<E, R>,
): Layer.Layer<SecureGrpcListener, E, Exclude<R, Scope.Scope>> =>
  Layer.scoped(SecureGrpcListener, makeSecureGrpcListener(settings, source))

/** Binds the listener; build it after every layer that adds a service. */
export const layerStart: Layer.Layer<never, SecureGrpcError, SecureGrpcListener> = Layer.effectDiscard(
  Effect.flatMap(SecureGrpcListener, (listener) => listener.start),
)
