/** meshctl's command tree (the operator CLI). */
import { Command } from "@effect/cli"
import { MeshctlEnv } from "../../services/config/meshctl-env.js"
import { meshctlScopes } from "../../services/logging/scopes.js"
import { makeCompletionCommand } from "../shared/completion-command.js"
import { loggingOptions } from "../shared/logging-options.js"
import { adminAliasCommand, adminCommand } from "./admin-command.js"
import { analyzeCommand } from "./analyze-command.js"
import { bugReportCommand } from "./bug-report-command.js"
import { createRemoteSecretCommand } from "./create-remote-secret-command.js"
import { dashboardCommands } from "./dashboard-command.js"
import { experimentalAliasCommand, experimentalCommand } from "./experimental-command.js"
import { globalOptions } from "./global-options.js"
import { installCommands } from "./install-command.js"
import { manifestCommand } from "./manifest-command.js"
import { nodeProxyConfigCommand } from "./node-proxy-config-command.js"
import { optionsCommand } from "./options-command.js"
import { orchInjectCommand } from "./orch-inject-command.js"
import { proxyConfigCommands } from "./proxy-config-command.js"
import { proxyStatusAliasCommand, proxyStatusCommand } from "./proxy-status-command.js"
import { remoteClustersCommand } from "./remote-clusters-command.js"
import { tagCommand } from "./tag-command.js"
import { uninstallCommand } from "./uninstall-command.js"
import { validateAliasCommand, validateCommand } from "./validate-command.js"
import { verifyInstallCommand } from "./verify-install-command.js"
import { versionCommand } from "./version-command.js"
import { waypointCommand } from "./waypoint-command.js"

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
