/**
 * `mesh-agent wait`: polls the proxy's readiness URL until it answers 200 or the timeout
 * passes. Each attempt is bounded by --requestTimeoutMillis; attempts are --periodMillis apart.
 */
import { request as httpRequest } from "node:http"
import { Command, Options } from "@effect/cli"
import { Console, Data, Duration, Effect, Schedule } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { intFlag, textFlag } from "../shared/options.js"

export class NotReady extends Data.TaggedError("NotReady")<{ readonly message: string }> {}

/** One readiness probe: succeeds on HTTP 200, fails with the reason otherwise. */
export const probeOnce = (url: string, timeoutMillis: number) =>
  Effect.async<void, NotReady>((resume) => {
    const req = httpRequest(url, { method: "GET", timeout: timeoutMillis, agent: false }, (res) => {
      res.resume()
      res.on("end", () =>
        resume(
          res.statusCode === 200
            ? Effect.void
            : Effect.fail(new NotReady({ message: `HTTP status code ${res.statusCode}` })),
        ),
      )
    })
    req.on("timeout", () => req.destroy(new Error(`request timed out after ${timeoutMillis}ms`)))
    req.on("error", (error) => resume(Effect.fail(new NotReady({ message: error.message }))))
    req.end()
    return Effect.sync(() => req.destroy())
  })

export interface WaitSettings {
  readonly url: string
  readonly periodMillis: number
  readonly requestTimeoutMillis: number
  readonly timeoutSeconds: number
}

/** Retries `probe` every period until it succeeds or the overall timeout passes (Clock-driven). */
export const waitUntilReady = <R>(settings: WaitSettings, probe: Effect.Effect<void, NotReady, R>) =>
  probe.pipe(
    Effect.retry(Schedule.spaced(Duration.millis(settings.periodMillis))),
    Effect.timeoutFail({
      duration: Duration.seconds(settings.timeoutSeconds),
      onTimeout: () =>
        new NotReady({ message: `timeout waiting for the proxy to become ready (${settings.timeoutSeconds}s)` }),
    }),
  )

export const waitCommand = (logging: Options.Options<LogSettings>) =>
  Command.make(
    "wait",
    {
      periodMillis: intFlag("periodMillis", 500, { min: 1 }).pipe(
        Options.withDescription("number of milliseconds to wait between attempts"),
      ),
      requestTimeoutMillis: intFlag("requestTimeoutMillis", 500, { min: 1 }).pipe(
        Options.withDescription("number of milliseconds to wait for response"),
      ),
      timeoutSeconds: intFlag("timeoutSeconds", 60, { min: 0 }).pipe(
        Options.withDescription("maximum number of seconds to wait for the proxy to be ready"),
      ),
      url: textFlag("url", "http://localhost:15021/healthz/ready").pipe(
        Options.withDescription("URL to use in requests"),
      ),
      logging,
    },
    (settings) =>
      Effect.gen(function* () {
        yield* Console.log(`Waiting for the proxy to be ready (timeout: ${settings.timeoutSeconds} seconds)...`)
        let last = ""
        const probe = probeOnce(settings.url, settings.requestTimeoutMillis).pipe(
          Effect.tapError((error) => Effect.sync(() => (last = error.message))),
        )
        yield* waitUntilReady(settings, probe).pipe(
          Effect.mapError(
            (error) => new NotReady({ message: `${error.message}${last === "" ? "" : `; last error: ${last}`}` }),
          ),
        )
        yield* Console.log("The proxy is ready!")
      }),
  ).pipe(Command.withDescription("Waits until the proxy is ready"))
