/**
 * JWT bearer-token authentication for certificate requests (spec §5 rule 3): the token's
 * signature is checked with the issuer's keys (JWKS from `TOKEN_ISSUER`'s OIDC discovery, or
 * from `JWT_RULE`), its expiry, its issuer and an audience among `TOKEN_AUDIENCES`. The caller's
 * identity comes from the `sub` claim `system:serviceaccount:<ns>:<sa>` or from the
 * orchestrator's service-account token claims (`kubernetes.io`).
 * How keys are fetched is the layer's business: this module takes a jose key resolver.
 */
import { Clock, Effect, Either, Schema } from "effect"
import { parseServiceAccountUser, SERVICE_ACCOUNT_USER_PREFIX } from "../constants.js"
import { type Authenticator, bearerToken, type Caller } from "./authenticate.js"
import { AuthenticationError } from "./errors.js"
import { type OrchestratorInfo, spiffeId } from "./identity.js"
import { type Jose, jose } from "./jose-library.js"

export const DEFAULT_TOKEN_AUDIENCE = "mesh-ca"
const SA_PREFIX = SERVICE_ACCOUNT_USER_PREFIX

/** `TOKEN_AUDIENCES` and `AUDIENCE` combined: every audience a token may carry. */
export const acceptedAudiences = (tokenAudiences: string, audience = ""): ReadonlyArray<string> => {
  const list = tokenAudiences
    .split(",")
    .map((a) => a.trim())
    .filter((a) => a !== "")
  const all = list.length === 0 ? [DEFAULT_TOKEN_AUDIENCE] : list
  return audience.trim() === "" || all.includes(audience.trim()) ? all : [...all, audience.trim()]
}

/** A `JWT_RULE`: the fields of the reference's JWTRule that token checking uses. */
export interface JwtRule {
  readonly issuer: string
  readonly audiences: ReadonlyArray<string>
  readonly jwksUri?: string
  /** Inline JWKS (JSON text). */
  readonly jwks?: string
}

const JwtRuleJson = Schema.Struct({
  issuer: Schema.String,
  audiences: Schema.optional(Schema.Array(Schema.String)),
  jwksUri: Schema.optional(Schema.String),
  jwks_uri: Schema.optional(Schema.String),
  jwks: Schema.optional(Schema.String),
})

export const parseJwtRule = (text: string): Either.Either<JwtRule, string> => {
  const json = Either.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => `JWT_RULE is not JSON: ${(e as Error).message}`,
  })
  if (Either.isLeft(json)) return Either.left(json.left)
  return Either.mapBoth(Schema.decodeUnknownEither(JwtRuleJson)(json.right), {
    onLeft: (e) => `JWT_RULE: ${e.message}`,
    onRight: (rule) => {
      const jwksUri = rule.jwksUri ?? rule.jwks_uri
      return {
        issuer: rule.issuer,
        audiences: rule.audiences ?? [],
        ...(jwksUri !== undefined ? { jwksUri } : {}),
        ...(rule.jwks !== undefined ? { jwks: rule.jwks } : {}),
      }
    },
  })
}

