/**
 * The webhooks on `--httpsAddr`: `/validate` and its legacy alias `/admitpilot` (config
 * validation, counted in `mesh_validation_passed` / `_failed` / `_http_error`), and `/inject`,
 * which answers 501 until the mesh has the orchestrator's pod model (`INJECT_ENABLED`).
 * Request bodies are read up to MAX_REQUEST_BODY_BYTES; a larger one is answered 413 at once.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, Layer, Runtime } from "effect"
import { SecureGrpcServing } from "../../services/ca/callers.js"
import { WebhookConfig } from "../../services/config/discovery-config.js"
import { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import {
  handleInject,
  handleValidate,
  MAX_REQUEST_BODY_BYTES,
  type WebhookReply,
  type WebhookRequest,
} from "../../services/webhook/validation.js"
import type { ServingCert } from "../secure-grpc/serving-cert.js"
import { type HttpsServerError, layer as httpsServerLayer } from "./https-server.js"

export interface WebhookSettings {
  /** `--httpsAddr` */
  readonly address: ListenAddress
  /** `INJECT_ENABLED`: whether `/inject` is routed (to its 501 answer). */
  readonly injectEnabled: boolean
}

const send = (res: ServerResponse, reply: Pick<WebhookReply, "status" | "contentType" | "body">, close = false) => {
  res.writeHead(reply.status, {
    "content-type": reply.contentType,
    "content-length": Buffer.byteLength(reply.body),
    ...(close ? { connection: "close" } : {}),
  })
  res.end(reply.body)
}

/** Reads the body up to the limit; calls back once with the text or "too-large". */
const readBody = (req: IncomingMessage, done: (body: string | "too-large") => void) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let finished = false
  req.on("data", (chunk: Buffer) => {
    if (finished) return
    size += chunk.length
    if (size > MAX_REQUEST_BODY_BYTES) {
      finished = true
      chunks.length = 0
      done("too-large")
      return
    }
    chunks.push(chunk)
  })
  req.on("end", () => {
    if (finished) return
    finished = true
    done(Buffer.concat(chunks).toString("utf8"))
  })
  req.on("error", () => {
    finished = true
  })
}

export const layerWith = (settings: WebhookSettings): Layer.Layer<never, HttpsServerError, ServingCert | Metrics> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const passed = metrics.counter("mesh_validation_passed", "Valid resources", ["group", "version", "resource"])
      const failed = metrics.counter("mesh_validation_failed", "Resource validations that failed", [
        "group",
        "version",
        "resource",
        "reason",
      ])
      const httpErrors = metrics.counter("mesh_validation_http_error", "Validation HTTP serving errors", ["status"])
      const runtime = yield* Effect.runtime<never>()
      const log = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)

      const count = (reply: WebhookReply) => {
        const outcome = reply.outcome
        switch (outcome._tag) {
          case "Passed":
            passed.inc({ ...outcome.resource })
            break
          case "Failed":
            failed.inc({ ...outcome.resource, reason: outcome.reason })
            break
          case "HttpError":
            httpErrors.inc({ status: String(outcome.status) })
            break
          case "NotCounted":
            break
        }
      }

      // A bug in a handler answers 500 rather than taking the server down.
      const guarded = (req: IncomingMessage, res: ServerResponse, f: () => void) => {
        try {
          f()
        } catch (e) {
          httpErrors.inc({ status: "500" })
          log(Effect.logError(`webhook: ${req.method} ${req.url}: ${e}`))
          if (!res.headersSent)
            send(res, { status: 500, contentType: "text/plain; charset=utf-8", body: "internal error\n" })
          else res.destroy()
        }
      }
      const handler = (req: IncomingMessage, res: ServerResponse) => guarded(req, res, () => route(req, res))

      const route = (req: IncomingMessage, res: ServerResponse) => {
        const path = (req.url ?? "/").split("?")[0]
        if (path === "/validate" || path === "/admitpilot") {
          const answer = (body: WebhookRequest["body"]) =>
            guarded(req, res, () => {
              const reply = handleValidate({ method: req.method ?? "", contentType: req.headers["content-type"], body })
              count(reply)
              if (reply.refusal !== undefined) log(Effect.logInfo(`validation webhook refused: ${reply.refusal}`))
              // A body still arriving (413) is not read: close the connection after the answer.
              const tooLarge = body === "too-large"
              send(res, reply, tooLarge)
              if (tooLarge) res.once("finish", () => req.destroy())
            })
          if (req.method !== "POST") {
            req.resume()
            answer("")
          } else readBody(req, answer)
          return
        }
        req.resume()
        if (path === "/inject" && settings.injectEnabled) {
          send(res, handleInject())
          return
        }
        send(res, { status: 404, contentType: "text/plain; charset=utf-8", body: `no webhook at ${path}\n` })
      }
      return httpsServerLayer({ address: settings.address, name: "webhook" }, handler)
    }),
  )

/**
 * The webhooks from `WebhookConfig`, serving the secure gRPC listener's certificate. They bind
 * once that listener has (`SecureGrpcServing`): a bind failure here must not interrupt its bind.
 */
export const layer: Layer.Layer<never, HttpsServerError, WebhookConfig | SecureGrpcServing | ServingCert | Metrics> =
  Layer.unwrapEffect(
    Effect.gen(function* () {
      yield* SecureGrpcServing
      const config = yield* WebhookConfig
      return layerWith({ address: config.httpsAddr, injectEnabled: config.INJECT_ENABLED })
    }),
  )
