/** What `meshctl uninstall` does once its flags are read (loaded lazily). */
import { Console, Effect } from "effect"
import { confirm } from "../../../layers/install/confirm.js"
import { findAllInstalled, findRevisionInstalled, removeAll } from "../../../layers/install/install-flow.js"
import { describeRef, refOf, uninstallSelection } from "../../../services/install/apply-plan.js"
import { uninstallPrompt } from "../../../services/install/install-text.js"
import { installCluster } from "./install-cluster-access.js"
import { InstallFailed, readOperator } from "./install-options.js"
import type { UninstallArgs } from "./uninstall-options.js"

export const runUninstall = (args: UninstallArgs) =>
  Effect.gen(function* () {
    const fromOperator = args.filename.length > 0 || args.set.length > 0
    if (!args.purge && !fromOperator && args.revision === "")
      return yield* new InstallFailed({
        message:
          "at least one of the --revision (or --set revision=<revision>), --filename or --purge flags should be set",
      })
    const op = fromOperator
      ? yield* readOperator(args)
      : { revision: args.revision === "default" ? "" : args.revision, namespace: args.global.meshNamespace }
    const cluster = yield* installCluster(args.global)
    const found = yield* args.purge ? findAllInstalled(cluster) : findRevisionInstalled(cluster, op)
    const selected = uninstallSelection(found, args.purge)
    if (selected.length === 0) return yield* Console.log("No mesh resources found: nothing to uninstall")
    if (!args.skipConfirmation && !args.dryRun) {
      const yes = yield* confirm(uninstallPrompt(args.purge, op.revision))
      if (!yes) return yield* new InstallFailed({ message: "Cancelled: nothing was removed" })
    }
    let removed = 0
    yield* removeAll(cluster, selected, args.dryRun, (o) => {
      removed++
      return args.verbose || args.dryRun
        ? Console.log(`${args.dryRun ? "Would remove" : "Removed"} ${describeRef(refOf(o))}`)
        : Effect.void
    })
    if (found.length > selected.length)
      yield* Console.log(
        "Kept the custom resource definitions and the namespace shared by revisions; use --purge to remove them",
      )
    yield* Console.log(
      args.dryRun ? `Dry run: ${removed} objects would be removed` : `✔ Uninstall complete: ${removed} objects removed`,
    )
  }).pipe(Effect.catchTag("InstallClusterError", (e) => new InstallFailed({ message: e.message })))
