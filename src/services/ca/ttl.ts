/**
 * Workload certificate lifetime (spec part 1 rule 8): the requested TTL is used; a non-positive
 * request gets `DEFAULT_WORKLOAD_CERT_TTL`; a request above `MAX_WORKLOAD_CERT_TTL` is refused
 * (as the reference does, rather than clipped). Independently, a certificate never outlives the
 * chain that signs it: its expiry is cut to the earliest expiry of the signing chain.
 */
import { Duration, Either } from "effect"
import { formatGoDuration } from "../config/duration.js"
import { SignError } from "./errors.js"

export interface TtlPolicy {
  readonly defaultTtl: Duration.Duration
  readonly maxTtl: Duration.Duration
}

/** The lifetime to issue for a request of `requestedSeconds` (the proto's `validity_duration`). */
export const resolveTtl = (
  requestedSeconds: number,
  policy: TtlPolicy,
): Either.Either<Duration.Duration, SignError> => {
  if (!Number.isFinite(requestedSeconds) || requestedSeconds <= 0) return Either.right(policy.defaultTtl)
  const requested = Duration.seconds(requestedSeconds)
  if (Duration.greaterThan(requested, policy.maxTtl)) {
    return Either.left(
      new SignError({
        type: "TTL_ERROR",
        reason: `requested TTL ${formatGoDuration(requested)} is greater than the max allowed TTL ${formatGoDuration(policy.maxTtl)}`,
      }),
    )
  }
  return Either.right(requested)
}

/** Validity window of a certificate issued at `nowMs` for `ttl`, capped by the signing chain's expiry. */
export const validityWindow = (
  nowMs: number,
  ttl: Duration.Duration,
  chainNotAfterMs: ReadonlyArray<number>,
): { readonly notBefore: Date; readonly notAfter: Date } => {
  const wanted = nowMs + Duration.toMillis(ttl)
  const cap = chainNotAfterMs.length === 0 ? wanted : Math.min(...chainNotAfterMs)
  // X.509 times have second precision; keep both ends on whole seconds.
  const notBefore = Math.floor(nowMs / 1000) * 1000
  const notAfter = Math.floor(Math.min(wanted, cap) / 1000) * 1000
  return { notBefore: new Date(notBefore), notAfter: new Date(notAfter) }
}
