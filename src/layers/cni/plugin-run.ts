/**
 * The `mesh-cni` process: reads the network configuration from stdin and the CNI_* variables,
 * runs the command with the live pod lookup and iptables layers and a stderr (+ file) logger,
 * prints the result or error object on stdout and exits with its code.
 */
import { existsSync, renameSync, statSync } from "node:fs"
import { join } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { runPluginCommand } from "../../services/cni/plugin-command.js"
import { PLUGIN_LOG_FILE, pluginLogOptions, pluginLogSettings } from "../../services/cni/plugin-logging.js"
import { cniScopes } from "../../services/logging/scopes.js"
import { IptablesLive } from "../iptables/iptables.js"
import { layer as loggingLayer } from "../logging.js"
import { layer as eventClientLayer } from "./plugin-event-client.js"
import { layer as podSourceLayer } from "./plugin-pod-source.js"

/** The plugin log file is rotated once it passes this size (one previous file is kept). */
export const PLUGIN_LOG_MAX_BYTES = 10 * 1024 * 1024

/** The runtime pipes the config in; a terminal (someone trying VERSION by hand) gives nothing. */
const readStdin: Effect.Effect<string> = Effect.async<string>((resume) => {
  if (process.stdin.isTTY === true) return resume(Effect.succeed(""))
  const chunks: Array<Buffer> = []
  process.stdin.on("data", (chunk: Buffer) => chunks.push(chunk))
  process.stdin.once("end", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
  // A closed or unreadable stdin is an empty config (the command reports it as undecodable).
  process.stdin.once("error", () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8"))))
})

/** The log file in the node agent's run directory, when it exists (the plugin does not create it). */
const logFileTarget = (runDir: string): ReadonlyArray<string> => {
  if (runDir === "" || !existsSync(runDir)) return []
  const file = join(runDir, PLUGIN_LOG_FILE)
  try {
    if (statSync(file).size > PLUGIN_LOG_MAX_BYTES) renameSync(file, `${file}.1`)
  } catch {
    // No file yet.
  }
  return [file]
}

export const runPlugin = (): void => {
  const program = Effect.gen(function* () {
    const stdin = yield* readStdin
    const log = pluginLogOptions(stdin)
    const output = yield* runPluginCommand(process.env, stdin).pipe(
      Effect.provide(
        Layer.mergeAll(
          podSourceLayer(),
          eventClientLayer,
          IptablesLive,
          loggingLayer(pluginLogSettings(log.level, ["stderr", ...logFileTarget(log.runDir)]), cniScopes),
        ),
      ),
    )
    yield* Effect.async<void>((resume) => {
      process.stdout.write(output.stdout, () => resume(Effect.void))
    })
    process.exitCode = output.exitCode
  })
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}
