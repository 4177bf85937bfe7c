/**
 * The introspection listener (the reference's ControlZ): process facts and the per-scope log
 * levels, readable and changeable over HTTP while the process runs. Each topic is an HTML page
 * at `/<topic>z/` (services/debug/introspection-pages.ts; `/` lists them) over the JSON views:
 *   GET  /scopej/          every scope        GET /procj/  process   GET /memj/   memory
 *   GET  /scopej/<scope>   one scope          GET /envj/   env       GET /argsj/  arguments
 *   PUT  /scopej/<scope>   change a scope     GET /versionj/ build   GET /metricj/ metrics
 *   GET  /runtimej/        memory, heap, GC and event-loop delay (the memory page refreshes from it)
 * Changes, the environment and the arguments are served to loopback callers only, and secret-
 * looking variables are redacted (see services/debug/introspection-access.ts for why).
 */
import { hostname } from "node:os"
import { basename } from "node:path"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { buildInfo } from "../services/build-info.js"
import { MonitoringConfig } from "../services/config/discovery-config.js"
import { redactedEnvironment, requiresLocalCaller } from "../services/debug/introspection-access.js"
import {
  argumentsPage,
  environmentPage,
  homePage,
  type MetricJson,
  memoryPage,
  metricsPage,
  processPage,
  scopesPage,
  signalsPage,
  versionPage,
} from "../services/debug/introspection-pages.js"
import { RuntimeStats } from "../services/debug/runtime-stats.js"
import { isLoopback } from "../services/debug/views.js"
import { Logging, type ScopeState } from "../services/logging/logging.js"
import { LOG_LEVELS } from "../services/logging/scopes.js"
import { Metrics } from "../services/metrics/metrics.js"
import type { ListenAddress } from "../services/net/address.js"
import { serveRouter } from "./http/serve.js"
import { layer as runtimeStatsLayer } from "./runtime-stats.js"

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

/** The page heading's name: the binary (`mesh-discovery`), not the interpreter `process.title` names. */
const programName = (): string => basename(process.argv[1] ?? process.title).replace(/\.c?js$/, "")

/** What `/procj/` and `/procz/` show. */
const processFacts = () => ({
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
})

const notFound = (scope: string) => HttpServerResponse.json({ error: `unknown log scope "${scope}"` }, { status: 404 })

export const introspectionRoutes = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/",
    Effect.map(
      Effect.flatMap(RuntimeStats, (stats) => stats.sample),
      (sample) =>
        HttpServerResponse.html(homePage({ process: programName(), pid: process.pid, hostname: hostname(), sample })),
    ),
  ),
  HttpRouter.get(
    "/scopez/",
    Effect.map(
      Effect.flatMap(Logging, (logging) => logging.scopes),
      (scopes) => HttpServerResponse.html(scopesPage(programName(), scopes)),
    ),
  ),
  HttpRouter.get(
    "/memz/",
    Effect.map(
      Effect.flatMap(RuntimeStats, (stats) => stats.sample),
      (sample) => HttpServerResponse.html(memoryPage(programName(), sample)),
    ),
  ),
  HttpRouter.get(
    "/runtimej/",
    Effect.flatMap(
      Effect.flatMap(RuntimeStats, (stats) => stats.sample),
      (sample) => HttpServerResponse.json(sample),
    ),
  ),
  HttpRouter.get(
    "/envz/",
    Effect.sync(() => HttpServerResponse.html(environmentPage(programName(), redactedEnvironment(process.env)))),
  ),
  HttpRouter.get(
    "/procz/",
    Effect.sync(() => HttpServerResponse.html(processPage(programName(), processFacts()))),
  ),
  HttpRouter.get(
    "/argsz/",
    Effect.sync(() => HttpServerResponse.html(argumentsPage(programName(), process.argv))),
  ),
  HttpRouter.get(
    "/versionz/",
    Effect.sync(() => HttpServerResponse.html(versionPage(programName(), buildInfo))),
  ),
  HttpRouter.get(
    "/metricz/",
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const request = yield* HttpServerRequest.HttpServerRequest
      const query = new URL(request.url, "http://localhost").searchParams.get("q") ?? ""
      const json = yield* Effect.promise(() => metrics.registry.getMetricsAsJSON())
      return HttpServerResponse.html(
        metricsPage(programName(), json as unknown as ReadonlyArray<MetricJson>, query.slice(0, 256)),
      )
    }),
  ),
  HttpRouter.get(
    "/signalz/",
    Effect.sync(() => HttpServerResponse.html(signalsPage(programName()))),
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
    Effect.suspend(() => HttpServerResponse.json(processFacts())),
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
    Layer.provide(runtimeStatsLayer),
    Layer.annotateLogs("scope", "default"),
  )

/** The introspection facility on `--ctrlz_address`/`--ctrlz_port` from `MonitoringConfig`. */
export const layer = Layer.unwrapEffect(Effect.map(MonitoringConfig, (config) => layerWith(config.introspectionAddr)))
