/**
 * Who is asking: the `Authenticator` contract and the two built-in authenticators' logic.
 * A request is tried against each authenticator in order; the first that succeeds names the
 * caller. The client-certificate authenticator reads the SPIFFE URI SANs of a verified peer
 * certificate (renewals); the JWT authenticator lives in jwt.ts; an orchestrator TokenReview
 * authenticator implements the same interface.
 */
import { Effect, Either } from "effect"
import { AuthenticationError } from "./errors.js"
import { type OrchestratorInfo, parseSpiffeId, SPIFFE_SCHEME } from "./identity.js"

/** What the transport knows about a request. */
export interface AuthContext {
  /** Request metadata (lower-case keys), e.g. `authorization`. */
  readonly metadata: (key: string) => ReadonlyArray<string>
  /**
   * URI SANs of the client certificate, present only when the TLS layer verified the
   * certificate against the CA's trust bundle.
   */
  readonly verifiedPeerUris: ReadonlyArray<string> | undefined
  readonly remoteAddress?: string
}

export type AuthSource = "ClientCertificate" | "IDToken"

export interface Caller {
  readonly authSource: AuthSource
  readonly identities: ReadonlyArray<string>
  /** Orchestrator facts (from a token), used for node impersonation. */
  readonly orchestrator?: OrchestratorInfo
}

export interface Authenticator {
  /** Name used in failure messages ("ClientCertAuthenticator", "JwtAuthenticator", ...). */
  readonly name: string
  readonly authenticate: (ctx: AuthContext) => Effect.Effect<Caller, AuthenticationError>
}

/** Tries each authenticator in order; fails with every authenticator's reason. */
export const authenticateWith = (
  authenticators: ReadonlyArray<Authenticator>,
  ctx: AuthContext,
): Effect.Effect<Caller, AuthenticationError> =>
  Effect.gen(function* () {
    const failures: Array<string> = []
    for (const authenticator of authenticators) {
      const result = yield* Effect.either(authenticator.authenticate(ctx))
      if (Either.isRight(result)) return result.right
      failures.push(`Authenticator ${authenticator.name}: ${result.left.reason}`)
    }
    return yield* new AuthenticationError({
      reason: failures.length === 0 ? "no authenticator is configured" : failures.join("; "),
    })
  })

/** The bearer token of the `authorization` metadata, if any. */
export const bearerToken = (ctx: AuthContext): Either.Either<string, string> => {
  const values = ctx.metadata("authorization")
  if (values.length === 0) return Either.left("no bearer token in the authorization metadata")
  const value = values[0]!.trim()
  const match = /^bearer\s+(\S+)$/i.exec(value)
  if (match === null) return Either.left('the authorization metadata is not of the form "Bearer <token>"')
  return Either.right(match[1]!)
}

// Token callers pass through this authenticator's refusal on every request: one error value
// each, instead of an error (and its stack trace) per request.
const NO_CLIENT_CERTIFICATE = Effect.fail(
  new AuthenticationError({ reason: "no verified client certificate is presented" }),
)
const NO_SPIFFE_IDENTITY = Effect.fail(
  new AuthenticationError({ reason: "the client certificate carries no SPIFFE identity" }),
)

/**
 * Client-certificate authentication: the identities are the SPIFFE URI SANs of a certificate
 * the TLS layer verified against the trust bundle.
 */
export const clientCertAuthenticator = (): Authenticator => ({
  name: "ClientCertAuthenticator",
  authenticate: (ctx) => {
    if (ctx.verifiedPeerUris === undefined) return NO_CLIENT_CERTIFICATE
    const ids = ctx.verifiedPeerUris.filter(
      (uri) => uri.startsWith(SPIFFE_SCHEME) && Either.isRight(parseSpiffeId(uri)),
    )
    if (ids.length === 0) return NO_SPIFFE_IDENTITY
    return Effect.succeed({ authSource: "ClientCertificate", identities: ids })
  },
})
