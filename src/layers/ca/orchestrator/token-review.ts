/**
 * The TokenReview authenticator of the CA: each bearer token is posted to the orchestrator as a
 * `authentication.k8s.io/v1` TokenReview asking for the accepted audiences; the API server's
 * answer names the service account (and the pod a bound token belongs to). Positive answers are
 * remembered for a short while so an agent's repeated requests do not each cost a round trip.
 * An unreachable or failing API server refuses the request with a clear reason; it never crashes.
 */
import { Clock, Effect, Either } from "effect"
import { type Authenticator, bearerToken, type Caller } from "../../../services/ca/authenticate.js"
import { AuthenticationError } from "../../../services/ca/errors.js"
import { readTokenReview, reviewCacheUntilMs, tokenReviewRequest } from "../../../services/ca/token-review.js"
import { withScope } from "../../../services/logging/logging.js"
import { OrchestratorClient, type OrchestratorClientShape } from "../../../services/orchestrator/client.js"
import { Resources } from "../../../services/orchestrator/resources.js"

export const TOKEN_REVIEW_AUTHENTICATOR = "OrchestratorTokenReviewAuthenticator"

export interface TokenReviewSettings {
  /** Audiences asked for and accepted (`TOKEN_AUDIENCES`, and `AUDIENCE`). */
  readonly audiences: ReadonlyArray<string>
  readonly trustDomain: string
  /** How long a positive answer is reused (never past the token's expiry); 0 disables. Default 60 s. */
  readonly cacheTtlMs?: number
}

const CACHE_SIZE = 10_000

export const tokenReviewAuthenticator = (
  client: OrchestratorClientShape,
  settings: TokenReviewSettings,
): Authenticator => {
  const cacheTtlMs = settings.cacheTtlMs ?? 60_000
  // token → caller until untilMs; insertion order evicts the oldest.
  const cache = new Map<string, { readonly caller: Caller; readonly untilMs: number }>()
  const fail = (reason: string) => Effect.fail(new AuthenticationError({ reason }))
  const review = (token: string, nowMs: number) =>
    client.create(Resources.tokenReviews, tokenReviewRequest(token, settings.audiences)).pipe(
      Effect.catchAll((e) =>
        Effect.zipRight(
          Effect.logWarning(
            `TokenReview on cluster ${client.clusterId} failed (HTTP ${e.status} ${e.reason}): ${e.message}`,
          ).pipe(withScope("ca")),
          fail(`the orchestrator could not review the token (HTTP ${e.status} ${e.reason}): ${e.message}`),
        ),
      ),
      Effect.flatMap((answer) => {
        const id = readTokenReview(answer.status, settings.audiences, settings.trustDomain)
        if (Either.isLeft(id)) return fail(id.left)
        const caller: Caller = {
          authSource: "IDToken",
          identities: [id.right.identity],
          orchestrator: id.right.orchestrator,
        }
        const untilMs = reviewCacheUntilMs(token, nowMs, cacheTtlMs)
        if (untilMs !== undefined) {
          if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
          cache.set(token, { caller, untilMs })
        }
        return Effect.succeed(caller)
      }),
    )
  return {
    name: TOKEN_REVIEW_AUTHENTICATOR,
    authenticate: (ctx) => {
      const token = bearerToken(ctx)
      if (Either.isLeft(token)) return fail(token.left)
      return Effect.flatMap(Clock.currentTimeMillis, (nowMs) => {
        const hit = cache.get(token.right)
        if (hit !== undefined) {
          if (hit.untilMs > nowMs) return Effect.succeed(hit.caller)
          cache.delete(token.right)
        }
        return review(token.right, nowMs)
      })
    },
  }
}

/** The authenticator for the local cluster's client; pass it in `CaConfig.extraAuthenticators`. */
export const makeTokenReviewAuthenticator = (settings: TokenReviewSettings) =>
  Effect.map(OrchestratorClient, (client) => tokenReviewAuthenticator(client, settings))
