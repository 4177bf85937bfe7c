/**
 * The secure gRPC listener of `mesh-discovery` on `--secureGRPCAddr` (TLS): CreateCertificate
 * unless `ENABLE_CA_SERVER` is false, plus the given services (secure ADS), all added before the
 * listener binds so the port never answers UNIMPLEMENTED while starting. Its certificate comes
 * from `ServingCert`; without one (`PILOT_CERT_PROVIDER=none`) or without any service, nothing
 * listens. Provides `SecureGrpcServing` once bound (or off), for the listeners that bind after it.
 */
import { Effect, Layer } from "effect"
import * as Authority from "../../layers/ca/authority.js"
import { layerAuthenticators as caAuthenticatorsLayer } from "../../layers/ca/callers.js"
import { layer as caServiceLayer } from "../../layers/ca/grpc-server.js"
import { layer as servingCertLayer } from "../../layers/ca/serving-cert.js"
import {
  type SecureGrpcError,
  SecureGrpcListener,
  layer as secureGrpcListenerLayer,
} from "../../layers/secure-grpc/listener.js"
import { ServingCert } from "../../layers/secure-grpc/serving-cert.js"
import { AdsGrpcService } from "../../layers/xds/ads-server.js"
import type { CertificateAuthority } from "../../services/ca/ca.js"
import { CaAuthenticators, SecureGrpcServing } from "../../services/ca/callers.js"
import { CaConfig } from "../../services/ca/config.js"
import type { CaConfigError, CaMaterialError } from "../../services/ca/errors.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import { XdsGuards } from "../../services/xds/protocol/xds-guards.js"

const off = Layer.succeed(SecureGrpcServing, { port: undefined })

/** The secure listener with the CA service (per `ENABLE_CA_SERVER`) and `services`. */
export const layer = <R = never>(
  services?: Layer.Layer<never, never, R>,
): Layer.Layer<
  SecureGrpcServing,
  SecureGrpcError,
  CaConfig | CaAuthenticators | ServingCert | CertificateAuthority | Metrics | Exclude<R, SecureGrpcListener>
> =>
  Layer.unwrapEffect(
    Effect.gen(function* () {
      const config = yield* CaConfig
      const callers = yield* CaAuthenticators
      const cert = yield* ServingCert
      const all: Array<Layer.Layer<never, never, R | SecureGrpcListener | CertificateAuthority | Metrics>> = [
        ...(config.ENABLE_CA_SERVER ? [caServiceLayer(callers)] : []),
        ...(services !== undefined ? [services] : []),
      ]
      if (all.length === 0) return off
      if (cert.source === undefined) {
        yield* Effect.logWarning(
          `PILOT_CERT_PROVIDER=${config.PILOT_CERT_PROVIDER} and no --tlsCertFile: the secure gRPC listener (secure xDS, CA) on --secureGRPCAddr is disabled`,
        )
        return off
      }
      const listener = secureGrpcListenerLayer(
        {
          address: config.secureGrpcAddr,
          tls: cert.tls,
          ...(config.serverOptions !== undefined ? { serverOptions: config.serverOptions } : {}),
        },
        cert.source,
      )
      const bind = Layer.effect(
        SecureGrpcServing,
        Effect.flatMap(SecureGrpcListener, (l) => Effect.map(l.start, (port) => ({ port }))),
      )
      const [first, ...rest] = all
      const added = rest.reduce((acc, layer) => Layer.merge(acc, layer), first!)
      // Services first, then bind.
      return bind.pipe(Layer.provide(added), Layer.provide(listener))
    }),
  )

/** Secure ADS on the secure listener, every stream through the secure xDS guard. */
export const layerAds: Layer.Layer<never, never, SecureGrpcListener | AdsGrpcService | XdsGuards> = Layer.scopedDiscard(
  Effect.gen(function* () {
    const ads = yield* AdsGrpcService
    const listener = yield* SecureGrpcListener
    const guards = yield* XdsGuards
    yield* listener.addService(ads.definition, yield* ads.serve(guards.secure))
  }),
)

/**
 * The CertificateAuthority and, when `ENABLE_CA_SERVER` is true, the CreateCertificate service
 * on its own secure listener (no ADS), from `CaConfig` alone.
 */
export const layerCaOnly: Layer.Layer<
  CertificateAuthority | SecureGrpcServing,
  CaConfigError | CaMaterialError | SecureGrpcError,
  CaConfig | Metrics
> = layer().pipe(
  Layer.provideMerge(servingCertLayer),
  Layer.provideMerge(Layer.merge(Authority.layer, caAuthenticatorsLayer)),
)