interface OrchClaims {
  readonly namespace?: unknown
  readonly serviceaccount?: { readonly name?: unknown }
  readonly pod?: { readonly name?: unknown; readonly uid?: unknown }
  readonly node?: { readonly name?: unknown }
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** The caller's identity and orchestrator facts from a verified token's claims. */
export const identityFromClaims = (
  payload: Jose.JWTPayload,
  trustDomain: string,
): Either.Either<{ readonly identity: string; readonly orchestrator: OrchestratorInfo }, string> => {
  const orch = (payload["kubernetes.io"] ?? payload.orchestrator) as OrchClaims | undefined
  let namespace: string | undefined
  let serviceAccount: string | undefined
  const sub = payload.sub ?? ""
  if (sub.startsWith(SA_PREFIX)) {
    const account = parseServiceAccountUser(sub)
    if (account === undefined) {
      return Either.left(`invalid sub "${sub}": expected ${SA_PREFIX}<namespace>:<service-account>`)
    }
    namespace = account.namespace
    serviceAccount = account.serviceAccount
  } else if (orch !== undefined) {
    namespace = str(orch.namespace)
    serviceAccount = str(orch.serviceaccount?.name)
  }
  if (namespace === undefined || serviceAccount === undefined) {
    return Either.left(`invalid sub "${sub}": the token names no service account`)
  }
  const podName = str(orch?.pod?.name)
  const podUid = str(orch?.pod?.uid)
  const nodeName = str(orch?.node?.name)
  return Either.right({
    identity: spiffeId(trustDomain, namespace, serviceAccount),
    orchestrator: {
      namespace,
      serviceAccount,
      ...(podName !== undefined ? { podName } : {}),
      ...(podUid !== undefined ? { podUid } : {}),
      ...(nodeName !== undefined ? { nodeName } : {}),
    },
  })
}

export interface JwtAuthenticatorSettings {
  readonly issuer: string
  readonly audiences: ReadonlyArray<string>
  readonly trustDomain: string
  /** Resolves the verification key for a token header (jose's remote or local JWKS). */
  readonly keys: Jose.JWTVerifyGetKey
  /** Accepted clock skew for exp/nbf, seconds. */
  readonly clockToleranceSeconds?: number
  /**
   * How long a verified token's caller is remembered (never past its expiry), so that an agent's
   * repeated requests do not pay for signature checks; 0 disables. Default 60s.
   */
  readonly cacheTtlMs?: number
}

const CACHE_SIZE = 10_000

/** Verified tokens: token → the caller it names, until `untilMs`. Insertion order evicts the oldest. */
class VerifiedTokens {
  private readonly entries = new Map<string, { readonly caller: Caller; readonly untilMs: number }>()
  get(token: string, nowMs: number) {
    const entry = this.entries.get(token)
    if (entry === undefined) return undefined
    if (entry.untilMs <= nowMs) {
      this.entries.delete(token)
      return undefined
    }
    return entry.caller
  }
  set(token: string, caller: Caller, untilMs: number) {
    if (this.entries.size >= CACHE_SIZE) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(token, { caller, untilMs })
  }
}

const describe = (e: unknown, token: string, settings: JwtAuthenticatorSettings): string => {
  const { decodeJwt, errors } = jose()
  const claims = Either.getOrUndefined(Either.try(() => decodeJwt(token)))
  if (e instanceof errors.JWTExpired) return `the token expired at ${new Date((claims?.exp ?? 0) * 1000).toISOString()}`
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === "aud") {
      const aud = claims?.aud
      return `the token audience [${(Array.isArray(aud) ? aud : aud === undefined ? [] : [aud]).join(", ")}] is not one of the accepted audiences [${settings.audiences.join(", ")}]`
    }
    if (e.claim === "iss") return `the token issuer "${claims?.iss ?? ""}" is not "${settings.issuer}"`
    return `the token claim "${e.claim}" is invalid: ${e.reason}`
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return "the token signature is invalid"
  if (e instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's JWKS matches the token"
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid) return `the token is malformed: ${e.message}`
  if (e instanceof errors.JOSEAlgNotAllowed || e instanceof errors.JOSENotSupported) {
    return `the token algorithm is not supported: ${(e as Error).message}`
  }
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid) {
    return `the issuer's keys could not be fetched: ${(e as Error).message}`
  }
  return `the token could not be verified: ${(e as Error).message ?? String(e)}`
}

/** Verifies a compact JWT and returns its payload (errors as clear text). */
export const verifyJwt = (token: string, settings: JwtAuthenticatorSettings): Effect.Effect<Jose.JWTPayload, string> =>
  Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    Effect.tryPromise({
      try: () =>
        jose().jwtVerify(token, settings.keys, {
          issuer: settings.issuer,
          audience: [...settings.audiences],
          currentDate: new Date(nowMs),
          clockTolerance: settings.clockToleranceSeconds ?? 0,
          requiredClaims: ["exp"],
        }),
      catch: (e) => describe(e, token, settings),
    }),
  ).pipe(Effect.map((result) => result.payload))

export const jwtAuthenticator = (settings: JwtAuthenticatorSettings): Authenticator => {
  const cacheTtlMs = settings.cacheTtlMs ?? 60_000
  const cache = new VerifiedTokens()
  const fail = (reason: string) => Effect.fail(new AuthenticationError({ reason }))
  const verify = (token: string, nowMs: number) =>
    Effect.flatMap(
      Effect.mapError(verifyJwt(token, settings), (reason) => new AuthenticationError({ reason })),
      (payload) => {
        const id = identityFromClaims(payload, settings.trustDomain)
        if (Either.isLeft(id)) return fail(id.left)
        const caller: Caller = {
          authSource: "IDToken",
          identities: [id.right.identity],
          orchestrator: id.right.orchestrator,
        }
        if (cacheTtlMs > 0 && payload.exp !== undefined) {
          cache.set(token, caller, Math.min(payload.exp * 1000, nowMs + cacheTtlMs))
        }
        return Effect.succeed(caller)
      },
    )
  return {
    name: "JwtAuthenticator",
    // A cache hit is one Effect step: agents renew with the same token many times.
    authenticate: (ctx) => {
      const token = bearerToken(ctx)
      if (Either.isLeft(token)) return fail(token.left)
      return Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
        const hit = cacheTtlMs > 0 ? cache.get(token.right, nowMs) : undefined
        return hit !== undefined ? Effect.succeed(hit) : verify(token.right, nowMs)
      })
    },
  }
}
