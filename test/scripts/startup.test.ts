/**
 * Cheap start-up: `version` and `--help` must not load gRPC, the orchestrator client, the
 * metrics library or the X.509 library; those load only with the commands that use them.
 * Checked at run time: a preloaded probe lists every package module the process required.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "vitest"
import { binary } from "../support/processes.js"

const probe = join(mkdtempSync(join(tmpdir(), "mesh-startup-")), "probe.cjs")
writeFileSync(
  probe,
  `process.once("exit", () => process.stderr.write("LOADED " + JSON.stringify(Object.keys(require.cache)) + "\\n"))\n`,
)

const loadedBy = (name: string, args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const { stderr } = spawnSync(process.execPath, ["--require", probe, binary(name), ...args], { encoding: "utf8" })
  const line = stderr.split("\n").find((text) => text.startsWith("LOADED "))
  return JSON.parse(line!.slice("LOADED ".length)) as ReadonlyArray<string>
}

const heavy = /node_modules\/(@grpc|@kubernetes|prom-client|@peculiar|jose)\//

it.each([
  ["mesh-discovery", ["version"]],
  ["mesh-agent", ["version"]],
  ["install-cni", ["version"]],
  ["meshctl", ["--help"]],
  ["meshctl", ["version", "--remote=false"]],
] as const)("%s %s loads no heavy module", (name, args) => {
  const loaded = loadedBy(name, args)
  expect(loaded.some((file) => file.endsWith(`${name}.cjs`) || file.endsWith("launch.cjs"))).toBe(true)
  expect(loaded.filter((file) => heavy.test(file))).toEqual([])
})
