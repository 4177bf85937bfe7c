/**
 * The binaries' undici stand-in (scripts/build-lazy-undici.mjs): the built bundles hold none of
 * undici's code, and @effect/platform-node's HTTP client, bundled the same way, still works: the
 * real undici is loaded at its first use and not before.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as esbuild from "esbuild"
import { afterAll, expect, it } from "vitest"
import { lazyUndici } from "../../scripts/build-lazy-undici.mjs"
import { ROOT } from "../support/processes.js"

const dir = mkdtempSync(join(tmpdir(), "lazy-undici-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

it.each(["mesh-discovery", "mesh-agent", "meshctl"])("%s's bundle holds none of undici's code", (name) => {
  // The test setup builds dist/ first. Error codes of undici's own source, not of the stand-in.
  const bundle = readFileSync(join(ROOT, "dist", `${name}.cjs`), "utf8")
  expect(bundle.includes("UND_ERR_")).toBe(false)
  expect(bundle.length).toBeGreaterThan(100_000)
})

it("platform-node's HTTP client works through the stand-in, which loads undici at its first use", async () => {
  const entry = join(dir, "entry.ts")
  writeFileSync(
    entry,
    [
      'import { NodeHttpClient } from "@effect/platform-node"',
      'import { Effect } from "effect"',
      'const loaded = () => Object.keys(require.cache).some((file) => file.includes("/node_modules/undici/"))',
      "const before = loaded()",
      "Effect.runPromise(Effect.scoped(NodeHttpClient.makeDispatcher)).then((agent) =>",
      "  console.log(JSON.stringify({ before, after: loaded(), agent: agent.constructor.name })))",
    ].join("\n"),
  )
  const outfile = join(dir, "out.cjs")
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    nodePaths: [join(ROOT, "node_modules")],
    plugins: [lazyUndici(ROOT)],
    logLevel: "warning",
  })
  expect(readFileSync(outfile, "utf8").includes("UND_ERR_")).toBe(false)
  // The binaries live in dist/, beside node_modules; this bundle is elsewhere, so it is told where that is.
  const run = spawnSync(process.execPath, [outfile], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NODE_PATH: join(ROOT, "node_modules") },
  })
  expect(run.stderr).toBe("")
  expect(JSON.parse(run.stdout)).toEqual({ before: false, after: true, agent: "Agent" })
})
