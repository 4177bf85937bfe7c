/**
 * The options of `create-remote-secret` and what its run file receives: shared by create-remote-secret-command.ts (which
 * declares the command) and create-remote-secret-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import {
  AUTH_TYPES,
  DEFAULT_READER_SERVICE_ACCOUNT,
  REMOTE_SECRET_TYPES,
} from "../../../services/multicluster/remote-secret.js"
import { boolFlag, mapFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  authPluginConfig: mapFlag("auth-plugin-config").pipe(
    Options.withDescription("Authenticator plug-in configuration (key=value,...); needs --auth-type=plugin"),
  ),
  authPluginName: textFlag("auth-plugin-name").pipe(
    Options.withDescription("Authenticator plug-in name; needs --auth-type=plugin"),
  ),
  authType: Options.choice("auth-type", AUTH_TYPES).pipe(
    Options.withDefault("bearer-token" as const),
    Options.withDescription("Type of authentication to use: bearer-token or plugin"),
  ),
  createServiceAccount: boolFlag("create-service-account", true).pipe(
    Options.withDescription("Create the service account (and its RBAC) needed for the secret if it does not exist"),
  ),
  manifests: textFlag("manifests").pipe(
    Options.withAlias("d"),
    Options.withDescription("Path to charts and profiles (accepted; the built-in manifests are used)"),
  ),
  name: textFlag("name").pipe(
    Options.withDescription(
      "Name of the local cluster whose credentials are stored (default: the system namespace's UID)",
    ),
  ),
  secretName: textFlag("secret-name").pipe(
    Options.withDescription("Name of the token Secret to use, needed when the service account has several"),
  ),
  server: textFlag("server").pipe(
    Options.withDescription("The address and port of the orchestrator API server (default: the kubeconfig's)"),
  ),
  serviceAccount: textFlag("service-account").pipe(
    Options.withDescription(
      `Service account whose token the secret carries (default ${DEFAULT_READER_SERVICE_ACCOUNT} for type remote, meshd for type config)`,
    ),
  ),
  tlsServerName: textFlag("tls-server-name").pipe(
    Options.withDescription("Server name to check the API server's certificate against"),
  ),
  type: Options.choice("type", REMOTE_SECRET_TYPES).pipe(
    Options.withDefault("remote" as const),
    Options.withDescription("Type of the secret: remote or config"),
  ),
  global: globalOptions,
}

/** The command's inputs, as create-remote-secret-run.ts reads them. */
export type CreateRemoteSecretArgs = Command.Command.ParseConfig<typeof options>
