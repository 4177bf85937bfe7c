/** mesh-discovery's command tree (the control plane). */
import { Command } from "@effect/cli"
import { discoveryScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { plainVersionCommand } from "../shared/version-command.js"
import { discoveryCommand } from "./discovery-command.js"
import { requestCommand } from "./request-command.js"

export const PROGRAM = "mesh-discovery"
const logging = loggingOptions(discoveryScopes)

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging)

export const root = Command.make(PROGRAM).pipe(
  Command.withDescription("Mesh Discovery Server: the mesh control plane"),
  Command.withSubcommands([
    discoveryCommand(logging),
    requestCommand(logging),
    plainVersionCommand(logging),
    completion,
  ]),
)
