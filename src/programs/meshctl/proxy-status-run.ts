/**
 * What `meshctl proxy-status` does once its flags are read (loaded lazily): ask every
 * control-plane instance for its sync status (`/debug/syncz`, see control-plane-access.ts for
 * why over HTTP), and print one row per connected proxy, or the JSON of the same.
 */
import { Console, Effect } from "effect"
import { ControlPlaneUnavailable, controlPlaneJson, controlPlaneTargets, httpBase } from "./control-plane-access.js"
import { controlPlaneSelector } from "./control-plane-selector.js"
import type { ProxyStatusArgs } from "./proxy-status-command.js"
import { matchesProxy, proxyStatuses, proxyStatusTable, type SyncRow } from "./proxy-status-table.js"

export const runProxyStatus = (args: ProxyStatusArgs) =>
  Effect.gen(function* () {
    if (args.file !== "")
      return yield* new ControlPlaneUnavailable({
        message: "--file (comparing a saved config dump with the control plane) is not supported yet",
      })
    const targets = yield* controlPlaneTargets({
      global: args.global,
      xdsAddress: args.xdsAddress,
      label: controlPlaneSelector(args.xdsLabel, args.revision),
    })
    const perControlPlane = yield* Effect.forEach(
      targets,
      (target) =>
        Effect.map(
          controlPlaneJson<ReadonlyArray<SyncRow>>(
            `${httpBase(target.host, target.monitoringPort)}/debug/syncz`,
            args.timeout,
          ),
          (rows) => ({ meshd: target.name, rows }),
        ),
      { concurrency: "unbounded" },
    )
    let statuses = proxyStatuses(perControlPlane)
    if (args.proxy !== "") {
      statuses = statuses.filter((s) => matchesProxy(s, args.proxy, args.global.namespace))
      if (statuses.length === 0)
        return yield* new ControlPlaneUnavailable({
          message: `proxy ${args.proxy} is not connected to ${targets.map((t) => t.name).join(", ")}`,
        })
    }
    yield* Console.log(
      args.output === "json" ? JSON.stringify(statuses, null, 2) : proxyStatusTable(statuses, args.verbosity),
    )
  }).pipe(Effect.scoped)
