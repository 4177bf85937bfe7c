/**
 * Bounds on what an ADS caller chooses: node ids, type URLs, NACK text. Everything here ends
 * up in logs, `/debug/syncz` or metric labels, and a plaintext caller is unauthenticated: only
 * known values become labels, and every caller-chosen string is cut to a bounded length.
 */
import { isKnownType, shortType } from "./type-urls.js"

/** Longest label value taken from a caller (node names); longer ones are cut. */
export const MAX_LABEL_LENGTH = 128
/** Longest NACK message kept (state, `/debug/syncz`, logs); the rest is cut. */
export const MAX_ERROR_LENGTH = 1024

/** `text` cut to `max` characters, saying how long it was when cut. */
export const truncate = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`

/** A caller's string for a log line: quoted (control characters escaped) and bounded. */
export const quoted = (text: string, max = 96): string =>
  text.length <= max ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, max))}…(${text.length} chars)`

/** The `type` label of a type URL: `cds`, `eds`, `lds`, `rds`, or `unknown` (never the URL). */
export const typeLabel = (typeUrl: string): string => (isKnownType(typeUrl) ? shortType(typeUrl) : "unknown")

/** A type URL for a log line: its short name when known, else quoted and bounded. */
export const typeForLog = (typeUrl: string): string => (isKnownType(typeUrl) ? shortType(typeUrl) : quoted(typeUrl))

/** A label value from a caller, cut to `MAX_LABEL_LENGTH`. */
export const boundedLabel = (value: string): string =>
  value.length <= MAX_LABEL_LENGTH ? value : value.slice(0, MAX_LABEL_LENGTH)

/** gRPC status code names as the reference prints them (Go's `codes.Code.String()`). */
const CODE_NAMES = [
  "OK",
  "Canceled",
  "Unknown",
  "InvalidArgument",
  "DeadlineExceeded",
  "NotFound",
  "AlreadyExists",
  "PermissionDenied",
  "ResourceExhausted",
  "FailedPrecondition",
  "Aborted",
  "OutOfRange",
  "Unimplemented",
  "Internal",
  "Unavailable",
  "DataLoss",
  "Unauthenticated",
]

/**
 * The `err` label of a NACK: the name of its `error_detail.code`, as the reference labels its
 * `pilot_xds_*_reject` gauges; 17 values at most (codes outside the gRPC range are `Unknown`).
 * The NACK's message is logged and shown in `/debug/syncz`, never a label.
 */
export const nackCodeLabel = (code: number | undefined): string =>
  code !== undefined && Number.isInteger(code) && code >= 0 && code < CODE_NAMES.length ? CODE_NAMES[code]! : "Unknown"

/** A NACK's message as kept for `/debug/syncz` and the log: cut to `MAX_ERROR_LENGTH`. */
export const nackMessage = (request: { readonly error_detail?: { readonly message?: string } | null }): string =>
  truncate(request.error_detail?.message ?? "", MAX_ERROR_LENGTH)
