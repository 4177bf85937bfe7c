/**
 * `meshctl experimental internal-debug <type>`: what the control plane's debug interface says
 * about `<type>` (`syncz`, `configz`, `adsz`, `config_dump?proxyID=...`, ...), spec part 3
 * §4.3, §5 rule 2. Experimental, not for production. The work is in internal-debug-run.ts,
 * loaded only when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./internal-debug-options.js"

export const internalDebugCommand = (logging: Options.Options<LogSettings>) =>
  Command.make(
    "internal-debug",
    {
      ...options,
      type: Args.text({ name: "type" }).pipe(
        Args.withDescription("a debug type: syncz, configz, adsz, config_dump?proxyID=<id>, ..."),
      ),
      logging,
    },
    ({ logging: _, ...args }) =>
      Effect.flatMap(
        Effect.promise(() => import("./internal-debug-run.js")),
        (module) => module.runInternalDebug(args),
      ),
  ).pipe(
    Command.withDescription("Retrieves the debug information of the control plane (experimental, not for production)"),
  )
