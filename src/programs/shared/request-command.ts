/**
 * `request <method> <path> [<body>]`: an HTTP request to a local port of this component
 * (mesh-discovery: its monitoring/debug port; mesh-agent: the proxy admin API). Prints the
 * response body; a non-2xx answer is an error with the status.
 */
import { request as httpRequest } from "node:http"
import { Args, Command, Options } from "@effect/cli"
import { Console, Data, Effect, Option } from "effect"
import type { LogSettings } from "../../services/logging/options.js"

export class RequestFailed extends Data.TaggedError("RequestFailed")<{ readonly message: string }> {}

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]

/** Sends one request to 127.0.0.1:port and resolves with status and body. */
export const sendLocalRequest = (port: number, method: string, path: string, body: string | undefined) =>
  Effect.async<{ readonly status: number; readonly body: string }, RequestFailed>((resume) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path: path.startsWith("/") ? path : `/${path}`, agent: false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resume(Effect.succeed({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() })),
        )
        res.on("error", (error) => resume(Effect.fail(new RequestFailed({ message: error.message }))))
      },
    )
    req.on("error", (error) =>
      resume(
        Effect.fail(new RequestFailed({ message: `${method} http://127.0.0.1:${port}${path}: ${error.message}` })),
      ),
    )
    if (body !== undefined) req.write(body)
    req.end()
    return Effect.sync(() => req.destroy())
  })

/** `port` is either fixed or a flag (mesh-agent's `--debug-port`). */
export const makeRequestCommand = (
  logging: Options.Options<LogSettings>,
  port: number | Options.Options<number>,
  description: string,
) =>
  Command.make(
    "request",
    {
      method: Args.text({ name: "method" }),
      path: Args.text({ name: "path" }),
      body: Args.text({ name: "body" }).pipe(Args.optional),
      logging,
      port: typeof port === "number" ? Options.map(Options.none, () => port) : port,
    },
    (args) =>
      Effect.gen(function* () {
        const method = args.method.toUpperCase()
        if (!METHODS.includes(method)) {
          return yield* new RequestFailed({
            message: `unsupported method "${args.method}" (one of ${METHODS.join(", ")})`,
          })
        }
        const response = yield* sendLocalRequest(args.port, method, args.path, Option.getOrUndefined(args.body))
        if (response.status < 200 || response.status >= 300) {
          return yield* new RequestFailed({
            message: `${method} ${args.path}: status ${response.status}${response.body === "" ? "" : `: ${response.body.trim()}`}`,
          })
        }
        yield* Console.log(response.body.trimEnd())
      }),
  ).pipe(Command.withDescription(description))
