/**
 * `--stsPort`: the token exchange endpoint (services/agent/sts/token-exchange.ts) on
 * `127.0.0.1:<port>`, for as long as the layer lives. Port 0 means no service (spec 001 part 1
 * rule 2): the layer then starts nothing.
 *
 * A body is bounded at 64 KiB whatever its framing: a Content-Length over it is refused unread,
 * a chunked body is counted as it arrives and refused where it passes the bound; both get 413
 * and the connection is closed.
 */
import type { IncomingMessage } from "node:http"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Clock, Effect, Layer, Option } from "effect"
import { exchangeToken, STS_PATH } from "../../../services/agent/sts/token-exchange.js"
import { withScope } from "../../../services/logging/logging.js"
import { serveRouter } from "../../http/serve.js"

/** Forms bigger than this are refused (a subject token is a few kilobytes). */
export const MAX_FORM_BYTES = 64 * 1024

/**
 * 413, and the connection closed after it: the rest of an oversized body is never read (node
 * would otherwise have to read it to find the next request on the connection).
 */
const tooLarge = HttpServerResponse.unsafeJson(
  { error: "invalid_request", error_description: `request body larger than ${MAX_FORM_BYTES} bytes` },
  { status: 413, headers: { connection: "close" } },
)

/**
 * The body, counted as it arrives: none as soon as it passes `max` bytes, and the request is
 * paused there, so a chunked body without Content-Length costs at most `max` bytes of memory. A
 * body that breaks off reads as what arrived (the exchange then refuses it as malformed).
 */
const readBounded = (incoming: IncomingMessage, max: number) =>
  Effect.async<Option.Option<string>>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onEnd)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= max) return void chunks.push(chunk)
      stop()
      incoming.pause()
      resume(Effect.succeed(Option.none()))
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Option.some(Buffer.concat(chunks).toString("utf8"))))
    }
    incoming.on("data", onData)
    incoming.on("end", onEnd)
    incoming.on("error", onEnd)
    // a reset after the refusal must not become an unhandled 'error' event
    incoming.on("error", () => undefined)
    return Effect.sync(stop)
  })

const token = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const length = Number(request.headers["content-length"] ?? "0")
  if (Number.isFinite(length) && length > MAX_FORM_BYTES) return tooLarge
  const read = yield* readBounded(NodeHttpServerRequest.toIncomingMessage(request), MAX_FORM_BYTES)
  if (Option.isNone(read)) return tooLarge
  const body = read.value
  const answer = exchangeToken({
    method: request.method,
    contentType: request.headers["content-type"],
    body,
    nowSeconds: Math.floor((yield* Clock.currentTimeMillis) / 1000),
  })
  if (answer.status !== 200) yield* Effect.logDebug(`token exchange refused: ${answer.body.error_description}`)
  return HttpServerResponse.unsafeJson(answer.body, {
    status: answer.status,
    // RFC 6749 §5.1: token responses are not to be cached
    headers: { "cache-control": "no-store", pragma: "no-cache" },
  })
}).pipe(withScope("security"))

const routes = HttpRouter.empty.pipe(HttpRouter.all(STS_PATH, token))

/** The token exchange listener on loopback; nothing for port 0. */
export const layer = (port: number) =>
  port > 0 ? serveRouter("token exchange", { host: "127.0.0.1", port }, routes, "--stsPort") : Layer.empty
