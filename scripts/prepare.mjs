// npm's `prepare` step: patch TypeScript for the Effect language service and build dist/.
// Why a script: npm also runs `prepare` when `npx mesh-discovery` (or `npm exec`) installs this
// checkout into its cache to find the binary — then npm_command is "exec". A build at that
// moment would rewrite dist/ under a server already running from it and make the first npx
// command take as long as a build; when every binary is built already, it is skipped.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const binaries = ["mesh-discovery", "mesh-agent", "install-cni", "meshctl"]

if (process.env.npm_command === "exec" && binaries.every((name) => existsSync(join(root, "dist", `${name}.cjs`)))) {
  console.log("prepare: dist/ is already built; not rebuilding for npx (run `npm run build` to rebuild)")
  process.exit(0)
}
execFileSync("effect-language-service", ["patch"], { cwd: root, stdio: "inherit", shell: process.platform === "win32" })
execFileSync(process.execPath, [join(root, "scripts", "build.mjs")], { cwd: root, stdio: "inherit" })
