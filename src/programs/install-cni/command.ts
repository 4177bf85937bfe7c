/** install-cni's command tree (the per-node CNI installer). */
import { Command } from "@effect/cli"
import { Data, Effect } from "effect"
import { cniEnv } from "../../services/config/cni-env.js"
import { envTableConfig } from "../../services/config/env.js"
import { cniScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { plainVersionCommand } from "../shared/version-command.js"
import { cniFlags } from "./cni-flags.js"

export const PROGRAM = "install-cni"
const logging = loggingOptions(cniScopes)

export class CniInstallUnavailable extends Data.TaggedError("CniInstallUnavailable")<{ readonly message: string }> {}

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging)

export const root = Command.make(PROGRAM, { ...cniFlags, logging }, () =>
  Effect.gen(function* () {
    yield* envTableConfig(cniEnv)
    return yield* new CniInstallUnavailable({
      message: "install-cni: installing the CNI plugin and race repair are not part of this build yet",
    })
  }),
).pipe(
  Command.withDescription(
    "Install and configure the mesh CNI plugin on a node, detect and repair pod which excluded from mesh",
  ),
  Command.withSubcommands([plainVersionCommand(logging), completion]),
)
