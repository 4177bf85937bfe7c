/**
 * The per-route policies of a VirtualService HTTP route, as the reference writes them: retry
 * policy (with its default when unset), fault injection and CORS (per-route configs of the
 * fault and CORS HTTP filters), and timeouts (0s = disabled when unset).
 */

import type { HTTPRoute } from "../../../config-model/schemas/virtual-service.js"
import { GRPC_STATUS } from "../../grpcgen/grpc-gen.js"
import { type Draft, typed } from "../../protocol/typed-any.js"
import type { HTTPFault, ProtoAny, Route_RetryPolicy } from "../../protocol/xds-types.js"
import { TypedConfig } from "../well-known.js"
import {
  durationOf,
  nanosOf,
  percentPerHundred,
  percentPerMillion,
  stringMatcher,
  ZERO_DURATION,
} from "./proto-values.js"

const T = "type.googleapis.com/"
export const PREVIOUS_HOSTS_PREDICATE = "envoy.retry_host_predicates.previous_hosts"
export const PREVIOUS_HOSTS_TYPE = `${T}envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate`
export const PREVIOUS_PRIORITIES = "envoy.retry_priorities.previous_priorities"
export const PREVIOUS_PRIORITIES_TYPE = `${T}envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig`

/** The reference's retry conditions when a route sets no `retries`. */
export const DEFAULT_RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes"
export const DEFAULT_RETRY_ATTEMPTS = 2

/** The retry policy of a route without `retries`: 2 attempts on connection failures and 503, other hosts. */
export const defaultRetryPolicy = (): Route_RetryPolicy => ({
  retry_on: DEFAULT_RETRY_ON,
  num_retries: { value: DEFAULT_RETRY_ATTEMPTS },
  retry_host_predicate: [{ name: PREVIOUS_HOSTS_PREDICATE, typed_config: typed(PREVIOUS_HOSTS_TYPE, {}) }],
  host_selection_retry_max_attempts: "5",
  retriable_status_codes: [503],
})

type Retries = NonNullable<HTTPRoute["retries"]>

/** `retryOn` split into conditions and HTTP status codes (codes need `retriable-status-codes`). */
const parseRetryOn = (retryOn: string): { readonly on: string; readonly codes: ReadonlyArray<number> } => {
  const conditions: Array<string> = []
  const codes: Array<number> = []
  for (const raw of retryOn.split(",")) {
    const part = raw.trim()
    if (part === "") continue
    if (/^\d+$/.test(part)) codes.push(Number(part))
    else if (!conditions.includes(part)) conditions.push(part)
  }
  if (codes.length > 0 && !conditions.includes("retriable-status-codes")) conditions.push("retriable-status-codes")
  return { on: conditions.join(","), codes }
}

/** The default retry policy without the "previous hosts" predicate. */
const consistentHashRetryPolicy = (): Route_RetryPolicy => {
  const { retry_host_predicate: _previousHosts, ...policy } = defaultRetryPolicy()
  return policy
}

/**
 * The RetryPolicy of `retries`: the default when unset, none when `attempts` is 0. A route to a
 * cluster that hashes (`consistentHash`) leaves out the "previous hosts" predicate unless
 * `retryIgnorePreviousHosts` asks for it, as the reference: the hash picks the host.
 */
export const retryPolicy = (retries: Retries | undefined, consistentHash = false): Route_RetryPolicy | undefined => {
  const base = consistentHash ? consistentHashRetryPolicy : defaultRetryPolicy
  if (retries === undefined) return base()
  const attempts = retries.attempts ?? 0
  if (attempts <= 0) return undefined
  const policy: Record<string, unknown> = { ...base(), num_retries: { value: attempts } }
  if ((retries.retryOn ?? "") !== "") {
    const parsed = parseRetryOn(retries.retryOn ?? "")
    policy.retry_on = parsed.on
    if (parsed.codes.length > 0) policy.retriable_status_codes = parsed.codes
    else delete policy.retriable_status_codes
  }
  const perTry = nanosOf(retries.perTryTimeout)
  if (perTry !== undefined) policy.per_try_timeout = durationOf(perTry)
  if (retries.retryRemoteLocalities === true)
    policy.retry_priority = {
      name: PREVIOUS_PRIORITIES,
      typed_config: typed(PREVIOUS_PRIORITIES_TYPE, { update_frequency: 2 }),
    }
  if (retries.retryIgnorePreviousHosts === false) delete policy.retry_host_predicate
  else if (retries.retryIgnorePreviousHosts === true)
    policy.retry_host_predicate = defaultRetryPolicy().retry_host_predicate
  const backoff = nanosOf(retries.backoff)
  if (backoff !== undefined) policy.retry_back_off = { base_interval: durationOf(backoff) }
  return policy
}

