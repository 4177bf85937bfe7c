/** What `meshctl verify-install` (and `install --verify`) does: compare the rendered install with the cluster. */
import { Console, Effect } from "effect"
import type { InstallCluster } from "../../../layers/install/cluster.js"
import { installPlan, refOf } from "../../../services/install/apply-plan.js"
import { renderManifest } from "../../../services/install/manifest.js"
import type { ResolvedOperator } from "../../../services/install/resolve.js"
import { verifyReport } from "../../../services/install/verify.js"
import { installCluster } from "./install-cluster-access.js"
import { InstallFailed, readOperator } from "./install-options.js"
import type { VerifyInstallArgs } from "./verify-install-options.js"

/** Prints the report; fails when an object is missing or not ready. */
export const verifyInstalled = (cluster: InstallCluster, op: ResolvedOperator) =>
  Effect.gen(function* () {
    const plan = installPlan(op, renderManifest(op))
    const expected = [...plan.crds, ...plan.objects]
    const live = yield* Effect.forEach(expected, (o) => cluster.get(refOf(o)), { concurrency: 8 })
    const report = verifyReport(expected, live)
    for (const line of report.lines) yield* Console.log(line)
    if (report.failures.length > 0) return yield* new InstallFailed({ message: report.summary })
    yield* Console.log(report.summary)
  }).pipe(Effect.catchTag("InstallClusterError", (e) => new InstallFailed({ message: e.message })))

export const runVerifyInstall = (args: VerifyInstallArgs) =>
  Effect.gen(function* () {
    const op = yield* readOperator(args)
    const cluster = yield* installCluster(args.global)
    yield* verifyInstalled(cluster, op)
  })
