/**
 * `meshctl x proxy-stats`: which admin request answers each `--type`/`--output` pair, and how
 * the answer is printed. Server stats come from `/stats` (`?format=json` for json and yaml,
 * `/stats/prometheus` for prom); `prom-merged` is the agent's merged endpoint (the proxy's stats
 * plus the application's, on the agent's status port); cluster stats come from `/clusters`.
 */
import { Either } from "effect"
import { stringify } from "yaml"

export const STATS_TYPES = ["server", "clusters"] as const
export type StatsType = (typeof STATS_TYPES)[number]
export const STATS_OUTPUTS = ["short", "json", "yaml", "prom", "prom-merged"] as const
export type StatsOutput = (typeof STATS_OUTPUTS)[number]

/** The agent's status port, which serves the merged Prometheus metrics. */
export const AGENT_STATUS_PORT = 15020

export interface StatsRequest {
  readonly port: number
  readonly path: string
}

export const statsRequest = (
  type: StatsType,
  output: StatsOutput,
  adminPort: number,
): Either.Either<StatsRequest, string> => {
  const structured = output === "json" || output === "yaml"
  if (type === "clusters") {
    if (output === "prom" || output === "prom-merged")
      return Either.left(`--output ${output} is only available with --type server`)
    return Either.right({ port: adminPort, path: structured ? "/clusters?format=json" : "/clusters" })
  }
  switch (output) {
    case "json":
    case "yaml":
      return Either.right({ port: adminPort, path: "/stats?format=json" })
    case "prom":
      return Either.right({ port: adminPort, path: "/stats/prometheus" })
    case "prom-merged":
      return Either.right({ port: AGENT_STATUS_PORT, path: "/stats/prometheus" })
    default:
      return Either.right({ port: adminPort, path: "/stats" })
  }
}

/** The text to print: JSON re-indented, YAML converted from the JSON, anything else as sent. */
export const renderStats = (body: string, output: StatsOutput): Either.Either<string, string> => {
  if (output !== "json" && output !== "yaml") return Either.right(body)
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (e) {
    return Either.left(`the proxy's answer is not JSON: ${(e as Error).message}`)
  }
  return Either.right(output === "json" ? `${JSON.stringify(parsed, null, 2)}\n` : stringify(parsed))
}
