/**
 * Root rotation of the self-signed CA (spec part 1 rule 7). The root is checked every
 * `MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL` (zero or less: never); it is rotated once its
 * remaining lifetime falls within `MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE` percent
 * of its whole lifetime. With jitter, the first check waits a random delay shorter than the
 * interval.
 *
 * Beyond the reference: after a rotation the old root stays in the trust bundle until every
 * certificate it signed has expired, so no workload loses trust mid-rotation.
 */
import { Duration } from "effect"

export const DEFAULT_GRACE_PERIOD_PERCENTILE = 20

export interface RotationSettings {
  readonly checkInterval: Duration.Duration
  readonly gracePeriodPercentile: number
  readonly enableJitter: boolean
}

/** An out-of-range percentile falls back to the default, as the reference does. */
export const effectivePercentile = (percentile: number): number =>
  Number.isFinite(percentile) && percentile >= 0 && percentile <= 100 ? percentile : DEFAULT_GRACE_PERIOD_PERCENTILE

export const rotationEnabled = (settings: RotationSettings): boolean => Duration.toMillis(settings.checkInterval) > 0

/**
 * Milliseconds until the root enters its grace period (0 = rotate now). A root that has
 * already expired is due at once.
 */
export const rotationWaitMs = (
  root: { readonly notBefore: Date; readonly notAfter: Date },
  nowMs: number,
  percentile: number,
): number => {
  const lifetime = root.notAfter.getTime() - root.notBefore.getTime()
  const grace = (lifetime * effectivePercentile(percentile)) / 100
  const remaining = root.notAfter.getTime() - nowMs
  return Math.max(0, remaining - grace)
}

export const shouldRotate = (
  root: { readonly notBefore: Date; readonly notAfter: Date },
  nowMs: number,
  percentile: number,
): boolean => rotationWaitMs(root, nowMs, percentile) === 0

/** The first check's delay: a random value in [0, interval) with jitter, else none. */
export const initialDelayMs = (settings: RotationSettings, random: number): number =>
  settings.enableJitter ? Math.floor(random * Duration.toMillis(settings.checkInterval)) : 0

/** A root kept in the trust bundle after rotation, until `retainUntilMs`. */
export interface RetiredRoot<C> {
  readonly cert: C
  readonly retainUntilMs: number
}

/** Roots whose signed certificates may still be alive at `nowMs`. */
export const liveRetiredRoots = <C>(
  roots: ReadonlyArray<RetiredRoot<C>>,
  nowMs: number,
): ReadonlyArray<RetiredRoot<C>> => roots.filter((r) => r.retainUntilMs > nowMs)
