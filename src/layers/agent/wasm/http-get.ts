/**
 * The HTTP GETs behind Wasm pulls, on node:http and node:https so that a body is read as a
 * stream and every connection's address is checked where it is dialled:
 * - redirects are followed (at most 10); Authorization is dropped on a cross-origin hop, so
 *   registry credentials do not leak to blob storage; a hop to anything but http(s) is refused;
 * - with an address policy (WASM_REFUSE_METADATA_ADDRESSES) the addresses a host name resolves to
 *   are checked in the socket's own lookup, so what is checked is what is dialled (a literal IP
 *   is checked before connecting: node does not look literals up), on every hop;
 * - a body is never held beyond `maxBytes`: a Content-Length over it is refused before reading,
 *   a body growing past it is cut there; `save` streams it to a file, hashing as it goes;
 * - each attempt has a timeout (WASM_HTTP_REQUEST_TIMEOUT) covering its body too, and attempts are
 *   retried with exponential backoff on transport errors and retryable 5xx answers (not 501, 505,
 *   511 — the reference's rule); a refusal (size, address, scheme) is final and not retried.
 * An interrupted attempt destroys its request and waits until its file is closed and removed.
 */
import { createHash } from "node:crypto"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { createWriteStream } from "node:fs"
import { rm } from "node:fs/promises"
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP, type LookupFunction } from "node:net"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Data, Duration, Effect, Schedule } from "effect"
import type { AddressPolicy } from "../../../services/agent/wasm/address-policy.js"
import { abortable } from "./abortable.js"

export interface HttpAnswer {
  readonly status: number
  readonly headers: Headers
  readonly body: Buffer
}

export interface HttpGetOptions {
  readonly headers?: Readonly<Record<string, string>>
  /** Per attempt, body included (WASM_HTTP_REQUEST_TIMEOUT). */
  readonly timeout: Duration.Duration
  /** Skip TLS verification (https hosts of WASM_INSECURE_REGISTRIES). */
  readonly skipTlsVerify: boolean
  /** The largest body read; a larger one fails the GET, unretried. */
  readonly maxBytes: number
  /** What sets `maxBytes`, named in the refusal (a variable, or "the manifest limit"). */
  readonly maxBytesSource: string
  /** Checks every address connected to (WASM_REFUSE_METADATA_ADDRESSES); absent: none refused. */
  readonly addressPolicy?: AddressPolicy
}

export interface RetryPolicy {
  /** Attempts in all (WASM_HTTP_REQUEST_MAX_RETRIES; at least 1). */
  readonly attempts: number
  readonly initialBackoff: Duration.Duration
  readonly maxBackoff: Duration.Duration
}

/** `final`: a refusal that another attempt would meet again (not retried). */
export class HttpGetError extends Data.TaggedError("HttpGetError")<{
  readonly url: string
  readonly reason: string
  readonly final: boolean
}> {}

class RetryableStatus extends Data.TaggedError("RetryableStatus")<{ readonly status: number }> {}

/** Thrown inside the promise code for a refusal that is not worth retrying. */
class Refusal extends Error {}

const MAX_REDIRECTS = 10
/** What is kept of the body of an answer that is not the one asked for (status line context). */
export const ERROR_BODY_BYTES = 4096

const reasonOf = (e: unknown) => {
  const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : ""
  return `${e instanceof Error ? e.message : String(e)}${cause}`
}

const headersOf = (raw: IncomingHttpHeaders) => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(raw))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value)
  return headers
}

const tooLarge = (source: string) => (maxBytes: number) =>
  new Refusal(`the answer is larger than ${maxBytes} bytes (${source})`)

/** The socket's lookup with every resolved address checked; a refused one fails the connection. */
const guardedLookup =
  (policy: AddressPolicy): LookupFunction =>
  (hostname, options, callback) =>
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: Array<LookupAddress>) => {
      if (error !== null) return callback(error, "", 0)
      for (const entry of addresses) {
        const reason = policy(entry.address)
        if (reason !== undefined) return callback(new Refusal(`${hostname} resolves to ${reason}`), "", 0)
      }
      if (options.all === true) (callback as unknown as (e: null, a: Array<LookupAddress>) => void)(null, addresses)
      else callback(null, addresses[0]?.address ?? "", addresses[0]?.family ?? 4)
    })