/** The route timeout (0s = none) and the matching gRPC stream limits. */
export const timeoutFields = (timeout: string | undefined): Record<string, unknown> => {
  const nanos = nanosOf(timeout) ?? 0n
  const value = nanos > 0n ? durationOf(nanos) : ZERO_DURATION
  return { timeout: value, max_stream_duration: { max_stream_duration: value, grpc_timeout_header_max: value } }
}

// ---------------------------------------------------------------------------------------------
// Fault

const GRPC_STATUS_CODES = GRPC_STATUS

type Fault = NonNullable<HTTPRoute["fault"]>

/**
 * The per-route HTTPFault of `fault`; undefined when it injects nothing the proxy can do
 * (exponential delays, HTTP/2 errors). An unset percentage injects into no request, as the
 * reference (the proxy's default is 0%).
 */
export const faultConfig = (fault: Fault): ProtoAny | undefined => {
  const out: Draft<HTTPFault> = {}
  const delay = fault.delay
  const fixed = nanosOf(delay?.fixedDelay)
  if (delay !== undefined && fixed !== undefined && fixed > 0n) {
    out.delay = {
      fixed_delay: durationOf(fixed),
      ...(delay.percentage?.value !== undefined
        ? { percentage: percentPerMillion(delay.percentage.value) }
        : delay.percent !== undefined
          ? { percentage: percentPerHundred(delay.percent) }
          : {}),
    }
  }
  const abort = fault.abort
  if (abort !== undefined) {
    const error =
      abort.httpStatus !== undefined
        ? { http_status: abort.httpStatus }
        : abort.grpcStatus !== undefined && GRPC_STATUS_CODES[abort.grpcStatus] !== undefined
          ? { grpc_status: GRPC_STATUS_CODES[abort.grpcStatus] }
          : undefined
    if (error !== undefined)
      out.abort = {
        ...error,
        ...(abort.percentage?.value !== undefined ? { percentage: percentPerMillion(abort.percentage.value) } : {}),
      }
  }
  return out.delay === undefined && out.abort === undefined ? undefined : typed(TypedConfig.fault, out)
}

// ---------------------------------------------------------------------------------------------
// CORS

type Cors = NonNullable<HTTPRoute["corsPolicy"]>

/** The per-route CorsPolicy of the CORS filter (enabled at 100%, as the reference). */
export const corsConfig = (cors: Cors): ProtoAny => {
  const origins =
    cors.allowOrigins !== undefined
      ? cors.allowOrigins.flatMap((o) => {
          const m = stringMatcher(o)
          return m === undefined ? [] : [m]
        })
      : (cors.allowOrigin ?? []).map((exact) => ({ exact }))
  const maxAge = nanosOf(cors.maxAge)
  return typed(TypedConfig.corsPolicy, {
    ...(origins.length > 0 ? { allow_origin_string_match: origins } : {}),
    ...((cors.allowMethods ?? []).length > 0 ? { allow_methods: cors.allowMethods!.join(",") } : {}),
    ...((cors.allowHeaders ?? []).length > 0 ? { allow_headers: cors.allowHeaders!.join(",") } : {}),
    ...((cors.exposeHeaders ?? []).length > 0 ? { expose_headers: cors.exposeHeaders!.join(",") } : {}),
    ...(maxAge !== undefined ? { max_age: (maxAge / 1_000_000_000n).toString() } : {}),
    ...(cors.allowCredentials !== undefined ? { allow_credentials: { value: cors.allowCredentials } } : {}),
    filter_enabled: { default_value: { numerator: 100, denominator: "HUNDRED" } },
    ...(cors.unmatchedPreflights === "IGNORE" ? { forward_not_matching_preflights: { value: false } } : {}),
  })
}
