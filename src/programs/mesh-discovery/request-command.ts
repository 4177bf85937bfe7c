/** `mesh-discovery request`: HTTP to the local monitoring/debug port (15014). */
import type { Options } from "@effect/cli"
import { Ports } from "../../services/constants.js"
import type { LogSettings } from "../../services/logging/options.js"
import { makeRequestCommand } from "../shared/request-command.js"

export const requestCommand = (logging: Options.Options<LogSettings>) =>
  makeRequestCommand(
    logging,
    Ports.monitoring,
    "Makes an HTTP request to the discovery server's metrics/debug endpoint",
  )
