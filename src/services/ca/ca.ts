/**
 * The certificate authority contract and the CreateCertificate request logic.
 *
 * A request is handled in the reference's order: authenticate the caller (client certificate
 * or bearer token), apply node impersonation when the metadata asks for it, parse and verify
 * the CSR, check that the CSR's identities are the caller's, then sign with the TTL rule.
 * Every refusal is a `CaRefusal` carrying its gRPC status and the metric that counts it.
 */
import { Context, Effect, Either, type Stream } from "effect"
import { type AuthContext, type Authenticator, authenticateWith } from "./authenticate.js"
import { decodeCsr, type ParsedCsr } from "./csr.js"
import { type CaMaterialError, CaRefusal, GrpcCode, type SignError, signErrorCode } from "./errors.js"
import { checkCsrIdentities, IMPERSONATED_IDENTITY_KEY, type NodeAuthorizer, type NodeRefusalKind } from "./identity.js"
import type { KeyRotationPhase } from "./key-rotation.js"
import type { SigningMaterial } from "./material.js"
import type { TtlPolicy } from "./ttl.js"

export interface SignRequest {
  readonly csr: ParsedCsr
  /** The identities (URI SANs) the certificate carries. */
  readonly identities: ReadonlyArray<string>
  /** `validity_duration` of the request, seconds; non-positive = default. */
  readonly requestedTtlSeconds: number
}

export interface ServerCertificate {
  /** Server certificate then the chain up to the root, PEM. */
  readonly certChainPem: string
  readonly keyPem: string
  readonly notBefore: Date
  readonly notAfter: Date
}

export interface CertificateAuthorityShape {
  readonly policy: TtlPolicy
  /** The current key material; fails with CA_NOT_READY before it is loaded. */
  readonly material: Effect.Effect<SigningMaterial, SignError>
  /** The current material, then each change (plugged-in CA reload, root rotation). */
  readonly changes: Stream.Stream<SigningMaterial>
  /** Signs a workload certificate; returns the chain (leaf first, root last) as PEM strings. */
  readonly sign: (request: SignRequest) => Effect.Effect<ReadonlyArray<string>, SignError>
  /** Key rotation and the trust bundle's watchers; absent in test doubles. */
  readonly keyRotation?: KeyRotationShape
  /** Issues a serving certificate (fresh ECDSA P-256 key) for DNS names, e.g. the discovery service. */
  readonly issueServerCertificate: (
    dnsNames: ReadonlyArray<string>,
    ttlSeconds: number,
  ) => Effect.Effect<ServerCertificate, SignError>
}

/** Where a key rotation stands (the CA debug page, `meshctl admin ca status`). */
export interface KeyRotationStatus {
  readonly phase: KeyRotationPhase
  readonly source: "self-signed" | "plugged"
  readonly root: { readonly serial: string; readonly notAfter: string; readonly key: string }
  /** Phase (a): the root being published, not signing yet. */
  readonly pending?: { readonly serial: string; readonly publishedAt: string; readonly key: string }
  /** Phase (c): roots kept in the bundle until every certificate they signed has expired. */
  readonly retired: ReadonlyArray<{ readonly serial: string; readonly retainUntil: string }>
  readonly bundle: { readonly version: string; readonly roots: number }
  readonly watchers: {
    readonly total: number
    readonly current: number
    readonly lagging: ReadonlyArray<{ readonly identity: string; readonly peer: string; readonly acked?: string }>
  }
  /** Why phase (a) waits, or how it ended. */
  readonly decision?: string
}

/** The agents watching the trust bundle (`WatchTrustBundle`), as the CA counts them. */
export interface TrustBundleWatch {
  /** Registers a stream; fails (with the refusal's text) when the watcher bound is reached. */
  readonly register: (identity: string, peer: string) => Effect.Effect<number, string>
  readonly ack: (id: number, version: string) => Effect.Effect<void>
  readonly unregister: (id: number) => Effect.Effect<void>
}

