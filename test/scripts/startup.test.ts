/**
 * Cheap start-up: what `version` and `--help` load statically must not include gRPC, the
 * orchestrator client or the metrics library; those load only with the commands that use them.
 */
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

/** Every bare module specifier reachable through static imports from a dist entry. */
const staticImports = (entry: string): Set<string> => {
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const code = readFileSync(file, "utf8")
    for (const match of code.matchAll(/(?:^|[;\s}])import\s*(?:[\w*{}\s,$]+from\s*)?["']([^"']+)["']/g)) {
      const specifier = match[1]!
      if (specifier.startsWith(".")) visit(join(dirname(file), specifier))
      else packages.add(specifier)
    }
  }
  visit(entry)
  return packages
}

it.each(["mesh-discovery", "mesh-agent", "install-cni", "meshctl"])("%s loads no heavy module at start-up", (name) => {
  const loaded = [...staticImports(join(ROOT, "dist", name, "main.mjs"))]
  expect(loaded.filter((spec) => /^(@grpc\/|@kubernetes\/|prom-client|@peculiar\/)/.test(spec))).toEqual([])
})
