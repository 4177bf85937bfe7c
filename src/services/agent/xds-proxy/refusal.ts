/**
 * How the agent's xDS proxy treats an upstream stream that ended with an error (issue 16 item 8).
 *
 * A refusal (the discovery server said no: PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT)
 * will not go away by reconnecting, and only the application can act on it (fix its node id,
 * identity or token), so the proxy ends the downstream stream with the same status instead of
 * retrying where nobody sees it. Anything else (UNAVAILABLE, a reset, a restart) is bridged:
 * reconnect and replay, the downstream stays open.
 *
 * Either way, a cause repeated on every retry or reconnect is logged once: again only when the
 * cause changes or after a stream answered in between (`causeToLog`).
 */
import { status } from "@grpc/grpc-js"

const REFUSALS: ReadonlySet<number> = new Set([
  status.PERMISSION_DENIED,
  status.UNAUTHENTICATED,
  status.INVALID_ARGUMENT,
])

/** Whether an upstream status is a refusal the downstream must see (not bridged). */
export const isRefusal = (code: number | undefined): boolean => code !== undefined && REFUSALS.has(code)

/**
 * What identifies a cause for the "log once" rule: the status and its details without the
 * timestamps gRPC puts into connection errors (`... ECONNREFUSED 127.0.0.1:15010
 * (2025-01-01T00:00:00.000Z)`), which would make every retry look new.
 */
export const causeKey = (code: number | undefined, details: string | undefined): string =>
  `${code === undefined ? "ended" : (status[code] ?? String(code))}: ${(details ?? "").replace(/\s*\(\d{4}-\d\d-\d\dT[^)]*\)/g, "")}`

/** The proxy-wide memory of the last cause logged; `undefined` after a stream answered. */
export type LoggedCause = string | undefined

/** Whether to log `key` now (it differs from the last cause logged), and the memory after. */
export const causeToLog = (last: LoggedCause, key: string): readonly [log: boolean, next: LoggedCause] =>
  last === key ? [false, last] : [true, key]
