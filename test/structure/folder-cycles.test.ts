/**
 * The source tree's shape, as docs/architecture.md states it: `src/services` (contracts and pure
 * logic) imports nothing above it, `src/layers` imports only services, and the wiring lives in
 * `src/programs/<binary>`. Within a tier, no two subsystem folders may depend on each other through
 * any chain of imports: a knot of folders cannot be read, tested or moved one at a time. Imports are
 * read with the TypeScript compiler's own pre-processor, type-only imports included (they knot the
 * folders for a reader just as much).
 */
import fs from "node:fs"
import path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const SRC = path.resolve(__dirname, "../../src")
const TIERS = ["services", "layers", "programs"] as const
type Tier = (typeof TIERS)[number]
/** Which tiers a tier may import. */
const MAY_IMPORT: Record<Tier, ReadonlyArray<Tier>> = {
  services: ["services"],
  layers: ["services", "layers"],
  programs: ["services", "layers", "programs"],
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** `services/xds` for src/services/xds/…; a file directly under a tier is its own unit. */
const unitOf = (file: string): string | undefined => {
  const parts = path.relative(SRC, file).split(path.sep)
  if (parts.length < 2 || !(TIERS as ReadonlyArray<string>).includes(parts[0] ?? "")) return undefined
  return `${parts[0]}/${(parts[1] ?? "").replace(/\.ts$/, "")}`
}

interface Edge {
  readonly from: string
  readonly to: string
}

const importEdges = (): ReadonlyArray<Edge> =>
  sourceFiles(SRC).flatMap((file) =>
    ts
      .preProcessFile(fs.readFileSync(file, "utf8"), true, true)
      .importedFiles.filter((ref) => ref.fileName.startsWith("."))
      .map((ref) => ({ from: file, to: path.resolve(path.dirname(file), ref.fileName).replace(/\.js$/, ".ts") })),
  )

/** Tarjan's strongly connected components of more than one unit. */
const knots = (graph: ReadonlyMap<string, ReadonlySet<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node) ?? 0)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0))
    }
    if (low.get(node) !== index.get(node)) return
    const component: Array<string> = []
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member)
      component.push(member)
      if (member === node) break
    }
    if (component.length > 1) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

describe("source tree structure", () => {
  const edges = importEdges()
  const rel = (file: string) => path.relative(SRC, file)

  it("has no import from a lower tier to a higher one", () => {
    const upward = edges.filter(({ from, to }) => {
      const [fromTier] = rel(from).split(path.sep) as [Tier]
      const [toTier] = rel(to).split(path.sep) as [Tier]
      return TIERS.includes(toTier) && TIERS.includes(fromTier) && !MAY_IMPORT[fromTier].includes(toTier)
    })
    expect(upward.map(({ from, to }) => `${rel(from)} -> ${rel(to)}`)).toEqual([])
  })

  it("has no cycle between subsystem folders", () => {
    const graph = new Map<string, Set<string>>()
    const example = new Map<string, string>()
    for (const { from, to } of edges) {
      const a = unitOf(from)
      const b = unitOf(to)
      if (a === undefined || b === undefined || a === b) continue
      graph.set(a, (graph.get(a) ?? new Set()).add(b))
      if (!example.has(`${a} ${b}`)) example.set(`${a} ${b}`, `${rel(from)} -> ${rel(to)}`)
    }
    const described = knots(graph).map((knot) =>
      knot.flatMap((a) => knot.flatMap((b) => (graph.get(a)?.has(b) ? [example.get(`${a} ${b}`)] : []))),
    )
    expect(described).toEqual([])
  })

  it("sees the whole tree (the test would pass vacuously on an empty import list)", () => {
    expect(edges.length).toBeGreaterThan(1000)
  })
})
