/**
 * One GET of a JWKS or OIDC discovery document over HTTP(S) for the JWKS resolver: status 200
 * only, a bounded body (a larger one is refused without reading it all), a Clock-driven timeout,
 * and optionally no verification of the server certificate (`JWKS_RESOLVER_INSECURE_SKIP_VERIFY`;
 * node:https's `rejectUnauthorized`, since the global fetch cannot turn it off per request).
 */
import { request as httpRequest, type IncomingMessage } from "node:http"
import { request as httpsRequest } from "node:https"
import { Data, Duration, Effect } from "effect"

export class JwksFetchError extends Data.TaggedError("JwksFetchError")<{
  readonly url: string
  readonly reason: string
}> {
  override get message(): string {
    return `GET ${this.url}: ${this.reason}`
  }
}

export interface FetchOptions {
  readonly timeout: Duration.DurationInput
  readonly insecureSkipVerify: boolean
  readonly maxBytes: number
}

/** The body of a 200 answer to a GET of `url`, as UTF-8 text. */
export const fetchDocument = (url: string, options: FetchOptions): Effect.Effect<string, JwksFetchError> => {
  const failure = (reason: string) => new JwksFetchError({ url, reason })
  const get = Effect.async<string, JwksFetchError>((resume) => {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return resume(Effect.fail(failure("not a URL")))
    }
    const https = parsed.protocol === "https:"
    if (!https && parsed.protocol !== "http:")
      return resume(Effect.fail(failure(`unsupported scheme ${parsed.protocol}`)))
    let settled = false
    const settle = (outcome: Effect.Effect<string, JwksFetchError>) => {
      if (settled) return
      settled = true
      resume(outcome)
    }
    // No pooled connection: fetches are minutes apart, and a kept-alive socket would hold the
    // JWKS server's connection open for nothing.
    const common = { method: "GET", headers: { accept: "application/json" }, agent: false } as const
    const request = https
      ? httpsRequest(parsed, { ...common, rejectUnauthorized: !options.insecureSkipVerify })
      : httpRequest(parsed, common)
    const tooLarge = () => failure(`the document is larger than ${options.maxBytes} bytes`)
    request.once("error", (error) => settle(Effect.fail(failure(error.message))))
    request.once("response", (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        response.resume()
        request.destroy()
        return settle(Effect.fail(failure(`HTTP status ${response.statusCode}`)))
      }
      const declared = Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        request.destroy()
        return settle(Effect.fail(tooLarge()))
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxBytes) {
          request.destroy()
          settle(Effect.fail(tooLarge()))
        } else chunks.push(chunk)
      })
      response.once("error", (error) => settle(Effect.fail(failure(error.message))))
      response.once("end", () => settle(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
      // After "end" this is a no-op; before it, the server hung up mid-document.
      response.once("close", () => settle(Effect.fail(failure("the connection closed before the end of the document"))))
    })
    request.end()
    return Effect.sync(() => request.destroy())
  })
  return get.pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () => failure(`no complete answer within ${Duration.format(Duration.decode(options.timeout))}`),
    }),
  )
}
