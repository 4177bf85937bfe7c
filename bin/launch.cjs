"use strict"
// Starts one of the bundled binaries (dist/<name>.cjs) through V8's code cache.
// Why: a CLI's start-up is dominated by parsing and compiling its bundle; with the cache that
// the build writes beside it (dist/<name>.cjs.cache), V8 skips that work. A cache from another
// Node.js version is rejected by V8 and the bundle compiles as usual. `MESH_WRITE_CODE_CACHE=1`
// (set by the build) writes the cache after a run, including the functions the run compiled.
const fs = require("node:fs")
const path = require("node:path")
const vm = require("node:vm")
const Module = require("node:module")

exports.launch = (name) => {
  const file = path.join(__dirname, "..", "dist", `${name}.cjs`)
  const cacheFile = `${file}.cache`
  let cachedData
  try {
    cachedData = fs.readFileSync(cacheFile)
  } catch {
    cachedData = undefined
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData })
  const bundle = new Module(file, module)
  bundle.filename = file
  bundle.paths = Module._nodeModulePaths(path.dirname(file))
  if (process.env.MESH_WRITE_CODE_CACHE === "1") {
    process.once("exit", () => {
      const temporary = `${cacheFile}.${process.pid}`
      fs.writeFileSync(temporary, script.createCachedData())
      fs.renameSync(temporary, cacheFile)
    })
  }
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file))
}
