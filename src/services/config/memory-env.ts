/**
 * The memory settings every daemon reads (mesh-discovery, mesh-agent, install-cni: they are in
 * the control-plane tuning group through their `MESH_` prefix). See services/memory/heap-growth.ts.
 */
import { type EnvTable, env } from "./env.js"

export const memoryEnv = {
  MESH_HEAP_GROWTH_PERCENT: env.int(
    100,
    "How far the JavaScript heap may grow past what survived its last major collection before the next one, in percent (as Go's GOGC, whose default is also 100); 0 leaves V8's own factor, up to 300% on large machines",
  ),
  MESH_MEMORY_LIMIT: env.string(
    "",
    "Soft memory limit (bytes, or 512Mi, 1Gi, ...; as GOMEMLIMIT): above it the heap may grow only 10% between collections until RSS is 10% below it again; empty = 90% of the cgroup's memory limit if there is one, 0 = none",
  ),
} as const satisfies EnvTable
