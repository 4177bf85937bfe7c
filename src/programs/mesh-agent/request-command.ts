/** `mesh-agent request`: HTTP to the proxy admin API (`--debug-port`, default 15000). */
import { Options } from "@effect/cli"
import { Ports } from "../../services/constants.js"
import type { LogSettings } from "../../services/logging/options.js"
import { intFlag } from "../shared/options.js"
import { makeRequestCommand } from "../shared/request-command.js"

export const requestCommand = (logging: Options.Options<LogSettings>) =>
  makeRequestCommand(
    logging,
    intFlag("debug-port", Ports.proxyAdmin, { min: 0, max: 65535 }).pipe(
      Options.withDescription("Set the port to make a local request to. The default points to the proxy admin API."),
    ),
    "Makes an HTTP request to the proxy admin API",
  )
