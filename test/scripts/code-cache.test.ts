/**
 * The code caches the build writes beside the bundles (bin/launch.cjs): V8 accepts each one for
 * its bundle, and mesh-discovery's was made by a start of the server (scripts/build-warm-discovery.mjs),
 * which changes V8's flags (a cache made after that would be rejected at every start, silently).
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

/** Compiles the bundle with its cache in a fresh node, as bin/launch.cjs does: whether V8 took it, and the cache's size. */
const probe = (name: string): { readonly rejected: boolean; readonly bytes: number } => {
  const file = join(ROOT, "dist", `${name}.cjs`)
  const id = /^\/\*mesh-build:([\w-]+)\*\//.exec(readFileSync(file, "utf8"))?.[1]
  const cache = join(ROOT, "dist", `${name}.cjs.${id}.cache`)
  const script = [
    'const fs = require("node:fs"), vm = require("node:vm"), Module = require("node:module")',
    `const cachedData = fs.readFileSync(${JSON.stringify(cache)})`,
    `const script = new vm.Script(Module.wrap(fs.readFileSync(${JSON.stringify(file)}, "utf8")), { filename: ${JSON.stringify(file)}, cachedData })`,
    "console.log(JSON.stringify({ rejected: script.cachedDataRejected, bytes: cachedData.length }))",
  ].join("\n")
  const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" })
  expect(run.stderr).toBe("")
  return JSON.parse(run.stdout) as { rejected: boolean; bytes: number }
}

it.each(["mesh-discovery", "mesh-agent", "install-cni", "meshctl", "mesh-cni"])(
  "V8 accepts %s's code cache (the test setup builds dist/ first)",
  (name) => {
    expect(probe(name).rejected).toBe(false)
  },
)

it("mesh-discovery's cache holds what a start of the server compiles, beyond the --help run", () => {
  // The help runs' caches of the other binaries are about 2 MB; a server start compiles about as much again.
  expect(probe("mesh-discovery").bytes).toBeGreaterThan(1.5 * probe("meshctl").bytes)
})
