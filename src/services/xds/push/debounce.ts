/**
 * Debounce rule (spec part 1 rule 1), as a pure decision: a merged push leaves the debouncer
 * once `PILOT_DEBOUNCE_AFTER` has passed without a new event, or once `PILOT_DEBOUNCE_MAX`
 * has passed since the first event of the batch. With `PILOT_ENABLE_EDS_DEBOUNCE=false`,
 * endpoint-only (incremental) requests skip the debouncer.
 */
import { Duration } from "effect"
import type { PushRequest } from "./push-request.js"

export interface DebounceOptions {
  readonly debounceAfter: Duration.Duration
  readonly debounceMax: Duration.Duration
  readonly enableEdsDebounce: boolean
}

export const defaultDebounceOptions: DebounceOptions = {
  debounceAfter: Duration.millis(100),
  debounceMax: Duration.seconds(10),
  enableEdsDebounce: true,
}

export type DebounceDecision =
  | { readonly _tag: "Push" }
  /** Check again after this many millis. */
  | { readonly _tag: "Wait"; readonly millis: number }

/** Called when the debounce timer fires (or a push finished) with events waiting. */
export const debounceDecision = (
  options: DebounceOptions,
  now: number,
  firstEventAt: number,
  lastEventAt: number,
): DebounceDecision => {
  const after = Duration.toMillis(options.debounceAfter)
  const max = Duration.toMillis(options.debounceMax)
  const eventDelay = now - firstEventAt
  const quiet = now - lastEventAt
  if (eventDelay >= max || quiet >= after) return { _tag: "Push" }
  return { _tag: "Wait", millis: Math.max(0, Math.min(after - quiet, max - eventDelay)) }
}

/** Whether a request bypasses the debouncer (endpoint-only with EDS debounce off). */
export const bypassesDebounce = (options: DebounceOptions, request: PushRequest): boolean =>
  !options.enableEdsDebounce && !request.full
