/**
 * What `meshctl x proxy-stats` does once its flags are read (loaded lazily): find the pod (named,
 * or the first the selector matches in `-n`), ask its proxy's admin port at the pod IP (as
 * proxy-config-live.ts does, for the same reason), print the answer in the chosen form.
 */
import { Console, Data, Duration, Effect, Either } from "effect"
import { renderStats, statsRequest } from "../../../services/proxy-config/stats.js"
import { findPod } from "../pod-lookup.js"
import type { ProxyStatsArgs } from "./proxy-stats-options.js"

class ProxyStatsFailed extends Data.TaggedError("ProxyStatsFailed")<{ readonly message: string }> {}

const fail = (message: string) => new ProxyStatsFailed({ message })

const get = (url: string, timeout: Duration.Duration) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(timeout))]),
      })
      const body = await response.text()
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${body.trim()}`)
      return body
    },
    catch: (e) => {
      const error = e as Error
      const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ""
      return fail(`GET ${url}: ${error.message}${cause}`)
    },
  })

export const runProxyStats = (args: ProxyStatsArgs) =>
  Effect.gen(function* () {
    if (args.pod !== "" && args.selector !== "")
      return yield* fail("name cannot be provided when a selector is specified")
    if (args.pod === "" && args.selector === "") return yield* fail("proxy-stats requires a pod name or --selector/-l")
    const request = statsRequest(args.type, args.output, args.proxyAdminPort)
    if (Either.isLeft(request)) return yield* fail(request.left)
    const found = yield* findPod(args.global, {
      pod: args.pod,
      selector: args.selector,
      selectorNamespace: args.global.namespace || "default",
    })
    const host = found.ip.includes(":") ? `[${found.ip}]` : found.ip
    const body = yield* get(`http://${host}:${request.right.port}${request.right.path}`, args.global.orchclientTimeout)
    const text = renderStats(body, args.output)
    if (Either.isLeft(text)) return yield* fail(`${found.name}.${found.namespace}: ${text.left}`)
    yield* Console.log(text.right.replace(/\n$/, ""))
  }).pipe(Effect.scoped)
