/** `mesh-agent proxy`: the flags of spec part 2 §4.2; the agent itself is wired in proxy-agent.ts (loaded lazily). */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { agentEnv } from "../../services/config/agent-env.js"
import { envTableConfig } from "../../services/config/env.js"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, intFlag, invalidFlag, textFlag } from "../shared/options.js"

export const PROXY_LOG_LEVELS = ["trace", "debug", "info", "warning", "error", "critical", "off"] as const

export const proxyFlags = {
  concurrency: intFlag("concurrency", 0, { min: 0 }).pipe(Options.withDescription("number of worker threads to run")),
  domain: textFlag("domain").pipe(
    Options.withDescription("DNS domain suffix. If not provided uses ${POD_NAMESPACE}.svc.cluster.local"),
  ),
  meshConfig: textFlag("meshConfig", "./etc/mesh/config/mesh").pipe(
    Options.withDescription("File name for mesh configuration. If not specified, a default mesh will be used."),
  ),
  outlierLogPath: textFlag("outlierLogPath").pipe(Options.withDescription("The log path for outlier detection")),
  profiling: boolFlag("profiling").pipe(
    Options.withDescription("Enable profiling via web interface host:port/debug/pprof/."),
  ),
  proxyComponentLogLevel: textFlag("proxyComponentLogLevel").pipe(
    Options.withDescription(
      "The component log level used to start the proxy (deprecated, use --proxyLogLevel instead)",
    ),
  ),
  proxyLogLevel: textFlag("proxyLogLevel", "warning").pipe(
    Options.mapEffect((text) => {
      for (const part of text.split(",")) {
        const level = part.includes(":") ? part.slice(part.lastIndexOf(":") + 1) : part
        if (!(PROXY_LOG_LEVELS as ReadonlyArray<string>).includes(level.trim())) {
          return Effect.fail(
            invalidFlag(`--proxyLogLevel: unknown level "${level}" (one of ${PROXY_LOG_LEVELS.join(", ")})`),
          )
        }
      }
      return Effect.succeed(text)
    }),
    Options.withDescription(
      `The log level used to start the proxy (choose from {${PROXY_LOG_LEVELS.join(", ")}}). Level may also include one or more scopes, such as 'info,misc:error,upstream:debug'`,
    ),
  ),
  serviceCluster: textFlag("serviceCluster", "mesh-proxy").pipe(Options.withDescription("Service cluster")),
  stsPort: intFlag("stsPort", 0, { min: 0, max: 65535 }).pipe(
    Options.withDescription(
      "HTTP Port on which to serve Security Token Service (STS). If zero, STS service will not be provided.",
    ),
  ),
  templateFile: textFlag("templateFile").pipe(Options.withDescription("Go template bootstrap config")),
  tokenManagerPlugin: textFlag("tokenManagerPlugin").pipe(
    Options.withDescription("Token provider specific plugin name."),
  ),
}

/** `mesh-agent proxy [sidecar|router]`: the node type, as injected pods and gateways run it (default sidecar). */
const proxyType = Args.choice([
  ["sidecar", "sidecar" as const],
  ["router", "router" as const],
]).pipe(Args.withDescription("the proxy's role: sidecar (default) or router (gateway)"), Args.optional)

export const proxyCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("proxy", { ...proxyFlags, logging, type: proxyType }, ({ logging: settings, type, ...flags }) =>
    Effect.gen(function* () {
      // Validated before the heavy modules load, so a bad value is reported the same way everywhere.
      yield* envTableConfig(agentEnv)
      const { runProxyAgent } = yield* Effect.promise(() => import("./proxy-agent.js"))
      return yield* runProxyAgent({ ...flags, proxyType: Option.getOrElse(type, () => "sidecar" as const) }, settings)
    }),
  ).pipe(Command.withDescription("XDS proxy agent"))
