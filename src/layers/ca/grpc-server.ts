/**
 * The CA's gRPC service: `mesh.v1.auth.MeshCertificateService/CreateCertificate` (and
 * `WatchTrustBundle`, trust-bundle-watch.ts), added to the
 * secure gRPC listener of `--secureGRPCAddr` (src/layers/secure-grpc/listener.ts), which also
 * serves secure ADS. Client certificates are requested but optional: a certificate that verifies
 * against the trust bundle authenticates a renewal; otherwise a bearer token is needed. Every
 * refusal is a gRPC status with a clear message and a counted metric; the warning for it is
 * aggregated per reason (the first at once, then one summary per interval), so a client retrying
 * a refused request in a loop does not flood the log.
 *
 * `layerServer` is the CA alone on its own listener with a CA-issued serving certificate
 * (tests, benchmarks and the agent fixtures use it).
 */
import * as grpc from "@grpc/grpc-js"
import { Cause, Context, Data, type Duration, Effect, Exit, Layer, Option, Runtime } from "effect"
import type { AuthContext, Authenticator } from "../../services/ca/authenticate.js"
import { CertificateAuthority, createCertificate } from "../../services/ca/ca.js"
import { CaRefusal, GrpcCode } from "../../services/ca/errors.js"
import type { NodeAuthorizer } from "../../services/ca/identity.js"
import { formatWindow, makeThrottledLogger } from "../../services/logging/log-throttle.js"
import { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import {
  type ListenerTls,
  peerUris,
  SecureGrpcListener,
  layer as secureGrpcListenerLayer,
} from "../secure-grpc/listener.js"
import { caIssuedCertSource } from "../secure-grpc/serving-cert.js"
import { type CaMetrics, caMetrics } from "./metrics.js"
import { caServiceDefinition, structStrings } from "./proto.js"
import { watchTrustBundleHandler } from "./trust-bundle-watch.js"

export { peerUris }

/** What the CA service needs: who may ask, and who may ask for others. */
export interface CaServiceSettings {
  readonly authenticators: ReadonlyArray<Authenticator>
  readonly nodeAuthorizer: NodeAuthorizer | undefined
  /** At most one summary of repeated refusal warnings per reason and interval (default 10 s). */
  readonly refusalLogInterval?: Duration.DurationInput
}

/** Refusal reasons can quote what the caller sent: bound the text kept per throttling key. */
const REFUSAL_KEY_MAX = 200

export interface CaServerSettings extends CaServiceSettings {
  /** `--secureGRPCAddr` */
  readonly address: ListenAddress
  /** DNS names of the serving certificate. */
  readonly dnsNames: ReadonlyArray<string>
  /** Lifetime of the serving certificate, seconds (default 24h). */
  readonly servingCertTtlSeconds?: number
  readonly tls?: CaServerTls
}

export interface CaGrpcServerShape {
  /** The bound port (useful with port 0). */
  readonly port: number
}

export class CaServerError extends Data.TaggedError("CaServerError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** TLS restrictions of the listener (`--tls-cipher-suites`, `COMPLIANCE_POLICY`). */
export type CaServerTls = ListenerTls

export class CaGrpcServer extends Context.Tag("mesh/CaGrpcServer")<CaGrpcServer, CaGrpcServerShape>() {}

const countRefusal = (metrics: CaMetrics, refusal: CaRefusal) => {
  if (refusal.nodeRefusal !== undefined) metrics.nodeRefusals.inc({ reason: refusal.nodeRefusal })
  switch (refusal.metric) {
    case "authentication_failure":
      return metrics.authnError.inc()
    case "csr_parsing_err":
      return metrics.csrParsingError.inc()
    case "id_extraction_err":
      return metrics.idExtractionError.inc()
    case "csr_sign_err":
      return metrics.signError.inc({ error_type: refusal.errorType ?? "UNKNOWN" })
  }
}

/** Adds CreateCertificate to the secure gRPC listener for the lifetime of the scope. */
export const addCaService = (settings: CaServiceSettings) =>
  Effect.gen(function* () {
    const ca = yield* CertificateAuthority
    const metrics = caMetrics(yield* Metrics)
    const listener = yield* SecureGrpcListener
    const runtime = yield* Effect.runtime<never>()
    const refusalLog = yield* makeThrottledLogger({
      ...(settings.refusalLogInterval !== undefined ? { interval: settings.refusalLogInterval } : {}),
      summary: ({ key, count, windowMs }) =>
        `CreateCertificate refused: ${count} more similar refusals in the last ${formatWindow(windowMs)}: ${key}`,
    })

    const handler: grpc.handleUnaryCall<
      { csr?: string; validity_duration?: number; metadata?: unknown },
      { cert_chain: ReadonlyArray<string> }
    > = (call, callback) => {
      metrics.csr.inc()
      const ctx: AuthContext = {
        metadata: (key) => call.metadata.get(key).map((v) => (typeof v === "string" ? v : v.toString("utf8"))),
        verifiedPeerUris: peerUris(call.getAuthContext().sslPeerCertificate),
        remoteAddress: call.getPeer(),
      }
      const request = {
        csr: call.request.csr ?? "",
        validityDuration: Number(call.request.validity_duration ?? 0),
        metadata: structStrings(call.request.metadata),
      }
      const program = createCertificate(
        { authenticators: settings.authenticators, nodeAuthorizer: settings.nodeAuthorizer, ca },
        request,
        ctx,
      ).pipe(
        Effect.catchAllDefect((defect) =>
          Effect.zipRight(
            Effect.logError("CreateCertificate failed unexpectedly", defect),
            Effect.fail(
              new CaRefusal({
                code: GrpcCode.INTERNAL,
                reason: "CSR signing error (internal error)",
                metric: "csr_sign_err",
                errorType: "CERT_GEN_ERROR",
              }),
            ),
          ),
        ),
        Effect.tapBoth({
          onFailure: (refusal) =>
            Effect.sync(() => countRefusal(metrics, refusal)).pipe(
              Effect.zipRight(
                refusalLog.log(
                  refusal.reason.slice(0, REFUSAL_KEY_MAX),
                  `CreateCertificate refused (${ctx.remoteAddress}): ${refusal.reason}`,
                ),
              ),
            ),
          onSuccess: () => Effect.sync(() => metrics.success.inc()),
        }),
        Effect.withSpan("MeshCertificateService.CreateCertificate", { captureStackTrace: false }),
      )
      Runtime.runPromiseExit(runtime)(program).then((exit) => {
        if (Exit.isSuccess(exit)) return callback(null, { cert_chain: exit.value })
        const failure = Option.getOrUndefined(Cause.failureOption(exit.cause))
        if (failure !== undefined) {
          return callback({ code: failure.code, details: failure.reason, metadata: new grpc.Metadata() })
        }
        // Interrupted: the server is shutting down.
        callback({
          code: grpc.status.UNAVAILABLE,
          details: "the CA server is shutting down",
          metadata: new grpc.Metadata(),
        })
      })
    }

    const watchTrustBundle = watchTrustBundleHandler(
      { ca, authenticators: settings.authenticators, refused: (key, line) => refusalLog.log(key, line) },
      runtime,
    )
    yield* listener.addService(caServiceDefinition(), {
      CreateCertificate: handler,
      WatchTrustBundle: watchTrustBundle,
    })
  })

/** The CA service on the secure gRPC listener (which the caller builds and starts). */
export const layer = (
  settings: CaServiceSettings,
): Layer.Layer<never, never, SecureGrpcListener | CertificateAuthority | Metrics> =>
  Layer.scopedDiscard(addCaService(settings))

/**
 * The CA alone on its own TLS listener, serving with a certificate it issues for `dnsNames`
 * (re-issued when the CA changes and at half of its lifetime).
 */
export const layerServer = (
  settings: CaServerSettings,
): Layer.Layer<CaGrpcServer, CaServerError, CertificateAuthority | Metrics> => {
  const listener = secureGrpcListenerLayer(
    { address: settings.address, ...(settings.tls !== undefined ? { tls: settings.tls } : {}) },
    caIssuedCertSource(settings.dnsNames, settings.servingCertTtlSeconds),
  )
  const started = Layer.effect(
    CaGrpcServer,
    Effect.flatMap(SecureGrpcListener, (l) => l.start).pipe(Effect.map((port) => ({ port }))),
  ).pipe(Layer.provide(layer(settings)))
  return Layer.provide(started, listener).pipe(Layer.mapError((e) => new CaServerError({ reason: e.reason })))
}
