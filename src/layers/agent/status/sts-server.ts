/**
 * `--stsPort`: the token-exchange (STS) port. This build has no token exchange service, so a
 * non-zero port only reserves the listener on loopback and answers the reference's `/token`
 * path with 501 and an OAuth-style JSON error — a client fails clearly instead of hanging or
 * getting a connection refused that looks like a start-up race.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { serveRouter } from "../../http/serve.js"

export const STS_PATH = "/token"

export const NOT_SUPPORTED = {
  error: "not_implemented",
  error_description: "token exchange not supported in this build",
} as const

const routes = HttpRouter.empty.pipe(
  HttpRouter.all(STS_PATH, Effect.succeed(HttpServerResponse.unsafeJson(NOT_SUPPORTED, { status: 501 }))),
)

export const layer = (port: number) =>
  serveRouter("token exchange (not supported)", { host: "127.0.0.1", port }, routes, "--stsPort")
