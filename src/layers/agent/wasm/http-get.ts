/**
 * The HTTP GET behind Wasm pulls: node's global fetch (redirects followed; Authorization is dropped
 * on a cross-origin redirect, so registry credentials do not leak to blob storage), a per-request
 * timeout on the Effect clock, and retries with exponential backoff on transport errors and
 * retryable 5xx answers (not 501, 505, 511 — the reference's rule).
 *
 * fetch cannot skip certificate verification, so an https host listed in
 * WASM_INSECURE_REGISTRIES goes through node:https with `rejectUnauthorized: false` instead.
 */
import { request as httpsRequest } from "node:https"
import { Data, Duration, Effect, Schedule } from "effect"

export interface HttpAnswer {
  readonly status: number
  readonly headers: Headers
  readonly body: Buffer
}

export interface HttpGetOptions {
  readonly headers?: Readonly<Record<string, string>>
  readonly timeout: Duration.Duration
  /** Skip TLS verification (https hosts of WASM_INSECURE_REGISTRIES). */
  readonly skipTlsVerify: boolean
}

export interface RetryPolicy {
  /** Attempts in all (WASM_HTTP_REQUEST_MAX_RETRIES; at least 1). */
  readonly attempts: number
  readonly initialBackoff: Duration.Duration
  readonly maxBackoff: Duration.Duration
}

export class HttpGetError extends Data.TaggedError("HttpGetError")<{ readonly url: string; readonly reason: string }> {}

class RetryableStatus extends Data.TaggedError("RetryableStatus")<{ readonly answer: HttpAnswer }> {}

const MAX_REDIRECTS = 10

const reasonOf = (e: unknown) => {
  const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : ""
  return `${e instanceof Error ? e.message : String(e)}${cause}`
}

const viaFetch = (url: string, headers: Readonly<Record<string, string>>, signal: AbortSignal) =>
  fetch(url, { headers, signal, redirect: "follow" }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    body: Buffer.from(await response.arrayBuffer()),
  }))

const viaUnverifiedHttps = (
  url: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
  redirects = 0,
): Promise<HttpAnswer> =>
  new Promise<HttpAnswer>((resolve, reject) => {
    const req = httpsRequest(url, { method: "GET", headers, rejectUnauthorized: false, signal }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", reject)
      res.on("end", () => {
        const answerHeaders = new Headers()
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(", ") : value)
        resolve({ status: res.statusCode ?? 0, headers: answerHeaders, body: Buffer.concat(chunks) })
      })
    })
    req.on("error", reject)
    req.end()
  }).then((answer) => {
    const location = answer.headers.get("location")
    if (answer.status < 300 || answer.status >= 400 || location === null) return answer
    if (redirects >= MAX_REDIRECTS) throw new Error("too many redirects")
    const next = new URL(location, url)
    const sameOrigin = next.origin === new URL(url).origin
    const { authorization: _dropped, ...rest } = headers
    if (next.protocol === "https:")
      return viaUnverifiedHttps(next.href, sameOrigin ? headers : rest, signal, redirects + 1)
    return viaFetch(next.href, sameOrigin ? headers : rest, signal)
  })

/** One GET, failing on transport errors and on the timeout (the answer's status is not judged). */
export const httpGetOnce = (url: string, options: HttpGetOptions) =>
  Effect.tryPromise({
    try: (signal) =>
      options.skipTlsVerify && url.startsWith("https:")
        ? viaUnverifiedHttps(url, options.headers ?? {}, signal)
        : viaFetch(url, options.headers ?? {}, signal),
    catch: (e) => new HttpGetError({ url, reason: reasonOf(e) }),
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => new HttpGetError({ url, reason: `no answer within ${Duration.format(options.timeout)}` }),
    }),
  )

export const isRetryableStatus = (status: number) => status >= 500 && status !== 501 && status !== 505 && status !== 511

/** GET with retries; the last answer is returned whatever its status, transport failures fail. */
export const httpGet = (url: string, options: HttpGetOptions, retry: RetryPolicy) =>
  httpGetOnce(url, options).pipe(
    Effect.flatMap((answer) =>
      isRetryableStatus(answer.status) ? Effect.fail(new RetryableStatus({ answer })) : Effect.succeed(answer),
    ),
    Effect.retry(
      Schedule.exponential(retry.initialBackoff).pipe(
        Schedule.either(Schedule.spaced(retry.maxBackoff)),
        Schedule.intersect(Schedule.recurs(Math.max(1, retry.attempts) - 1)),
      ),
    ),
    Effect.catchTag("RetryableStatus", (e) => Effect.succeed(e.answer)),
    Effect.mapError(
      (e) => new HttpGetError({ url, reason: `${e.reason} (after ${Math.max(1, retry.attempts)} attempts)` }),
    ),
  )
