/**
 * Plain-text answers of the orchestrator API (pod logs): the JSON client of orchestrator-access.ts
 * parses every answer, so this makes the one text request with the same kubeconfig, context and
 * impersonation. Load it lazily: it brings in the orchestrator client library.
 */
import * as http from "node:http"
import * as https from "node:https"
import { KubeConfig } from "@kubernetes/client-node"
import { Data, Duration, Effect } from "effect"
import type { MeshctlEnv } from "../../services/config/meshctl-env.js"
import type { GlobalOptions } from "./global-options.js"
import { kubeconfigSource } from "./orchestrator-source.js"

export class OrchestratorTextError extends Data.TaggedError("OrchestratorTextError")<{
  readonly status: number
  readonly message: string
}> {}

export type TextGet = (
  path: string,
  query: Readonly<Record<string, string | undefined>>,
) => Effect.Effect<string, OrchestratorTextError>

/** A GET-as-text function for the cluster the global flags name. */
export const orchestratorTextClient = (
  global: GlobalOptions,
): Effect.Effect<TextGet, OrchestratorTextError, MeshctlEnv> =>
  Effect.gen(function* () {
    const source = yield* kubeconfigSource(global)
    if (source === undefined)
      return yield* new OrchestratorTextError({ status: 0, message: "no orchestrator configuration" })
    const kc = new KubeConfig()
    yield* Effect.try({
      try: () => {
        kc.loadFromFile(source.path)
        if (global.context !== "") kc.setCurrentContext(global.context)
      },
      catch: (e) => new OrchestratorTextError({ status: 0, message: `${source.path}: ${(e as Error).message}` }),
    })
    const server = kc.getCurrentCluster()?.server ?? ""
    const impersonation: Record<string, string | Array<string>> =
      global.as === ""
        ? {}
        : {
            "Impersonate-User": global.as,
            ...(global.asGroup.length > 0 ? { "Impersonate-Group": [...global.asGroup] } : {}),
            ...(global.asUid !== "" ? { "Impersonate-Uid": global.asUid } : {}),
          }
    const timeout = Duration.toMillis(global.orchclientTimeout)
    return (path, query) =>
      Effect.tryPromise({
        try: async (signal) => {
          const options: https.RequestOptions = { headers: {} }
          await kc.applyToHTTPSOptions(options)
          const params = new URLSearchParams()
          for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v)
          const url = new URL(`${server.replace(/\/+$/, "")}${path}${params.size > 0 ? `?${params}` : ""}`)
          const secure = url.protocol === "https:"
          return await new Promise<string>((resolve, reject) => {
            const req = (secure ? https : http).request(
              url,
              {
                ...options,
                method: "GET",
                headers: { ...options.headers, ...impersonation, Accept: "text/plain, */*" },
                signal,
                timeout,
              },
              (res) => {
                const chunks: Array<Buffer> = []
                res.on("data", (c: Buffer) => chunks.push(c))
                res.on("error", reject)
                res.on("end", () => {
                  const text = Buffer.concat(chunks).toString("utf8")
                  const status = res.statusCode ?? 0
                  if (status >= 200 && status < 300) return resolve(text)
                  let message = text.slice(0, 200)
                  try {
                    message = (JSON.parse(text) as { message?: string }).message ?? message
                  } catch {
                    // not a Status object: keep the text
                  }
                  reject(new OrchestratorTextError({ status, message: `${path}: ${message}` }))
                })
              },
            )
            req.on("timeout", () => req.destroy(new Error(`no answer within ${timeout} ms`)))
            req.on("error", reject)
            req.end()
          })
        },
        catch: (e) =>
          e instanceof OrchestratorTextError
            ? e
            : new OrchestratorTextError({ status: 0, message: `${path}: ${(e as Error).message}` }),
      })
  })
