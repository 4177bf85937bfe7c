/** meshctl: the operator CLI's command tree. */
import { Command } from "@effect/cli"
import { meshctlScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { runCli } from "../shared/run.js"
import { optionsCommand } from "./options-command.js"
import { versionCommand } from "./version-command.js"

const PROGRAM = "meshctl"
const logging = loggingOptions(meshctlScopes)

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging)

const root = Command.make(PROGRAM).pipe(
  Command.withDescription(
    "Mesh configuration command line utility for service operators to debug and diagnose their mesh.",
  ),
  Command.withSubcommands([versionCommand(logging), optionsCommand(logging), completion]),
)

runCli(PROGRAM, root)
