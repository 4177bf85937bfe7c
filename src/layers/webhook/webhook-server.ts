/**
 * The webhooks on `--httpsAddr`: `/validate` and its legacy alias `/admitpilot` (config
 * validation, counted in `mesh_validation_passed` / `_failed` / `_http_error`), and `/inject`
 * (sidecar injection, when `INJECT_ENABLED`; counted in `sidecar_injection_requests_total` and
 * `_success_total` / `_skip_total` / `_failure_total`). Request bodies are read up to
 * MAX_REQUEST_BODY_BYTES; a larger one is answered 413 at once. Refusals and failures are
 * logged throttled per kind (a first line, then a "suppressed N" summary every 10 s), with the
 * caller's text in them cut short: any client that reaches the port can send them at will.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, Layer, Runtime } from "effect"
import { SecureGrpcServing } from "../../services/ca/callers.js"
import { WebhookConfig } from "../../services/config/discovery-config.js"
import { type AdmissionInputs, handleInjectRequest, type InjectReply } from "../../services/injection/admission.js"
import type { InjectionWebhookConfig } from "../../services/injection/webhook-config.js"
import { callerText } from "../../services/logging/log-text.js"
import { throttled } from "../../services/logging/logging.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import type { LocalCluster } from "../../services/orchestrator/local-cluster.js"
import { handleValidate, MAX_REQUEST_BODY_BYTES, type WebhookReply } from "../../services/webhook/validation.js"
import type { ServingCert } from "../secure-grpc/serving-cert.js"
import { makeAdmissionInputs } from "./admission-inputs.js"
import { type HttpsServerError, layer as httpsServerLayer } from "./https-server.js"

export interface WebhookSettings {
  /** `--httpsAddr` */
  readonly address: ListenAddress
  /** The injector's inputs of the moment; `/inject` is routed only with them (`INJECT_ENABLED`). */
  readonly inject?: (() => AdmissionInputs) | undefined
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
      const injections = {
        requests: metrics.counter("sidecar_injection_requests_total", "Total number of sidecar injection requests."),
        success: metrics.counter(
          "sidecar_injection_success_total",
          "Total number of successful sidecar injection requests.",
        ),
        skip: metrics.counter("sidecar_injection_skip_total", "Total number of skipped sidecar injection requests."),
        failure: metrics.counter(
          "sidecar_injection_failure_total",
          "Total number of failed sidecar injection requests.",
        ),
      }
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

      const countInjection = (reply: InjectReply) => {
        injections.requests.inc()
        switch (reply.count._tag) {
          case "Injected":
            injections.success.inc()
            break
          case "Skipped":
            injections.skip.inc()
            break
          case "Failed":
            injections.failure.inc()
            // A request the injector could not read (status 4xx) is the caller's doing; a
            // denied review (200) may be the configuration's: two kinds, throttled apart.
            log(
              Effect.logError(`sidecar injection failed: ${callerText(reply.count.reason)}`).pipe(
                throttled(reply.status === 200 ? "sidecar injection denied" : "sidecar injection request refused"),
              ),
            )
            break
        }
      }

      // A bug in a handler answers 500 rather than taking the server down.
      const guarded = (req: IncomingMessage, res: ServerResponse, f: () => void) => {
        try {
          f()
        } catch (e) {
          httpErrors.inc({ status: "500" })
          log(
            Effect.logError(`webhook: ${callerText(req.method ?? "")} ${callerText(req.url ?? "")}: ${e}`).pipe(
              throttled("webhook handler error"),
            ),
          )
          if (!res.headersSent)
            send(res, { status: 500, contentType: "text/plain; charset=utf-8", body: "internal error\n" })
          else res.destroy()
        }
      }
      const handler = (req: IncomingMessage, res: ServerResponse) => guarded(req, res, () => route(req, res))

      /** Answers a POST with its body read (up to the limit); other methods at once, unread. */
      const withBody = (req: IncomingMessage, res: ServerResponse, answer: (body: string | "too-large") => void) => {
        const reply = (body: string | "too-large") =>
          guarded(req, res, () => {
            answer(body)
            // A body still arriving (413) is not read: close the connection after the answer.
            if (body === "too-large") res.once("finish", () => req.destroy())
          })
        if (req.method !== "POST") {
          req.resume()
          reply("")
        } else readBody(req, reply)
      }

      const route = (req: IncomingMessage, res: ServerResponse) => {
        const path = (req.url ?? "/").split("?")[0]
        const method = req.method ?? ""
        const contentType = req.headers["content-type"]
        if (path === "/validate" || path === "/admitpilot") {
          withBody(req, res, (body) => {
            const reply = handleValidate({ method, contentType, body })
            count(reply)
            if (reply.refusal !== undefined)
              log(
                Effect.logInfo(`validation webhook refused: ${callerText(reply.refusal)}`).pipe(
                  throttled("validation webhook refused"),
                ),
              )
            send(res, reply, body === "too-large")
          })
          return
        }
        const inject = settings.inject
        if (path === "/inject" && inject !== undefined) {
          withBody(req, res, (body) => {
            const reply = handleInjectRequest({ method, contentType, body }, inject())
            countInjection(reply)
            send(res, reply, body === "too-large")
          })
          return
        }
        req.resume()
        send(res, { status: 404, contentType: "text/plain; charset=utf-8", body: `no webhook at ${path}\n` })
      }
      return httpsServerLayer({ address: settings.address, name: "webhook" }, handler)
    }),
  )

/**
 * The webhooks from `WebhookConfig`, serving the secure gRPC listener's certificate. They bind
 * once that listener has (`SecureGrpcServing`): a bind failure here must not interrupt its bind.
 * With `INJECT_ENABLED`, the injector's inputs are read first (admission-inputs.ts).
 */
export const layer: Layer.Layer<
  never,
  HttpsServerError,
  WebhookConfig | InjectionWebhookConfig | MeshWatcher | LocalCluster | SecureGrpcServing | ServingCert | Metrics
> = Layer.unwrapScoped(
  Effect.gen(function* () {
    yield* SecureGrpcServing
    const config = yield* WebhookConfig
    const inject = config.INJECT_ENABLED ? yield* makeAdmissionInputs : undefined
    return layerWith({ address: config.httpsAddr, inject })
  }),
)
