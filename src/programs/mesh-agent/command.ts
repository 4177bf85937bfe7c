/** mesh-agent's command tree (the per-workload agent). */
import { Command } from "@effect/cli"
import { agentScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { plainVersionCommand } from "../shared/version-command.js"
import { iptablesCommand } from "./iptables-command.js"
import { proxyCommand } from "./proxy-command.js"
import { requestCommand } from "./request-command.js"
import { waitCommand } from "./wait-command.js"

export const PROGRAM = "mesh-agent"
const logging = loggingOptions(agentScopes)

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging)

export const root = Command.make(PROGRAM).pipe(
  Command.withDescription("Mesh agent: runs beside the data-plane proxy and bootstraps it"),
  Command.withSubcommands([
    proxyCommand(logging),
    waitCommand(logging),
    requestCommand(logging),
    iptablesCommand(logging),
    plainVersionCommand(logging),
    completion,
  ]),
)
