/**
 * The `/debug/pprof/` handler (services/profiling/pprof-request.ts says what is served): the
 * index, a V8 CPU profile over `?seconds=N` and a heap snapshot, each downloadable under the
 * file name the usual tools expect. One CPU profile and one heap snapshot at a time (409 to a
 * second caller): V8 has one profiler per process, and two snapshots would double the pause. Access (loopback only) is the mounting server's rule, as for the debug pages.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Option, Ref } from "effect"
import { isLoopback } from "../../services/debug/views.js"
import { parsePprofRequest, pprofIndexHtml } from "../../services/profiling/pprof-request.js"
import { cpuProfile, heapSnapshot } from "./inspector-profiles.js"

/** The prefix the handler serves; `/debug/pprof` without the slash is redirected to it. */
export const PPROF_PREFIX = "/debug/pprof/"

const text = (status: number, body: string) => HttpServerResponse.text(`${body}\n`, { status })

/** `busy` held for as long as `effect` runs, or 409 when another caller holds it. */
const exclusive = <E, R>(
  busy: Ref.Ref<boolean>,
  what: string,
  effect: (release: Effect.Effect<void>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
) =>
  Effect.flatMap(
    Ref.modify(busy, (held) => [!held, true] as const),
    (claimed) =>
      claimed
        ? effect(Ref.set(busy, false))
        : Effect.succeed(text(409, `a ${what} is already being taken; try again when it is done`)),
  )

/** Makes the handler (with its own one-at-a-time state); `title` names the process on the index. */
export const makePprofHandler = (title: string) =>
  Effect.map(Effect.all([Ref.make(false), Ref.make(false)]), ([cpuBusy, heapBusy]) =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = new URL(request.url, "http://localhost")
      if (url.pathname === PPROF_PREFIX.slice(0, -1)) {
        return HttpServerResponse.empty({ status: 301, headers: { location: PPROF_PREFIX } })
      }
      if (request.method !== "GET" && request.method !== "HEAD") {
        return HttpServerResponse.text("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } })
      }
      const asked = parsePprofRequest(url.pathname.slice(PPROF_PREFIX.length), url.searchParams)
      switch (asked._tag) {
        case "Index":
          return HttpServerResponse.html(pprofIndexHtml(title))
        case "Invalid":
          return text(400, asked.message)
        case "Unknown":
          return text(
            404,
            `unknown profile "${asked.name}": this process serves profile and heap (see ${PPROF_PREFIX})`,
          )
        case "Cpu":
          return yield* exclusive(cpuBusy, "CPU profile", (release) =>
            cpuProfile(`${asked.seconds} seconds`).pipe(
              Effect.map((profile) =>
                HttpServerResponse.text(JSON.stringify(profile), {
                  contentType: "application/json",
                  headers: { "content-disposition": 'attachment; filename="profile.cpuprofile"' },
                }),
              ),
              Effect.catchTag("ProfilingError", (error) => Effect.succeed(text(500, error.message))),
              Effect.ensuring(release),
            ),
          )
        case "Heap":
          // Held while the snapshot is taken (the process pauses), not while it is sent.
          return yield* exclusive(heapBusy, "heap snapshot", (release) =>
            heapSnapshot.pipe(
              Effect.map((body) =>
                HttpServerResponse.stream(body, {
                  contentType: "application/json",
                  headers: { "content-disposition": 'attachment; filename="heap.heapsnapshot"' },
                }),
              ),
              Effect.catchTag("ProfilingError", (error) => Effect.succeed(text(500, error.message))),
              Effect.ensuring(release),
            ),
          )
      }
    }),
  )

/** `handler` answered to loopback callers only (403 otherwise). */
const loopbackOnly = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isLoopback(Option.getOrUndefined(request.remoteAddress))
      ? handler
      : Effect.succeed(text(403, "profiling is only served to localhost")),
  )

/**
 * Adds `/debug/pprof` and below to `router`, for loopback callers only: for a listener that has
 * no debug interface of its own to share the rule with (the agent's status port).
 */
export const withPprofRoutes =
  (handler: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>) =>
  <E, R>(router: HttpRouter.HttpRouter<E, R>) =>
    router.pipe(
      HttpRouter.all("/debug/pprof", loopbackOnly(handler)),
      HttpRouter.all("/debug/pprof/*", loopbackOnly(handler)),
    )
