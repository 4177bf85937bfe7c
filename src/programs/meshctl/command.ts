/** meshctl's command tree (the operator CLI). */
import { Command } from "@effect/cli"
import { MeshctlEnv } from "../../services/config/meshctl-env.js"
import { meshctlScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { analyzeCommand } from "./config/analyze-command.js"
import { createRemoteSecretCommand } from "./config/create-remote-secret-command.js"
import { orchInjectCommand } from "./config/orch-inject-command.js"
import { remoteClustersCommand } from "./config/remote-clusters-command.js"
import { validateAliasCommand, validateCommand } from "./config/validate-command.js"
import { adminAliasCommand, adminCommand } from "./diagnostics/admin-command.js"
import { bugReportCommand } from "./diagnostics/bug-report-command.js"
import { dashboardCommands } from "./diagnostics/dashboard-command.js"
import { nodeProxyConfigCommand } from "./diagnostics/node-proxy-config-command.js"
import { proxyConfigCommands } from "./diagnostics/proxy-config-command.js"
import { proxyStatusAliasCommand, proxyStatusCommand } from "./diagnostics/proxy-status-command.js"
import { versionCommand } from "./diagnostics/version-command.js"
import { experimentalAliasCommand, experimentalCommand } from "./experimental/experimental-command.js"
import { globalOptions } from "./global-options.js"
import { installCommands } from "./lifecycle/install-command.js"
import { manifestCommand } from "./lifecycle/manifest-command.js"
import { tagCommand } from "./lifecycle/tag-command.js"
import { uninstallCommand } from "./lifecycle/uninstall-command.js"
import { verifyInstallCommand } from "./lifecycle/verify-install-command.js"
import { waypointCommand } from "./lifecycle/waypoint-command.js"
import { optionsCommand } from "./options-command.js"

export const PROGRAM = "meshctl"
const logging = loggingOptions(meshctlScopes)

// The completion command reads the finished tree, so it takes the root lazily.
const completion = makeCompletionCommand(PROGRAM, (): unknown => root, logging, globalOptions)

export const root = Command.make(PROGRAM).pipe(
  Command.withDescription(
    "Mesh configuration command line utility for service operators to debug and diagnose their mesh.",
  ),
  Command.withSubcommands([
    versionCommand(logging),
    analyzeCommand(logging),
    bugReportCommand(logging),
    remoteClustersCommand(logging),
    proxyStatusCommand(logging),
    proxyStatusAliasCommand(logging),
    adminCommand(logging),
    adminAliasCommand(logging),
    experimentalCommand(logging),
    experimentalAliasCommand(logging),
    optionsCommand(logging),
    orchInjectCommand(logging),
    createRemoteSecretCommand(logging),
    manifestCommand(logging),
    ...installCommands(logging),
    uninstallCommand(logging),
    verifyInstallCommand(logging),
    ...proxyConfigCommands(logging),
    nodeProxyConfigCommand(logging),
    ...dashboardCommands(logging),
    validateCommand(logging),
    validateAliasCommand(logging),
    tagCommand(logging),
    waypointCommand(logging),
    completion,
  ]),
  // meshctl's environment variables, read once when a command runs (an invalid one fails it).
  Command.provide(MeshctlEnv.layerFromEnv()),
)
