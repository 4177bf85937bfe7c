/**
 * How meshctl reaches the orchestrator: the kubeconfig of `--orchconfig`/`-c`, else the first file
 * of `$KUBECONFIG`, else `~/.kube/config`; the context of `--context`; `--as`, `--as-group` and
 * `--as-uid` as impersonation; `--orchclient-timeout` per request. Commands that need a cluster
 * build their client here, so every command names the same source in its errors. Load it lazily:
 * it brings in the orchestrator client library.
 */
import { existsSync } from "node:fs"
import { Data, Duration, Effect, type Scope } from "effect"
import { makeOrchestratorClient } from "../../layers/orchestrator/client.js"
import type { MeshctlEnv } from "../../services/config/meshctl-env.js"
import type { OrchestratorClientShape } from "../../services/orchestrator/client.js"
import type { GlobalOptions } from "./global-options.js"
import { kubeconfigSource } from "./orchestrator-source.js"

/** No orchestrator configuration could be found or used. */
export class OrchestratorUnavailable extends Data.TaggedError("OrchestratorUnavailable")<{
  readonly message: string
}> {}

/** A client for the cluster the global flags name, closed with the scope. */
export const orchestratorClient = (
  global: GlobalOptions,
): Effect.Effect<OrchestratorClientShape, OrchestratorUnavailable, Scope.Scope | MeshctlEnv> =>
  Effect.gen(function* () {
    const source = yield* kubeconfigSource(global)
    if (source === undefined) {
      return yield* new OrchestratorUnavailable({
        message:
          "no orchestrator configuration: --orchconfig not given, $KUBECONFIG not set and ~/.kube/config missing",
      })
    }
    if (!existsSync(source.path)) {
      return yield* new OrchestratorUnavailable({
        message: `the orchestrator configuration ${source.path} (from ${source.from}) does not exist`,
      })
    }
    return yield* makeOrchestratorClient({
      source: { _tag: "file", path: source.path, ...(global.context !== "" ? { context: global.context } : {}) },
      clusterId: global.context === "" ? "meshctl" : global.context,
      qps: 0,
      burst: 0,
      requestTimeoutMillis: Duration.toMillis(global.orchclientTimeout),
      impersonate: { user: global.as, groups: global.asGroup, uid: global.asUid },
    }).pipe(Effect.mapError((e) => new OrchestratorUnavailable({ message: e.message })))
  })
