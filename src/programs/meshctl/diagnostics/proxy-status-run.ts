import { Console, Effect, Either } from "effect"
import { type ConfigDump, parseConfigDump } from "../../../services/proxy-config/dump.js"
import { compareDumps, comparisonReport } from "../../../services/proxy-config/sync-diff.js"
import { askJson, ControlPlaneUnavailable, type DebugTarget, debugTargets } from "../control-plane-access.js"
import { controlPlaneSelector } from "../control-plane-selector.js"
import { MAX_CONFIG_DUMP_BYTES, readInputFile } from "../input-files.js"
import type { ProxyStatusArgs } from "./proxy-status-options.js"
import { matchesProxy, type ProxyStatus, proxyStatuses, proxyStatusTable, type SyncRow } from "./proxy-status-table.js"

/** The proxy admin port the per-proxy mode reads (proxy-status has no flag for it). */
const PROXY_ADMIN_PORT = 15000

const parsed = (what: string, text: string): Effect.Effect<ConfigDump, ControlPlaneUnavailable> => {
  const dump = parseConfigDump(text)
  return Either.isLeft(dump)
    ? Effect.fail(new ControlPlaneUnavailable({ message: `${what}: ${dump.left}` }))
    : Effect.succeed(dump.right)
}

const proxyDump = (args: ProxyStatusArgs, status: ProxyStatus) => {
  if (args.file !== "")
    return readInputFile(args.file, MAX_CONFIG_DUMP_BYTES).pipe(
      Effect.mapError((e) => new ControlPlaneUnavailable({ message: `--file ${e.message}` })),
      Effect.flatMap((text) => parsed(`--file ${args.file}`, text)),
    )
  return Effect.promise(() => import("./proxy-config-live.js")).pipe(
    Effect.flatMap((live) => live.fetchFromProxy(args.global, status.name, PROXY_ADMIN_PORT, "GET", "/config_dump")),
    Effect.mapError((e) => new ControlPlaneUnavailable({ message: e.message })),
    Effect.flatMap((text) => parsed(`config dump of ${status.name}`, text)),
  )
}

const compareWithControlPlane = (args: ProxyStatusArgs, status: ProxyStatus, target: DebugTarget) =>
  Effect.gen(function* () {
    const page = `config_dump?proxyID=${encodeURIComponent(status.proxy)}`
    const sent = yield* parsed(`${target.name} ${page}`, yield* target.ask(page))
    const held = yield* proxyDump(args, status)
    return comparisonReport(compareDumps(sent, held))
  })

export const runProxyStatus = (args: ProxyStatusArgs) =>
  Effect.gen(function* () {
    if (args.file !== "" && args.proxy === "")
      return yield* new ControlPlaneUnavailable({ message: "--file needs a proxy name to compare the dump with" })
    const targets = yield* debugTargets(
      { global: args.global, xdsAddress: args.xdsAddress, label: controlPlaneSelector(args.xdsLabel, args.revision) },
      args,
    )
    const perControlPlane = yield* Effect.forEach(
      targets,
      (target) =>
        Effect.map(askJson<ReadonlyArray<SyncRow>>(target, "syncz"), (rows) => ({ meshd: target.name, rows })),
      { concurrency: "unbounded" },
    )
    let statuses = proxyStatuses(perControlPlane)
    if (args.proxy !== "") {
      statuses = statuses.filter((s) => matchesProxy(s, args.proxy, args.global.namespace))
      if (statuses.length === 0)
        return yield* new ControlPlaneUnavailable({
          message: `proxy ${args.proxy} is not connected to ${targets.map((t) => t.name).join(", ")}`,
        })
      const status = statuses[0]!
      const target = targets.find((t) => t.name === status.meshd)
      if (args.output === "table" && target !== undefined)
        return yield* Console.log(yield* compareWithControlPlane(args, status, target))
    }
    yield* Console.log(
      args.output === "json" ? JSON.stringify(statuses, null, 2) : proxyStatusTable(statuses, args.verbosity),
    )
  }).pipe(Effect.scoped)
