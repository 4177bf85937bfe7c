/**
 * The remote half of `meshctl version` (loaded lazily): every control-plane instance's build
 * (its debug page `version`) and the versions its connected proxies announced (MESH_VERSION in
 * their node metadata, as the page `syncz` reports it), asked as control-plane-access.ts says.
 */
import { Effect } from "effect"
import type { BuildInfo } from "../../services/build-info.js"
import type { MeshctlEnv } from "../../services/config/meshctl-env.js"
import {
  askJson,
  type ControlPlaneSelection,
  type ControlPlaneUnavailable,
  debugTargets,
  type XdsFlags,
} from "./control-plane-access.js"
import type { SyncRow } from "./diagnostics/proxy-status-table.js"

export interface RemoteVersions {
  readonly controlPlanes: ReadonlyArray<{ readonly name: string; readonly info: BuildInfo }>
  /** One entry per connected proxy (connection): its node id and announced version ("" if none). */
  readonly dataPlane: ReadonlyArray<{ readonly id: string; readonly version: string }>
}

export const remoteVersions = (
  selection: ControlPlaneSelection,
  flags: XdsFlags,
): Effect.Effect<RemoteVersions, ControlPlaneUnavailable, MeshctlEnv> =>
  Effect.gen(function* () {
    const targets = yield* debugTargets(selection, flags)
    const answers = yield* Effect.forEach(
      targets,
      (target) =>
        Effect.all({
          info: askJson<BuildInfo>(target, "version"),
          rows: askJson<ReadonlyArray<SyncRow>>(target, "syncz"),
        }).pipe(Effect.map(({ info, rows }) => ({ name: target.name, info, rows }))),
      { concurrency: "unbounded" },
    )
    const dataPlane: Array<{ id: string; version: string }> = []
    for (const { rows } of answers) {
      const seen = new Set<string>()
      for (const row of rows) {
        if (seen.has(row.connectionId)) continue
        seen.add(row.connectionId)
        dataPlane.push({ id: row.proxy, version: row.proxyVersion ?? "" })
      }
    }
    return { controlPlanes: answers.map(({ name, info }) => ({ name, info })), dataPlane }
  }).pipe(Effect.scoped)

/** `1.2.3 (2 proxies), 1.2.4 (1 proxies)`, most common first; `none` without proxies. */
export const dataPlaneSummary = (dataPlane: RemoteVersions["dataPlane"]): string => {
  if (dataPlane.length === 0) return "none"
  const counts = new Map<string, number>()
  for (const p of dataPlane) {
    const version = p.version === "" ? "unknown" : p.version
    counts.set(version, (counts.get(version) ?? 0) + 1)
  }
  return [...counts.entries()]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([version, n]) => `${version} (${n} proxies)`)
    .join(", ")
}
