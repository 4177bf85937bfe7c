// Builds the binaries (the four commands and the mesh-cni plugin) and the TypeScript scripts into dist/ with esbuild.
// Why a bundle: start-up of `version` and `--help` must stay close to a bare `node` start;
// one pre-bundled file per binary loads far faster than hundreds of ESM modules, and
// heavy subsystems (gRPC, the orchestrator client) stay external and load only when a
// command that needs them runs.
import { execFileSync, execSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import { lazyUndici } from "./build-lazy-undici.mjs"
import { warmDiscoveryCodeCache } from "./build-warm-discovery.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))

const gitRevision = (() => {
  try {
    return execSync("git rev-parse HEAD", { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim()
  } catch {
    return "unknown"
  }
})()

// Effect and its CLI are bundled (they are needed by every command); everything else
// stays a runtime import from node_modules.
const bundled = (name) => name === "effect" || name.startsWith("@effect/") || name === "yaml"
const external = Object.keys(pkg.dependencies).filter((name) => !bundled(name))
external.push(...external.map((name) => `${name}/*`))

const scriptEntries = readdirSync(join(root, "scripts"))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => join(root, "scripts", file))

// Build into a private directory, then move each file into dist/ with an atomic rename: several
// test runs may build while others execute dist/, and chunk names are content hashes, so a
// running process never sees a half-written or missing file.
const staging = join("dist", `.staging-${process.pid}`)

// V8 accepts a code cache for any source of the same length, and rebuilds often keep the
// length (only the stamped revision and time change): each build gets an id, and its cache
// files are named after it.
const buildId = randomUUID()
const define = {
  __MESH_VERSION__: JSON.stringify(pkg.version),
  __MESH_GIT_REVISION__: JSON.stringify(gitRevision),
  __MESH_BUILD_TIME__: JSON.stringify(new Date().toISOString()),
}
const common = {
  absWorkingDir: root,
  plugins: [lazyUndici(root)],
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: "linked",
  external,
  define,
  logLevel: "warning",
}

const binaries = ["mesh-discovery", "mesh-agent", "install-cni", "meshctl", "mesh-cni"]
await Promise.all([
  // One CommonJS file per binary, started through V8's code cache by bin/launch.cjs. What a
  // command does not run (the daemons, reached by dynamic import) is bundled but evaluated lazily.
  ...binaries.map((name) =>
    esbuild.build({
      ...common,
      entryPoints: [`src/programs/${name}/main.ts`],
      format: "cjs",
      outfile: join(staging, `${name}.cjs`),
      // Modules that find files next to themselves use import.meta.url; in CommonJS that is the bundle's URL.
      define: { ...define, "import.meta.url": "__meshImportMetaUrl" },
      // The first line names this build: bin/launch.cjs only uses a code cache made for it.
      banner: {
        js: `/*mesh-build:${buildId}*/\nconst __meshImportMetaUrl=require("node:url").pathToFileURL(__filename).href;`,
      },
    }),
  ),
  // Scripts (benchmarks, generators) are plain ES modules.
  esbuild.build({
    ...common,
    entryPoints: scriptEntries.map((file) => ({ in: file, out: file.split("/").pop().replace(/\.ts$/, "") })),
    outdir: join(staging, "scripts"),
    outExtension: { ".js": ".mjs" },
    format: "esm",
    splitting: true,
    // Bundled CommonJS dependencies call require(); ESM output needs one.
    banner: {
      js: "import{createRequire as __meshRequire}from'node:module';const require=__meshRequire(import.meta.url);",
    },
  }),
])

// The xDS protos' parsed Root, read at start by the binaries instead of the `.proto` files
// (src/layers/xds/proto-root.ts): written into the staging directory, so it is published with
// the bundles.
execFileSync(process.execPath, [
  join(root, staging, "scripts", "gen-xds-descriptor.mjs"),
  join(root, staging, "xds-protos.json"),
])

const publish = (from, to) => {
  mkdirSync(to, { recursive: true })
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.isDirectory()) publish(join(from, entry.name), join(to, entry.name))
    else renameSync(join(from, entry.name), join(to, entry.name))
  }
}
publish(join(root, staging), join(root, "dist"))
rmSync(join(root, staging), { recursive: true, force: true })

// Warm each binary's code cache with a help run (compiles the command tree and the CLI).
for (const name of binaries) {
  execFileSync(process.execPath, [join(root, "bin", `${name}.cjs`), "--help"], {
    env: { ...process.env, MESH_WRITE_CODE_CACHE: "1" },
    stdio: "ignore",
  })
}
// mesh-discovery's cache also holds what a start of the server compiles.
await warmDiscoveryCodeCache(root)
