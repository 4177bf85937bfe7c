// An esbuild plugin for the binaries (scripts/build.mjs): undici becomes a stand-in that loads the
// real package at its first use. Why: @effect/platform-node's HTTP server module imports its HTTP
// client and so undici, whose evaluation cost mesh-discovery about 50 ms of CPU at every start
// (issue 38), and no binary uses that client. Should one use it, it still works: the stand-in
// offers what @effect/platform-node takes from undici (`Agent`, `getGlobalDispatcher`), each
// loading the real package, from node_modules, when called.
// test/scripts/build-lazy-undici.test.ts checks both.

/** What @effect/platform-node's Undici module re-exports from undici and its client uses. */
const standIn = [
  "let real",
  'const undici = () => (real ??= require("undici"))',
  "module.exports = {",
  "  Agent: function Agent(...args) { return new (undici().Agent)(...args) },",
  "  getGlobalDispatcher: () => undici().getGlobalDispatcher(),",
  "}",
].join("\n")

/** The plugin; `root` is where the stand-in's `require("undici")` is resolved from at build time. */
export const lazyUndici = (root) => ({
  name: "lazy-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, (args) =>
      args.namespace === "lazy-undici"
        ? { path: "undici", external: true }
        : { path: "undici", namespace: "lazy-undici" },
    )
    build.onLoad({ filter: /.*/, namespace: "lazy-undici" }, () => ({
      resolveDir: root,
      loader: "js",
      contents: standIn,
    }))
  },
})
