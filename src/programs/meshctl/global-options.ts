/**
 * meshctl's global flags (spec part 3 §4.1), accepted by every command. They sit on each
 * command rather than on the root so they may appear anywhere on the line, as users expect.
 */
import { Options } from "@effect/cli"
import { SYSTEM_NAMESPACE } from "../../services/constants.js"
import { durationFlag, listFlag, textFlag } from "../shared/options.js"

export const globalFlagDocs: ReadonlyArray<readonly [string, string]> = [
  [
    "--as string",
    "Username to impersonate for the operation. User could be a regular user or a service account in a namespace",
  ],
  [
    "--as-group stringArray",
    "Group to impersonate for the operation, this flag can be repeated to specify multiple groups.",
  ],
  ["--as-uid string", "UID to impersonate for the operation."],
  ["--context string", "Orchestrator configuration context"],
  ["-i, --meshNamespace string", `Mesh system namespace (default "${SYSTEM_NAMESPACE}")`],
  [
    "--orchclient-timeout string",
    'Orchestrator client timeout as a time.Duration string, defaults to 15 seconds. (default "15s")',
  ],
  ["-c, --orchconfig string", "Orchestrator configuration file"],
  ["-n, --namespace string", "Namespace"],
  ["--vklog Level", "number for the log level verbosity. Like -v flag. ex: --vklog=9"],
]

export const globalOptions = Options.all({
  as: textFlag("as").pipe(Options.withDescription(globalFlagDocs[0]![1])),
  asGroup: listFlag("as-group").pipe(Options.withDescription(globalFlagDocs[1]![1])),
  asUid: textFlag("as-uid").pipe(Options.withDescription(globalFlagDocs[2]![1])),
  context: textFlag("context").pipe(Options.withDescription(globalFlagDocs[3]![1])),
  meshNamespace: textFlag("meshNamespace", SYSTEM_NAMESPACE).pipe(
    Options.withAlias("i"),
    Options.withDescription(globalFlagDocs[4]![1]),
  ),
  orchclientTimeout: durationFlag("orchclient-timeout", "15s").pipe(Options.withDescription(globalFlagDocs[5]![1])),
  orchconfig: textFlag("orchconfig").pipe(Options.withAlias("c"), Options.withDescription(globalFlagDocs[6]![1])),
  namespace: textFlag("namespace").pipe(Options.withAlias("n"), Options.withDescription(globalFlagDocs[7]![1])),
})

export type GlobalOptions = typeof globalOptions extends Options.Options<infer A> ? A : never
