/**
 * The CA's gRPC server: `mesh.v1.auth.MeshCertificateService/CreateCertificate` on a TLS
 * listener whose serving certificate this CA issues (for the discovery service's DNS names and
 * `MESHD_CUSTOM_HOST`), re-issued when the CA changes and at half of its lifetime without
 * restarting the listener. Client certificates are requested but optional: a certificate that
 * verifies against the trust bundle authenticates a renewal; otherwise a bearer token is needed.
 * Every refusal is a gRPC status with a clear message and a counted metric.
 */
import type { PeerCertificate, SecureVersion } from "node:tls"
import * as grpc from "@grpc/grpc-js"
import { Cause, Clock, Context, Data, Duration, Effect, Exit, Layer, Option, Runtime, Stream } from "effect"
import type { AuthContext, Authenticator } from "../../services/ca/authenticate.js"
import { CertificateAuthority, type CertificateAuthorityShape, createCertificate } from "../../services/ca/ca.js"
import { CaRefusal, GrpcCode } from "../../services/ca/errors.js"
import type { NodeAuthorizer } from "../../services/ca/identity.js"
import { trustBundlePem } from "../../services/ca/material.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { formatListenAddress, type ListenAddress } from "../../services/net/address.js"
import { type CaMetrics, caMetrics } from "./metrics.js"
import { caServiceDefinition, structStrings } from "./proto.js"

export interface CaServerSettings {
  /** `--secureGRPCAddr` */
  readonly address: ListenAddress
  /** DNS names of the serving certificate. */
  readonly dnsNames: ReadonlyArray<string>
  readonly authenticators: ReadonlyArray<Authenticator>
  readonly nodeAuthorizer: NodeAuthorizer | undefined
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
export interface CaServerTls {
  /** OpenSSL cipher list. */
  readonly ciphers?: string
  readonly minVersion?: SecureVersion
  readonly maxVersion?: SecureVersion
  /** ECDH curves, e.g. "P-256:P-384". */
  readonly ecdhCurve?: string
}

/**
 * Server credentials whose certificate and trust bundle can be replaced while serving. Client
 * certificates are requested but optional: grpc-js reports a peer certificate only when it
 * verified against the trust bundle.
 */
class ReloadableServerCredentials extends grpc.ServerCredentials {
  constructor(private readonly tls: CaServerTls) {
    super({ requestCert: true, rejectUnauthorized: false })
  }
  update(ca: string, certificate: string, privateKey: string) {
    // The TLS restrictions belong to the secure context: repeat them on every replacement.
    this.updateSecureContextOptions({
      ca,
      cert: certificate,
      key: privateKey,
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

export class CaGrpcServer extends Context.Tag("mesh/CaGrpcServer")<CaGrpcServer, CaGrpcServerShape>() {}

/** URI SANs of a peer certificate as Node reports them ("URI:spiffe://..., DNS:..."). */
export const peerUris = (cert: PeerCertificate | undefined): ReadonlyArray<string> | undefined => {
  if (cert === undefined) return undefined
  const san = cert.subjectaltname ?? ""
  return san
    .split(/,\s*/)
    .filter((part) => part.startsWith("URI:"))
    .map((part) => part.slice(4))
}

const countRefusal = (metrics: CaMetrics, refusal: CaRefusal) => {
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

const refreshServingCert = (
  ca: CertificateAuthorityShape,
  provider: ReloadableServerCredentials,
  settings: CaServerSettings,
) =>
  Effect.gen(function* () {
    const material = yield* ca.material
    const cert = yield* ca.issueServerCertificate(settings.dnsNames, settings.servingCertTtlSeconds ?? 24 * 3600)
    provider.update(trustBundlePem(material), cert.certChainPem, cert.keyPem)
    return cert
  })

export const makeCaGrpcServer = (settings: CaServerSettings) =>
  Effect.gen(function* () {
    const ca = yield* CertificateAuthority
    const metrics = caMetrics(yield* Metrics)
    const runtime = yield* Effect.runtime<never>()
    const provider = new ReloadableServerCredentials(settings.tls ?? {})
    const first = yield* Effect.mapError(
      refreshServingCert(ca, provider, settings),
      (e) => new CaServerError({ reason: `CA server: cannot issue the serving certificate: ${e.reason}` }),
    )

    // Re-issue the serving certificate when the CA changes and at half of its lifetime.
    yield* Effect.forkScoped(
      ca.changes.pipe(
        Stream.drop(1),
        Stream.runForEach(() =>
          refreshServingCert(ca, provider, settings).pipe(
            Effect.catchAll((e) => Effect.logError(`CA server: cannot re-issue the serving certificate: ${e.reason}`)),
          ),
        ),
      ),
    )
    yield* Effect.forkScoped(
      Effect.iterate(first.notAfter.getTime() - first.notBefore.getTime(), {
        while: () => true,
        body: (lifetimeMs) =>
          Effect.gen(function* () {
            yield* Effect.sleep(Duration.millis(Math.max(1000, lifetimeMs / 2)))
            const next = yield* refreshServingCert(ca, provider, settings)
            return next.notAfter.getTime() - (yield* Clock.currentTimeMillis)
          }).pipe(
            Effect.catchAll((e) =>
              Effect.as(Effect.logError(`CA server: cannot renew the serving certificate: ${e.reason}`), 60_000),
            ),
          ),
      }),
    )

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
              Effect.zipRight(Effect.logWarning(`CreateCertificate refused (${ctx.remoteAddress}): ${refusal.reason}`)),
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

    const server = new grpc.Server()
    server.addService(caServiceDefinition(), { CreateCertificate: handler })
    const target = formatListenAddress({ host: settings.address.host ?? "0.0.0.0", port: settings.address.port })
    const port = yield* Effect.acquireRelease(
      Effect.async<number, CaServerError>((resume) => {
        server.bindAsync(target, provider, (error, boundPort) => {
          if (error !== null)
            resume(
              Effect.fail(new CaServerError({ reason: `CA server: cannot listen on ${target}: ${error.message}` })),
            )
          else resume(Effect.succeed(boundPort))
        })
      }),
      () =>
        Effect.async<void>((resume) => {
          server.tryShutdown(() => resume(Effect.void))
        }).pipe(
          Effect.timeoutTo({
            duration: Duration.seconds(5),
            onTimeout: () => server.forceShutdown(),
            onSuccess: () => undefined,
          }),
          Effect.uninterruptible,
        ),
    )
    yield* Effect.logInfo(`CA server listening on ${formatListenAddress({ host: settings.address.host, port })} (TLS)`)
    return { port }
  })

export const caGrpcServerLayer = (
  settings: CaServerSettings,
): Layer.Layer<CaGrpcServer, CaServerError, CertificateAuthority | Metrics> =>
  Layer.scoped(CaGrpcServer, makeCaGrpcServer(settings))
