/**
 * The cluster the install commands write to: the kubeconfig the global flags name (see
 * orchestrator-source.ts) through the installer's client. Load lazily: it brings in the
 * orchestrator client library.
 */
import { existsSync } from "node:fs"
import { Effect } from "effect"
import { makeInstallCluster } from "../../../layers/install/cluster.js"
import type { GlobalOptions } from "../global-options.js"
import { kubeconfigSource } from "../orchestrator-source.js"
import { InstallFailed } from "./install-options.js"

export const installCluster = (global: GlobalOptions) =>
  Effect.gen(function* () {
    const source = yield* kubeconfigSource(global)
    if (source === undefined)
      return yield* new InstallFailed({
        message:
          "no orchestrator configuration: --orchconfig not given, $KUBECONFIG not set and ~/.kube/config missing",
      })
    if (!existsSync(source.path))
      return yield* new InstallFailed({
        message: `the orchestrator configuration ${source.path} (from ${source.from}) does not exist`,
      })
    return yield* makeInstallCluster({
      path: source.path,
      context: global.context,
      impersonate: { user: global.as, groups: global.asGroup, uid: global.asUid },
    }).pipe(Effect.mapError((e) => new InstallFailed({ message: e.message })))
  })
