/**
 * The remote half of `meshctl version` (loaded lazily): every control-plane instance's build
 * (`/version` on its monitoring listener) and the versions its connected proxies announced
 * (MESH_VERSION in their node metadata, as `/debug/syncz` reports it).
 */
import { Duration, Effect } from "effect"
import type { BuildInfo } from "../../services/build-info.js"
import {
  type ControlPlaneSelection,
  type ControlPlaneUnavailable,
  controlPlaneJson,
  controlPlaneTargets,
  httpBase,
} from "./control-plane-access.js"
import type { SyncRow } from "./proxy-status-table.js"

export interface RemoteVersions {
  readonly controlPlanes: ReadonlyArray<{ readonly name: string; readonly info: BuildInfo }>
  /** One entry per connected proxy (connection): its node id and announced version ("" if none). */
  readonly dataPlane: ReadonlyArray<{ readonly id: string; readonly version: string }>
}

export const remoteVersions = (
  selection: ControlPlaneSelection,
  timeout: Duration.Duration = Duration.seconds(30),
): Effect.Effect<RemoteVersions, ControlPlaneUnavailable> =>
  Effect.gen(function* () {
    const targets = yield* controlPlaneTargets(selection)
    const answers = yield* Effect.forEach(
      targets,
      (target) => {
        const base = httpBase(target.host, target.monitoringPort)
        return Effect.all({
          info: controlPlaneJson<BuildInfo>(`${base}/version`, timeout),
          rows: controlPlaneJson<ReadonlyArray<SyncRow>>(`${base}/debug/syncz`, timeout),
        }).pipe(Effect.map(({ info, rows }) => ({ name: target.name, info, rows })))
      },
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
