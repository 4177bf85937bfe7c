"use strict"
// Starts one of the bundled binaries (dist/<name>.cjs) through V8's code cache.
// Why: a CLI's start-up is dominated by parsing and compiling its bundle; with the cache that
// the build writes beside it, V8 skips that work. V8 itself only checks that a cache was made
// for a source of the same length and the same Node.js version, so the cache file is named
// after the build id on the bundle's first line (dist/<name>.cjs.<id>.cache): a bundle never
// meets another build's cache. `MESH_WRITE_CODE_CACHE=1` (set by the build) writes the cache
// after a run, including the functions the run compiled, and removes older builds' caches; the
// build makes mesh-discovery's cache with a start on the example mesh (scripts/build-warm-discovery.mjs).
const fs = require("node:fs")
const path = require("node:path")
const vm = require("node:vm")
const Module = require("node:module")

exports.launch = (name) => {
  const file = path.join(__dirname, "..", "dist", `${name}.cjs`)
  const source = fs.readFileSync(file, "utf8")
  const buildId = /^\/\*mesh-build:([\w-]+)\*\//.exec(source)?.[1]
  const cacheFile = buildId === undefined ? undefined : `${file}.${buildId}.cache`
  let cachedData
  try {
    cachedData = cacheFile === undefined ? undefined : fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData })
  const bundle = new Module(file, module)
  bundle.filename = file
  bundle.paths = Module._nodeModulePaths(path.dirname(file))
  if (process.env.MESH_WRITE_CODE_CACHE === "1" && cacheFile !== undefined) {
    // V8 rejects a cache made under other flags than the start reading it begins with, and a run
    // may change flags (mesh-discovery sets --heap-growing-percent): a run that writes the cache
    // leaves V8's flags alone.
    require("node:v8").setFlagsFromString = () => undefined
    process.once("exit", () => {
      const temporary = `${cacheFile}.${process.pid}`
      fs.writeFileSync(temporary, script.createCachedData())
      fs.renameSync(temporary, cacheFile)
      const dir = path.dirname(file)
      for (const entry of fs.readdirSync(dir)) {
        if (entry.startsWith(`${name}.cjs.`) && entry.endsWith(".cache") && path.join(dir, entry) !== cacheFile) {
          fs.rmSync(path.join(dir, entry), { force: true })
        }
      }
    })
  }
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file))
}
