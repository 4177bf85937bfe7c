/**
 * What `meshctl install` does once its flags are read (loaded lazily): resolve and render,
 * confirm, apply, prune, wait for readiness, and optionally verify.
 */
import { Console, Duration, Effect } from "effect"
import { confirm } from "../../../layers/install/confirm.js"
import { applyAll, findPruned, removeAll, waitForComponents } from "../../../layers/install/install-flow.js"
import { describeRef, installPlan, refOf } from "../../../services/install/apply-plan.js"
import { installPrompt } from "../../../services/install/install-text.js"
import { renderManifest } from "../../../services/install/manifest.js"
import { installCluster } from "./install-cluster-access.js"
import type { InstallArgs } from "./install-options.js"
import { InstallFailed, readOperator } from "./install-options.js"
import { verifyInstalled } from "./verify-install-run.js"

export const runInstall = (args: InstallArgs) =>
  Effect.gen(function* () {
    const op = yield* readOperator(args)
    const plan = installPlan(op, renderManifest(op))
    const cluster = yield* installCluster(args.global)
    if (!args.skipConfirmation && !args.dryRun) {
      const yes = yield* confirm(installPrompt(op, plan.components))
      if (!yes) return yield* new InstallFailed({ message: "Cancelled: nothing was installed" })
    }
    const timeout = Duration.toMillis(args.readinessTimeout)
    yield* applyAll(cluster, plan, args.dryRun, Date.now() + timeout)
    const pruned = yield* findPruned(cluster, op, plan)
    yield* removeAll(cluster, pruned, args.dryRun, (o) =>
      Console.log(`${args.dryRun ? "Would prune" : "Pruned"} ${describeRef(refOf(o))}`),
    )
    if (args.dryRun) return yield* Console.log("Dry run complete: nothing was changed in the cluster")
    yield* waitForComponents(cluster, plan, timeout)
    yield* Console.log("✔ Installation complete")
    if (args.verify) yield* verifyInstalled(cluster, op)
  }).pipe(Effect.catchTag("InstallClusterError", (e) => new InstallFailed({ message: e.message })))
