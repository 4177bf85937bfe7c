/** install-cni's command tree (the per-node CNI installer). */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { InstallCniConfig } from "../../services/config/cni-config.js"
import { cniScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { plainVersionCommand } from "../shared/version-command.js"
import { cniFlags } from "./cni-flags.js"

export const PROGRAM = "install-cni"
const logging = loggingOptions(cniScopes)

/** Every command takes the introspection flags (spec part 2 §4.3); only the installer listens on them. */
const introspection = Options.all({ ctrlzAddress: cniFlags.ctrlzAddress, ctrlzPort: cniFlags.ctrlzPort })

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging, introspection)

// The installer is loaded only when it runs, so --help and version stay cheap.
export const root = Command.make(PROGRAM, { ...cniFlags, logging }, ({ logging, ...args }) =>
  Effect.flatMap(
    Effect.promise(() => import("./install-run.js")),
    // install-cni's environment is read here, once, for the whole run.
    (run) => Effect.provide(run.runInstallCni(args, logging), InstallCniConfig.layerFromEnv()),
  ),
).pipe(
  Command.withDescription(
    "Install and configure the mesh CNI plugin on a node, detect and repair pod which excluded from mesh",
  ),
  Command.withSubcommands([plainVersionCommand(logging, introspection), completion]),
)
