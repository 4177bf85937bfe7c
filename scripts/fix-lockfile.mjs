// Adds lockfile entries for optional platform packages the registry does not serve.
// Why: this project's registry lacks some other-platform builds (e.g. @biomejs/cli-win32-x64,
// @rollup/rollup-darwin-arm64). `npm install` then leaves them out of package-lock.json, and
// `npm ci` refuses a lockfile that misses any optional dependency. An entry marked optional
// lets `npm ci` accept the lockfile and skip the package. Run after changing dependencies:
//   npm install && node scripts/fix-lockfile.mjs
import { readFileSync, writeFileSync } from "node:fs"

const file = new URL("../package-lock.json", import.meta.url)
const lock = JSON.parse(readFileSync(file, "utf8"))
const packages = lock.packages
let added = 0
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path === "" ? "" : `${path}/`}node_modules/${name}`
    if (packages[nested] !== undefined || packages[`node_modules/${name}`] !== undefined) continue
    packages[`node_modules/${name}`] = {
      version: range.replace(/^[\^~=]/, ""),
      optional: true,
      ...(entry.dev ? { dev: true } : {}),
    }
    added++
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`package-lock.json: ${added} optional entr${added === 1 ? "y" : "ies"} added`)
