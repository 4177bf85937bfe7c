/**
 * The introspection listener (the reference's ControlZ): process facts and the per-scope log
 * levels, readable and changeable over HTTP while the process runs.
 *   GET  /scopej/          every scope        GET /procj/  process   GET /memj/   memory
 *   GET  /scopej/<scope>   one scope          GET /envj/   env       GET /argsj/  arguments
 *   PUT  /scopej/<scope>   change a scope     GET /versionj/ build   GET /metricj/ metrics
 * Changes, the environment and the arguments are served to loopback callers only, and secret-
 * looking variables are redacted (see services/debug/introspection-access.ts for why).
 */
import { hostname } from "node:os"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { buildInfo } from "../services/build-info.js"
import { MonitoringConfig } from "../services/config/discovery-config.js"
import { redactedEnvironment, requiresLocalCaller } from "../services/debug/introspection-access.js"
import { isLoopback } from "../services/debug/views.js"
import { Logging, type ScopeState } from "../services/logging/logging.js"
import { LOG_LEVELS } from "../services/logging/scopes.js"
import { Metrics } from "../services/metrics/metrics.js"
import type { ListenAddress } from "../services/net/address.js"
import { serveRouter } from "./http/serve.js"

const Level = Schema.Literal(...LOG_LEVELS)

/** The body of PUT /scopej/<scope>; every field optional. */
const ScopeUpdateBody = Schema.Struct({
  name: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  output_level: Schema.optional(Level),
  stack_trace_level: Schema.optional(Level),
  log_callers: Schema.optional(Schema.Boolean),
})

const scopeJson = (scope: ScopeState) => ({
  name: scope.name,
  description: "",
  output_level: scope.outputLevel,
  stack_trace_level: scope.stackTraceLevel,
  log_callers: scope.logCallers,
})

const notFound = (scope: string) => HttpServerResponse.json({ error: `unknown log scope "${scope}"` }, { status: 404 })

export const introspectionRoutes = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/",
    HttpServerResponse.html(
      `<html><head><title>mesh introspection</title></head><body><h1>${process.title}</h1><ul>${[
        "scopej/",
        "procj/",
        "memj/",
        "envj/",
        "argsj/",
        "versionj/",
        "metricj/",
      ]
        .map((path) => `<li><a href="/${path}">/${path}</a></li>`)
        .join("")}</ul></body></html>`,
    ),
  ),
  HttpRouter.get(
    "/scopej/",
    Effect.flatMap(Logging, (logging) => logging.scopes).pipe(
      Effect.flatMap((scopes) => HttpServerResponse.json(scopes.map(scopeJson))),
    ),
  ),
  HttpRouter.get(
    "/scopej/:scope",
    Effect.gen(function* () {
      const { scope } = yield* HttpRouter.params
      const logging = yield* Logging
      return yield* logging.scope(scope ?? "").pipe(
        Effect.flatMap((state) => HttpServerResponse.json(scopeJson(state))),
        Effect.catchTag("UnknownScopeError", () => notFound(scope ?? "")),
      )
    }),
  ),
  HttpRouter.put(
    "/scopej/:scope",
    Effect.gen(function* () {
      const { scope } = yield* HttpRouter.params
      const logging = yield* Logging
      const body = yield* HttpServerRequest.schemaBodyJson(ScopeUpdateBody)
      const updated = yield* logging.updateScope(scope ?? "", {
        ...(body.output_level !== undefined ? { outputLevel: body.output_level } : {}),
        ...(body.stack_trace_level !== undefined ? { stackTraceLevel: body.stack_trace_level } : {}),
        ...(body.log_callers !== undefined ? { logCallers: body.log_callers } : {}),
      })
      yield* Effect.logInfo(`log scope ${updated.name} changed: output ${updated.outputLevel}`)
      return yield* HttpServerResponse.json(scopeJson(updated), { status: 202 })
    }).pipe(
      Effect.catchTags({
        UnknownScopeError: (error) => notFound(error.scope),
        ParseError: (error) => HttpServerResponse.json({ error: error.message }, { status: 400 }),
        RequestError: (error) => HttpServerResponse.json({ error: error.message }, { status: 400 }),
      }),
    ),
  ),
  HttpRouter.get(
    "/procj/",
    Effect.suspend(() =>
      HttpServerResponse.json({
        pid: process.pid,
        ppid: process.ppid,
        uid: process.getuid?.(),
        gid: process.getgid?.(),
        euid: process.geteuid?.(),
        egid: process.getegid?.(),
        groups: process.getgroups?.(),
        cwd: process.cwd(),
        hostname: hostname(),
        uptime_seconds: process.uptime(),
      }),
    ),
  ),
  HttpRouter.get(
    "/memj/",
    Effect.suspend(() => HttpServerResponse.json(process.memoryUsage())),
  ),
  HttpRouter.get(
    "/envj/",
    Effect.suspend(() => HttpServerResponse.json(redactedEnvironment(process.env))),
  ),
  HttpRouter.get(
    "/argsj/",
    Effect.suspend(() => HttpServerResponse.json(process.argv)),
  ),
  HttpRouter.get("/versionj/", HttpServerResponse.json(buildInfo)),
  HttpRouter.get(
    "/metricj/",
    Effect.gen(function* () {
      const metrics = yield* Metrics
      return yield* HttpServerResponse.json(yield* Effect.promise(() => metrics.registry.getMetricsAsJSON()))
    }),
  ),
)

export interface IntrospectionOptions {
  /** Whether a caller's remote address counts as local; loopback by default (tests inject it). */
  readonly isLocal?: (remoteAddress: string | undefined) => boolean
}

/** The routes behind the local-only rule: 403 for a remote caller of a change, env or args. */
export const guardedIntrospectionRoutes = (isLocal: (remoteAddress: string | undefined) => boolean = isLoopback) =>
  HttpRouter.use(introspectionRoutes, (handler) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const path = request.url.split("?")[0] ?? ""
      return requiresLocalCaller(request.method, path) && !isLocal(Option.getOrUndefined(request.remoteAddress))
        ? HttpServerResponse.json({ error: `${request.method} ${path} is only served to localhost` }, { status: 403 })
        : handler
    }),
  )

/** `source` names the flags that set `address`, for the bind-failure message. */
export const layerWith = (
  address: ListenAddress,
  source = "--ctrlz_address/--ctrlz_port",
  options: IntrospectionOptions = {},
) =>
  serveRouter("introspection", address, guardedIntrospectionRoutes(options.isLocal), source).pipe(
    Layer.annotateLogs("scope", "default"),
  )

/** The introspection facility on `--ctrlz_address`/`--ctrlz_port` from `MonitoringConfig`. */
export const layer = Layer.unwrapEffect(Effect.map(MonitoringConfig, (config) => layerWith(config.introspectionAddr)))
