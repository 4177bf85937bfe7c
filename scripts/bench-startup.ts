/**
 * Start-up cost of the binaries against a bare `node -e 0`: median wall time over N runs of
 * each command, printed as JSON. Target (issue 2): `mesh-discovery version` within 3x of node.
 *   node dist/scripts/bench-startup.mjs [runs]
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"

const runs = Number(process.argv[2] ?? 21)
const root = join(import.meta.dirname, "..", "..")

const median = (values: Array<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const time = (args: ReadonlyArray<string>): number => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint()
    const result = spawnSync(process.execPath, args, { cwd: root, stdio: "ignore" })
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited with ${result.status}`)
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return Math.round(median(samples) * 10) / 10
}

const node = time(["-e", "0"])
const commands = {
  "mesh-discovery version": ["bin/mesh-discovery.cjs", "version"],
  "mesh-agent version": ["bin/mesh-agent.cjs", "version"],
  "install-cni version": ["bin/install-cni.cjs", "version"],
  "meshctl --help": ["bin/meshctl.cjs", "--help"],
  "meshctl version --remote=false": ["bin/meshctl.cjs", "version", "--remote=false"],
}
const results = Object.fromEntries(
  Object.entries(commands).map(([name, args]) => {
    const ms = time(args)
    return [name, { median_ms: ms, ratio_to_node: Math.round((ms / node) * 100) / 100 }]
  }),
)
const target = results["mesh-discovery version"]!.ratio_to_node
console.log(
  JSON.stringify(
    { runs, node_e_0_median_ms: node, commands: results, target_ratio: 3, target_met: target <= 3 },
    null,
    2,
  ),
)