/** Key rotation of the CA (issue 43). */
export interface KeyRotationShape {
  readonly status: Effect.Effect<KeyRotationStatus>
  /** Starts phase (a) with a new key (self-signed CA); when a rotation is under way, reports it. */
  readonly rotate: Effect.Effect<KeyRotationStatus, CaMaterialError>
  readonly watch: TrustBundleWatch
}

export class CertificateAuthority extends Context.Tag("mesh/CertificateAuthority")<
  CertificateAuthority,
  CertificateAuthorityShape
>() {}

export interface CreateCertificateRequest {
  readonly csr: string
  readonly validityDuration: number
  /** String values of the request's metadata Struct. */
  readonly metadata: Readonly<Record<string, string>>
}

export interface CreateCertificateDeps {
  readonly authenticators: ReadonlyArray<Authenticator>
  /** Present when `CA_TRUSTED_NODE_ACCOUNTS` is set. */
  readonly nodeAuthorizer: NodeAuthorizer | undefined
  readonly ca: CertificateAuthorityShape
}

const IMPERSONATION_FAILURE = "request impersonation authentication failure"

export const createCertificate = (
  deps: CreateCertificateDeps,
  request: CreateCertificateRequest,
  ctx: AuthContext,
): Effect.Effect<ReadonlyArray<string>, CaRefusal> =>
  Effect.gen(function* () {
    const caller = yield* Effect.mapError(
      authenticateWith(deps.authenticators, ctx),
      (e) => new CaRefusal({ code: GrpcCode.UNAUTHENTICATED, reason: e.reason, metric: "authentication_failure" }),
    )
    let identities = caller.identities
    const impersonated = request.metadata[IMPERSONATED_IDENTITY_KEY] ?? ""
    if (impersonated !== "") {
      // The caller learns only that impersonation failed (as the reference: which pods run on
      // which node is not the caller's to learn); the reason is logged and counted by kind.
      const refusal = (kind: NodeRefusalKind) =>
        new CaRefusal({
          code: GrpcCode.UNAUTHENTICATED,
          reason: IMPERSONATION_FAILURE,
          metric: "authentication_failure",
          nodeRefusal: kind,
        })
      if (deps.nodeAuthorizer === undefined) {
        yield* Effect.logWarning("impersonation refused: CA_TRUSTED_NODE_ACCOUNTS is not configured")
        return yield* refusal("not_configured")
      }
      yield* deps.nodeAuthorizer.authorize(caller.orchestrator, impersonated).pipe(
        Effect.tapError((why) => Effect.logWarning(`impersonation of ${impersonated} refused: ${why.message}`)),
        Effect.mapError((why) => refusal(why.kind)),
      )
      identities = [impersonated]
    }
    const decoded = decodeCsr(request.csr)
    if (Either.isLeft(decoded)) {
      return yield* new CaRefusal({
        code: GrpcCode.INVALID_ARGUMENT,
        reason: `CSR parsing error: ${decoded.left.reason}`,
        metric: "csr_parsing_err",
      })
    }
    const csr = decoded.right
    const checked = checkCsrIdentities(csr.sans.uris, identities)
    if (Either.isLeft(checked)) {
      return yield* new CaRefusal({
        code: csr.sans.uris.length === 0 ? GrpcCode.INVALID_ARGUMENT : GrpcCode.PERMISSION_DENIED,
        reason: `CSR identity error: ${checked.left}`,
        metric: "id_extraction_err",
      })
    }
    return yield* Effect.mapError(
      deps.ca.sign({ csr, identities: checked.right, requestedTtlSeconds: request.validityDuration }),
      (e) =>
        new CaRefusal({
          code: signErrorCode(e.type),
          reason: `CSR signing error (${e.reason})`,
          metric: "csr_sign_err",
          errorType: e.type,
        }),
    )
  })
