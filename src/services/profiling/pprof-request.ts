/**
 * What a `/debug/pprof/` request asks for (spec part 1 §4.1: profiling at `<host:port>/debug/pprof`
 * with `--profile`; part 2 §4.1: the agent's with `--profiling`). The reference serves Go's
 * pprof; a Node process has V8's profiles instead, in the formats the usual tools open:
 *   /debug/pprof/                 the index (HTML)
 *   /debug/pprof/profile?seconds=N a CPU profile over N seconds (V8 `.cpuprofile` JSON: Chrome
 *                                 DevTools, speedscope, VS Code, `node --cpu-prof` viewers)
 *   /debug/pprof/heap             a heap snapshot (V8 `.heapsnapshot`: DevTools' Memory tab)
 * pprof's protobuf is not served: no maintained npm package converts V8's profiles to it
 * (`pprof` runs its own native profiler, `pprof-format` only encodes).
 */

/** Go's default for `?seconds`. */
export const PPROF_DEFAULT_SECONDS = 30
/**
 * The longest CPU profile a caller may ask for: one profile runs at a time, so a longer one
 * would keep every other caller waiting; five minutes covers any start-up or push storm.
 */
export const PPROF_MAX_SECONDS = 300

export type PprofRequest =
  | { readonly _tag: "Index" }
  | { readonly _tag: "Cpu"; readonly seconds: number }
  | { readonly _tag: "Heap" }
  /** A path this process does not serve (Go's goroutine, block, mutex, ...). */
  | { readonly _tag: "Unknown"; readonly name: string }
  /** A request that names a profile but asks for it wrongly (a bad `seconds`). */
  | { readonly _tag: "Invalid"; readonly message: string }

/** `name` is the path after `/debug/pprof/` (empty for the index). */
export const parsePprofRequest = (name: string, query: URLSearchParams): PprofRequest => {
  switch (name) {
    case "":
      return { _tag: "Index" }
    case "heap":
      return { _tag: "Heap" }
    case "profile": {
      const text = query.get("seconds") ?? ""
      if (text === "") return { _tag: "Cpu", seconds: PPROF_DEFAULT_SECONDS }
      const seconds = Number(text)
      if (!/^\d+$/.test(text) || seconds < 1 || seconds > PPROF_MAX_SECONDS) {
        return {
          _tag: "Invalid",
          message: `seconds must be a whole number from 1 to ${PPROF_MAX_SECONDS}, got "${text}"`,
        }
      }
      return { _tag: "Cpu", seconds }
    }
    default:
      return { _tag: "Unknown", name }
  }
}

/** The profiles the index lists, with what each is. */
export const PPROF_PROFILES: ReadonlyArray<{ readonly path: string; readonly name: string; readonly about: string }> = [
  {
    path: `profile?seconds=${PPROF_DEFAULT_SECONDS}`,
    name: "profile",
    about: `CPU profile over ?seconds=N (default ${PPROF_DEFAULT_SECONDS}, at most ${PPROF_MAX_SECONDS}), as a V8 .cpuprofile (JSON): open it in Chrome DevTools, VS Code or speedscope. One at a time.`,
  },
  {
    path: "heap",
    name: "heap",
    about:
      "Heap snapshot, as a V8 .heapsnapshot (JSON): open it in Chrome DevTools' Memory tab. The process pauses while it is taken. One at a time.",
  },
]

const escapeHtml = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

/** The index page; links are relative, so it works under any prefix that ends in `/`. */
export const pprofIndexHtml = (title: string): string =>
  `<html><head><title>${escapeHtml(title)} /debug/pprof/</title></head><body><h1>/debug/pprof/</h1><table>${PPROF_PROFILES.map(
    (p) => `<tr><td><a href="${p.path}">${p.name}</a></td><td>${escapeHtml(p.about)}</td></tr>`,
  ).join("")}</table></body></html>\n`
