/**
 * `--stsPort`: the token exchange endpoint (services/agent/sts/token-exchange.ts) on
 * `127.0.0.1:<port>`, for as long as the layer lives. Port 0 means no service (spec 001 part 1
 * rule 2): the layer then starts nothing.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Layer } from "effect"
import { exchangeToken, STS_PATH } from "../../../services/agent/sts/token-exchange.js"
import { withScope } from "../../../services/logging/logging.js"
import { serveRouter } from "../../http/serve.js"

/** Forms bigger than this are refused unread (a subject token is a few kilobytes). */
export const MAX_FORM_BYTES = 64 * 1024

const tooLarge = HttpServerResponse.unsafeJson(
  { error: "invalid_request", error_description: `request body larger than ${MAX_FORM_BYTES} bytes` },
  { status: 400 },
)

const token = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const length = Number(request.headers["content-length"] ?? "0")
  if (Number.isFinite(length) && length > MAX_FORM_BYTES) return tooLarge
  const body = yield* request.text.pipe(Effect.orElseSucceed(() => ""))
  if (Buffer.byteLength(body) > MAX_FORM_BYTES) return tooLarge
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
