/**
 * Token bucket for new xDS streams (`PILOT_MAX_REQUESTS_PER_SECOND`): a stream over the rate
 * waits for its token when the wait is short, and is refused (RESOURCE_EXHAUSTED) otherwise.
 */

export interface TokenBucket {
  readonly ratePerSecond: number
  readonly burst: number
  readonly tokens: number
  readonly updatedAt: number
}

export const makeTokenBucket = (
  ratePerSecond: number,
  now: number,
  burst = Math.max(1, Math.ceil(ratePerSecond)),
): TokenBucket => ({
  ratePerSecond,
  burst,
  tokens: burst,
  updatedAt: now,
})

/**
 * Reserves one token: the new bucket and how long to wait (0 = at once). When the wait would
 * exceed `maxWaitMs` nothing is reserved and `refused` is set.
 */
export const reserve = (
  bucket: TokenBucket,
  now: number,
  maxWaitMs: number,
): { readonly bucket: TokenBucket; readonly waitMs: number; readonly refused: boolean } => {
  const refilled = Math.min(bucket.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * bucket.ratePerSecond)
  const after = refilled - 1
  const waitMs = after >= 0 ? 0 : (-after / bucket.ratePerSecond) * 1000
  if (waitMs > maxWaitMs) return { bucket: { ...bucket, tokens: refilled, updatedAt: now }, waitMs, refused: true }
  return { bucket: { ...bucket, tokens: after, updatedAt: now }, waitMs, refused: false }
}