/** Opens a GET of `url`, following redirects; resolves with the final answer, its body unread. */
const open = (
  url: URL,
  headers: Readonly<Record<string, string>>,
  options: HttpGetOptions,
  signal: AbortSignal,
  redirects = 0,
): Promise<IncomingMessage> => {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return Promise.reject(new Refusal(`unsupported URL scheme "${url.protocol.slice(0, -1)}" (want http or https)`))
  const policy = options.addressPolicy
  const literal = isIP(url.hostname.replace(/^\[|\]$/g, "")) !== 0 ? policy?.(url.hostname) : undefined
  if (literal !== undefined) return Promise.reject(new Refusal(literal))
  return new Promise<IncomingMessage>((resolve, reject) => {
    const secure = url.protocol === "https:"
    const request = (secure ? httpsRequest : httpRequest)(url, {
      method: "GET",
      headers,
      signal,
      // a connection of its own: a pooled socket would skip the address check
      agent: false,
      ...(policy !== undefined ? { lookup: guardedLookup(policy) } : {}),
      ...(secure && options.skipTlsVerify ? { rejectUnauthorized: false } : {}),
    })
    request.on("error", reject)
    request.on("response", resolve)
    request.end()
  }).then((response) => {
    const location = response.headers.location
    const status = response.statusCode ?? 0
    if (status < 300 || status >= 400 || location === undefined) return response
    response.destroy()
    if (redirects >= MAX_REDIRECTS) throw new Refusal("too many redirects")
    const next = new URL(location, url)
    const { authorization: _dropped, ...rest } = headers
    return open(next, next.origin === url.origin ? headers : rest, options, signal, redirects + 1)
  })
}

/** Reads a body whole, up to `maxBytes`: past it, fails (`truncate`: returns what was read). */
const readBody = (
  response: IncomingMessage,
  maxBytes: number,
  truncate: boolean,
  signal: AbortSignal,
  refusal: (maxBytes: number) => Error,
) =>
  new Promise<Buffer>((resolve, reject) => {
    signal.addEventListener("abort", () => response.destroy(new Error("aborted")), { once: true })
    const declared = Number(response.headers["content-length"])
    if (!truncate && Number.isFinite(declared) && declared > maxBytes) {
      response.destroy()
      return reject(refusal(maxBytes))
    }
    const chunks: Array<Buffer> = []
    let size = 0
    response.on("data", (chunk: Buffer) => {
      const room = maxBytes - size
      if (chunk.length <= room) {
        chunks.push(chunk)
        size += chunk.length
        return
      }
      response.destroy()
      if (!truncate) return reject(refusal(maxBytes))
      chunks.push(chunk.subarray(0, room))
      resolve(Buffer.concat(chunks))
    })
    response.on("error", reject)
    response.on("end", () => resolve(Buffer.concat(chunks)))
  })

export interface SavedFile {
  readonly path: string
  /** Hex sha256 of the bytes written. */
  readonly sha256: string
  readonly size: number
}

/**
 * Streams `streams` (a source, then transforms) into a new file at `path`, hashing it, failing with `refusal(maxBytes)` once
 * more than `maxBytes` went through; on any failure the file is removed before this settles.
 */
export const saveStream = async (
  streams: ReadonlyArray<NodeJS.ReadableStream | NodeJS.ReadWriteStream>,
  path: string,
  maxBytes: number,
  refusal: (maxBytes: number) => Error,
  signal?: AbortSignal,
): Promise<SavedFile> => {
  const hash = createHash("sha256")
  let size = 0
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length
      if (size > maxBytes) return callback(refusal(maxBytes))
      hash.update(chunk)
      callback(null, chunk)
    },
  })
  try {
    await pipeline([...streams, counter, createWriteStream(path, { mode: 0o644 })], signal ? { signal } : {})
    return { path, sha256: hash.digest("hex"), size }
  } catch (e) {
    await rm(path, { force: true })
    throw e
  }
}

