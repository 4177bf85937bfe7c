/**
 * Bearer-token authentication by the orchestrator's TokenReview API (spec §5 rule 3): the API
 * server checks the token (signature, expiry, bound pod still alive) and answers who it names.
 * This module builds the review and reads its answer; the layer posts it
 * (src/layers/ca/orchestrator/token-review.ts).
 *
 * The answer is accepted as the reference accepts it: authenticated, no error, a member of
 * `system:serviceaccounts`, a user `system:serviceaccount:<ns>:<sa>`, and — because a review
 * that asked for audiences must be checked for them — an audience among the ones asked for. An
 * empty `status.audiences` means the token is only good for the API server itself.
 */
import { Either } from "effect"
import { parseServiceAccountUser, SERVICE_ACCOUNT_USER_PREFIX, spiffeId } from "../constants.js"
import type { OrchestratorInfo } from "./identity.js"

export const TOKEN_REVIEW_API_VERSION = "authentication.k8s.io/v1"
/** The group every service-account user belongs to. */
export const SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
const SA_PREFIX = SERVICE_ACCOUNT_USER_PREFIX
/** `status.user.extra` keys of a token bound to a pod (the reference reads these two). */
export const POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name"
export const POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid"

export interface TokenReviewStatus {
  readonly authenticated?: boolean
  readonly user?: {
    readonly username?: string
    readonly uid?: string
    readonly groups?: ReadonlyArray<string>
    readonly extra?: Readonly<Record<string, ReadonlyArray<string>>>
  }
  readonly audiences?: ReadonlyArray<string>
  readonly error?: string
}

export interface TokenReview {
  readonly apiVersion: string
  readonly kind: "TokenReview"
  readonly metadata: { readonly name: string }
  readonly spec: { readonly token: string; readonly audiences: ReadonlyArray<string> }
  readonly status?: TokenReviewStatus
}

/** The review to post. The API server ignores `metadata.name` for TokenReviews (nothing is stored). */
export const tokenReviewRequest = (token: string, audiences: ReadonlyArray<string>): TokenReview => ({
  apiVersion: TOKEN_REVIEW_API_VERSION,
  kind: "TokenReview",
  metadata: { name: "" },
  spec: { token, audiences: [...audiences] },
})

const firstExtra = (status: TokenReviewStatus, key: string): string | undefined => {
  const value = status.user?.extra?.[key]?.[0]
  return value === undefined || value === "" ? undefined : value
}

/** The caller named by a review's answer, or why it is refused. */
export const readTokenReview = (
  status: TokenReviewStatus | undefined,
  wantedAudiences: ReadonlyArray<string>,
  trustDomain: string,
): Either.Either<{ readonly identity: string; readonly orchestrator: OrchestratorInfo }, string> => {
  if (status === undefined) return Either.left("the TokenReview answer has no status")
  if (status.error !== undefined && status.error !== "") {
    return Either.left(`the service account authentication returns an error: ${status.error}`)
  }
  if (status.authenticated !== true) return Either.left("the token is not authenticated")
  const granted = status.audiences ?? []
  if (!granted.some((a) => wantedAudiences.includes(a))) {
    return Either.left(
      `the token audience [${granted.join(", ")}] is not one of the accepted audiences [${wantedAudiences.join(", ")}]`,
    )
  }
  if (!(status.user?.groups ?? []).includes(SERVICE_ACCOUNTS_GROUP)) {
    return Either.left(`the token is not a service account (not in group ${SERVICE_ACCOUNTS_GROUP})`)
  }
  const username = status.user?.username ?? ""
  const account = parseServiceAccountUser(username)
  if (account === undefined) {
    return Either.left(`invalid username "${username}": expected ${SA_PREFIX}<namespace>:<service-account>`)
  }
  const { namespace, serviceAccount } = account
  const podName = firstExtra(status, POD_NAME_EXTRA)
  const podUid = firstExtra(status, POD_UID_EXTRA)
  return Either.right({
    identity: spiffeId(trustDomain, namespace, serviceAccount),
    orchestrator: {
      namespace,
      serviceAccount,
      ...(podName !== undefined ? { podName } : {}),
      ...(podUid !== undefined ? { podUid } : {}),
    },
  })
}

/**
 * How long a positive answer may be reused: the cache TTL, never past the token's own `exp`
 * (read without verification — the API server already verified it). Undefined = do not cache.
 */
export const reviewCacheUntilMs = (token: string, nowMs: number, cacheTtlMs: number): number | undefined => {
  if (cacheTtlMs <= 0) return undefined
  let untilMs = nowMs + cacheTtlMs
  const payload = token.split(".")[1]
  if (payload !== undefined) {
    const exp = Either.getOrUndefined(
      Either.try(() => (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown }).exp),
    )
    if (typeof exp === "number") untilMs = Math.min(untilMs, exp * 1000)
  }
  return untilMs > nowMs ? untilMs : undefined
}
