/**
 * How far the V8 heap may grow past what survived its last major collection: the Node.js
 * counterpart of the reference's Go settings (GOGC, and GOMEMLIMIT set from the container's
 * memory limit).
 *
 * Why: on a machine with gigabytes of memory V8 lets the old generation grow up to about four
 * times what survived before it collects again. A daemon whose live heap is 120 MB under a flood
 * of requests therefore sat at 300+ MB of heap, and 680 MB of RSS, most of it garbage (issue 34).
 * Go's default lets the heap double (GOGC=100). V8's `--heap-growing-percent` is that same
 * factor and is read at each collection, so it can be set (and changed) while the process runs.
 *
 * Near a memory limit the factor drops to `PRESSURE_GROWTH_PERCENT` (V8 then starts its
 * incremental, concurrent marking sooner), as Go collects more often near GOMEMLIMIT, and goes
 * back once RSS is below the limit by a margin, so that it does not flap on every sample.
 */
import { Data, Either } from "effect"

/** A memory setting that cannot be used; the daemon refuses to start, naming it. */
export class MemorySettingError extends Data.TaggedError("MemorySettingError")<{ readonly message: string }> {}

/** The factor used while RSS is over the soft limit. */
export const PRESSURE_GROWTH_PERCENT = 10
/** RSS must fall this far below the limit (a fraction of it) before the configured factor returns. */
export const RELEASE_MARGIN = 0.1
/** The share of a cgroup's memory limit taken as the soft limit when none is set (as automemlimit does). */
export const CGROUP_LIMIT_SHARE = 0.9

const UNITS: Readonly<Record<string, number>> = {
  "": 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
}

/**
 * A memory size as the orchestrator writes one (`512Mi`, `1G`, `536870912`; what a
 * `resourceFieldRef` to `limits.memory` puts in an env var), in bytes.
 */
export const parseMemoryQuantity = (text: string): Either.Either<number, string> => {
  const match = /^(\d+(?:\.\d+)?)([kKMGT]i?)?$/.exec(text.trim())
  const unit = match === null ? undefined : UNITS[match[2] ?? ""]
  if (match === null || unit === undefined)
    return Either.left(`"${text.slice(0, 40)}" is not a memory size (bytes, or a number with Ki, Mi, Gi, K, M or G)`)
  return Either.right(Math.floor(Number(match[1]) * unit))
}

/**
 * The limit of the cgroup this process runs in, from `memory.max` (cgroup v2) or
 * `memory.limit_in_bytes` (v1); undefined when unlimited (`max`, or v1's page-rounded
 * 2^63-ish "no limit") or unreadable.
 */
export const cgroupLimitBytes = (text: string | undefined): number | undefined => {
  const value = text?.trim()
  if (value === undefined || value === "" || value === "max" || !/^\d+$/.test(value)) return undefined
  const bytes = Number(value)
  // cgroup v1 writes "no limit" as the largest page-aligned 64-bit value.
  return bytes > 0 && bytes < 2 ** 60 ? bytes : undefined
}

export interface SoftLimitInputs {
  /** MESH_MEMORY_LIMIT as set: "" = from the cgroup, "0" = none. */
  readonly setting: string
  /** The cgroup's limit, if it has one. */
  readonly cgroupBytes: number | undefined
}

/** The soft limit in bytes, or undefined for none; where it came from, for the start-up log line. */
export const resolveSoftLimit = (
  inputs: SoftLimitInputs,
): Either.Either<{ readonly bytes: number | undefined; readonly source: string }, string> => {
  if (inputs.setting.trim() === "")
    return Either.right(
      inputs.cgroupBytes === undefined
        ? { bytes: undefined, source: "none (no MESH_MEMORY_LIMIT and no cgroup memory limit)" }
        : {
            bytes: Math.floor(inputs.cgroupBytes * CGROUP_LIMIT_SHARE),
            source: `${CGROUP_LIMIT_SHARE * 100}% of the cgroup's memory limit`,
          },
    )
  return Either.map(parseMemoryQuantity(inputs.setting), (bytes) =>
    bytes === 0 ? { bytes: undefined, source: "none (MESH_MEMORY_LIMIT=0)" } : { bytes, source: "MESH_MEMORY_LIMIT" },
  )
}

export interface GrowthInputs {
  readonly rssBytes: number
  readonly softLimitBytes: number | undefined
  /** MESH_HEAP_GROWTH_PERCENT. */
  readonly configuredPercent: number
  /** The factor in force now. */
  readonly currentPercent: number
}

/** The factor to use after this sample of RSS. */
export const nextGrowthPercent = (inputs: GrowthInputs): number => {
  const { rssBytes, softLimitBytes, configuredPercent, currentPercent } = inputs
  // A configured factor already at or below the pressure one (or V8's own, 0) is never raised.
  const pressure =
    configuredPercent === 0 ? PRESSURE_GROWTH_PERCENT : Math.min(configuredPercent, PRESSURE_GROWTH_PERCENT)
  if (softLimitBytes === undefined) return configuredPercent
  if (rssBytes > softLimitBytes) return pressure
  if (currentPercent === pressure && rssBytes > softLimitBytes * (1 - RELEASE_MARGIN)) return pressure
  return configuredPercent
}