const saveBody = (response: IncomingMessage, path: string, options: HttpGetOptions, signal: AbortSignal) => {
  const refusal = tooLarge(options.maxBytesSource)
  const declared = Number(response.headers["content-length"])
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    response.destroy()
    return Promise.reject(refusal(options.maxBytes))
  }
  return saveStream([response], path, options.maxBytes, refusal, signal)
}

/** One attempt, its timeout covering the body too. */
const attempt = <A>(url: string, options: HttpGetOptions, run: (signal: AbortSignal) => Promise<A>) =>
  abortable(run, (e) => new HttpGetError({ url, reason: reasonOf(e), final: e instanceof Refusal })).pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () =>
        new HttpGetError({ url, reason: `no answer within ${Duration.format(options.timeout)}`, final: false }),
    }),
  )

export const isRetryableStatus = (status: number) => status >= 500 && status !== 501 && status !== 505 && status !== 511

/** Retries transport errors and retryable statuses; a final error is not retried. */
const withRetries = <A extends { readonly status: number }>(
  url: string,
  once: Effect.Effect<A, HttpGetError>,
  retry: RetryPolicy,
) => {
  let last: A | undefined
  const attempts = Math.max(1, retry.attempts)
  return once.pipe(
    Effect.flatMap((answer) => {
      if (!isRetryableStatus(answer.status)) return Effect.succeed(answer)
      last = answer
      return Effect.fail(new RetryableStatus({ status: answer.status }))
    }),
    Effect.retry({
      schedule: Schedule.exponential(retry.initialBackoff).pipe(
        Schedule.either(Schedule.spaced(retry.maxBackoff)),
        Schedule.intersect(Schedule.recurs(attempts - 1)),
      ),
      while: (e) => e._tag === "RetryableStatus" || !e.final,
    }),
    Effect.catchTag("RetryableStatus", () => Effect.succeed(last as A)),
    Effect.mapError((e) =>
      e.final ? e : new HttpGetError({ url, reason: `${e.reason} (after ${attempts} attempts)`, final: false }),
    ),
  )
}

/** GET with retries, its body read whole (at most `maxBytes`); the last answer whatever its status. */
export const httpGet = (url: string, options: HttpGetOptions, retry: RetryPolicy) =>
  withRetries(
    url,
    attempt(url, options, async (signal) => {
      const response = await open(new URL(url), options.headers ?? {}, options, signal)
      const body = await readBody(response, options.maxBytes, false, signal, tooLarge(options.maxBytesSource))
      return { status: response.statusCode ?? 0, headers: headersOf(response.headers), body } satisfies HttpAnswer
    }),
    retry,
  )

export interface HttpDownload {
  readonly status: number
  readonly headers: Headers
  /** The body of a 200, in the file asked for. */
  readonly file?: SavedFile
  /** The first ERROR_BODY_BYTES of another answer's body. */
  readonly errorBody: Buffer
}

/** An answer that is not a 200, for an error message: its status and the start of its body. */
export const describeStatus = (answer: { readonly status: number; readonly errorBody: Buffer }) => {
  const text = answer.errorBody.toString("utf8").slice(0, 200).trim()
  return `HTTP ${answer.status}${text === "" ? "" : `: ${text}`}`
}

/** GET with retries, a 200's body streamed into `path` (at most `maxBytes`, else a final failure). */
export const httpDownload = (url: string, path: string, options: HttpGetOptions, retry: RetryPolicy) =>
  withRetries(
    url,
    attempt(url, options, async (signal): Promise<HttpDownload> => {
      const response = await open(new URL(url), options.headers ?? {}, options, signal)
      const status = response.statusCode ?? 0
      const headers = headersOf(response.headers)
      if (status !== 200)
        return { status, headers, errorBody: await readBody(response, ERROR_BODY_BYTES, true, signal, tooLarge("")) }
      return { status, headers, file: await saveBody(response, path, options, signal), errorBody: Buffer.alloc(0) }
    }),
    retry,
  )
