/**
 * `meshctl remote-clusters`: the remote clusters each control-plane instance follows (spec part
 * 3 §4.2, §4.3). Each meshd pod (label `app=meshd`, narrowed by `--revision`) is asked for
 * `/debug/clusterz` on its monitoring port, as control-plane-access.ts describes.
 */
import { Command, Options } from "@effect/cli"
import { Console, Duration, Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { textFlag } from "../../shared/options.js"
import { DEFAULT_CONTROL_PLANE_LABEL } from "../control-plane-options.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import { globalOptions } from "../global-options.js"

const options = {
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
  global: globalOptions,
}

export const remoteClustersCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("remote-clusters", { ...options, logging }, (args) =>
    Effect.gen(function* () {
      const [access, { remoteClustersTable }] = yield* Effect.promise(() =>
        Promise.all([import("../control-plane-access.js"), import("../../../services/debug/clusterz.js")]),
      )
      const targets = yield* access.controlPlaneTargets({
        global: args.global,
        xdsAddress: "",
        label: controlPlaneSelector(DEFAULT_CONTROL_PLANE_LABEL, args.revision),
      })
      const perControlPlane = yield* Effect.forEach(
        targets,
        (target) =>
          Effect.map(
            access.controlPlaneJson<
              ReadonlyArray<{ ID: string; SecretName: string; SyncStatus: "synced" | "syncing" }>
            >(`${access.httpBase(target.host, target.monitoringPort)}/debug/clusterz`, Duration.seconds(30)),
            (clusters) => ({ meshd: target.name, clusters }),
          ),
        { concurrency: "unbounded" },
      )
      yield* Console.log(remoteClustersTable(perControlPlane).trimEnd())
    }).pipe(Effect.scoped),
  ).pipe(Command.withDescription("Lists the remote clusters each control-plane instance is connected to"))
