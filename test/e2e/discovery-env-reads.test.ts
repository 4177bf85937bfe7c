/**
 * The built mesh-discovery reads each variable of its env table once per start (issue 38): the
 * whole table is parsed at start and every config Tag takes its slice from that parse. A
 * preloaded hook (test/fixtures/startup/env-reads.cjs) counts the lookups of each variable from
 * spawn to `/ready` and SIGTERM.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { discoveryEnv } from "../../src/services/config/discovery-env.js"
import { discoveryArgs, exampleMeshDir, untilReady } from "../support/discovery.js"
import { ROOT, startDaemon } from "../support/processes.js"

/**
 * Flags that fall back to a variable of the table when not given read it themselves, while the
 * command line is parsed (before the table): `--clusterID` (CLUSTER_ID), `--namespace` and
 * `--cniNamespace` (POD_NAMESPACE), `--keepaliveInterval` and `--keepaliveTimeout`
 * (GRPC_KEEPALIVE_*). Those lookups come on top of the table's one.
 */
const FLAG_FALLBACK_READS: Readonly<Record<string, number>> = {
  CLUSTER_ID: 1,
  POD_NAMESPACE: 2,
  GRPC_KEEPALIVE_INTERVAL: 1,
  GRPC_KEEPALIVE_TIMEOUT: 1,
}

describe("mesh-discovery environment reads", () => {
  it("looks up each variable of its table once from spawn to /ready and shutdown", async () => {
    const dir = exampleMeshDir("discovery-env-reads-")
    const out = join(dir, "env-reads.json")
    const daemon = startDaemon(
      "mesh-discovery",
      discoveryArgs(join(dir, "mesh")),
      {
        NODE_OPTIONS: `--require ${join(ROOT, "test/fixtures/startup/env-reads.cjs")}`,
        MESH_TEST_ENV_READS: out,
        // A set variable is asked for and then read: still one lookup.
        PILOT_DEBOUNCE_AFTER: "150ms",
      },
      dir,
    )
    let text = ""
    try {
      const http = (await daemon.waitFor(/http listening on ([\d.]+:\d+)/, 60_000))[1]!
      await untilReady(daemon, http)
      expect(await daemon.stop("SIGTERM")).toBe(0)
      text = readFileSync(out, "utf8")
    } finally {
      await daemon.stop("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
    const reads = JSON.parse(text) as { readonly has: Record<string, number>; readonly get: Record<string, number> }
    // Effect's ConfigProvider asks `name in process.env` and then reads it; a direct
    // `process.env.NAME` only reads. Either way, one lookup of a variable counts once.
    const lookups = (name: string) => Math.max(reads.has[name] ?? 0, reads.get[name] ?? 0)
    const wrong = Object.keys(discoveryEnv)
      .map((name) => [name, lookups(name), 1 + (FLAG_FALLBACK_READS[name] ?? 0)] as const)
      .filter(([, seen, expected]) => seen !== expected)
      .map(([name, seen, expected]) => `${name}: looked up ${seen} times, expected ${expected}`)
    expect(wrong).toEqual([])
  }, 120_000)
})
