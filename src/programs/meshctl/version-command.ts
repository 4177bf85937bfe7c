/**
 * `meshctl version`: the client build, and with `--remote` (the default) the control plane's
 * too. Reaching the control plane needs the orchestrator client, which arrives with its own
 * issue; until then `--remote` reports that no control plane could be queried.
 */
import { Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { buildInfo } from "../../services/build-info.js"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, textFlag } from "../shared/options.js"
import { formatVersion, makeVersionCommand } from "../shared/version-command.js"
import { globalOptions } from "./global-options.js"

export const versionCommand = (logging: Options.Options<LogSettings>) =>
  makeVersionCommand(
    logging,
    Options.all({
      remote: boolFlag("remote", true).pipe(
        Options.withDescription("Use --remote=false to suppress control plane check"),
      ),
      revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
      global: globalOptions,
    }),
    (short, output, extra) =>
      Effect.gen(function* () {
        yield* Console.log(yield* formatVersion(buildInfo, short, output))
        if (extra.remote) {
          yield* Console.error(
            "control plane version: unavailable (querying the control plane needs the orchestrator client; use --remote=false to skip this check)",
          )
        }
      }),
  )
