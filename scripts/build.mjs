// Builds the four binaries (and the TypeScript scripts) into dist/ with esbuild.
// Why a bundle: start-up of `version` and `--help` must stay close to a bare `node` start;
// one pre-bundled file per binary loads far faster than hundreds of ESM modules, and
// heavy subsystems (gRPC, the orchestrator client) stay external and load only when a
// command that needs them runs.
import { execSync } from "node:child_process"
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"

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

rmSync(join(root, "dist"), { recursive: true, force: true })

await esbuild.build({
  absWorkingDir: root,
  entryPoints: [
    { in: "src/programs/mesh-discovery/main.ts", out: "mesh-discovery" },
    { in: "src/programs/mesh-agent/main.ts", out: "mesh-agent" },
    { in: "src/programs/install-cni/main.ts", out: "install-cni" },
    { in: "src/programs/meshctl/main.ts", out: "meshctl" },
    ...scriptEntries.map((file) => ({ in: file, out: `scripts/${file.split("/").pop().replace(/\.ts$/, "")}` })),
  ],
  outdir: "dist",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  keepNames: true,
  sourcemap: "linked",
  external,
  // Bundled CommonJS dependencies call require(); ESM output needs one.
  banner: {
    js: "import{createRequire as __meshRequire}from'node:module';const require=__meshRequire(import.meta.url);",
  },
  define: {
    __MESH_VERSION__: JSON.stringify(pkg.version),
    __MESH_GIT_REVISION__: JSON.stringify(gitRevision),
    __MESH_BUILD_TIME__: JSON.stringify(new Date().toISOString()),
  },
  logLevel: "warning",
})
