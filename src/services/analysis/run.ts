/**
 * One analysis run: the chosen analyzers over a snapshot, plus the read-time messages, then
 * `--suppress`, the namespace scope and `--output-threshold`; sorted and de-duplicated.
 */
import type { Analyzer } from "./analyzer.js"
import { LEVEL_RANK, type Level } from "./message-types.js"
import { type Message, resourceName, type Snapshot } from "./snapshot.js"

export interface Suppression {
  readonly code: string
  /** `kind name.namespace` pattern with `*` wildcards. */
  readonly resource: RegExp
}

/** `MSH0102=Namespace foo*` → a suppression; an error text when malformed. */
export const parseSuppression = (text: string): Suppression | string => {
  const eq = text.indexOf("=")
  if (eq <= 0 || eq === text.length - 1) return `invalid --suppress "${text}": expected <code>=<resource>`
  const code = text.slice(0, eq).trim()
  const pattern = text
    .slice(eq + 1)
    .trim()
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*")
  return { code, resource: new RegExp(`^${pattern}$`) }
}

/** The resource as `--suppress` names it: `Kind name.namespace` (or `Kind name`). */
export const suppressionName = (message: Message): string => {
  const r = message.resource
  if (r === undefined) return ""
  return r.namespace === "" ? `${r.kind} ${r.name}` : `${r.kind} ${r.name}.${r.namespace}`
}

export interface RunOptions {
  readonly analyzers: ReadonlyArray<Analyzer>
  readonly suppressions: ReadonlyArray<Suppression>
  readonly outputThreshold: Level
  /** Only messages about resources in this namespace (cluster-scoped ones always); undefined = all. */
  readonly namespace?: string
}

export interface RunResult {
  /** Messages at or above the output threshold. */
  readonly messages: ReadonlyArray<Message>
  /** Every message after suppression and scoping (the failure threshold reads these). */
  readonly all: ReadonlyArray<Message>
}

const origin = (m: Message) =>
  `${m.resource?.cluster ?? ""}\u0000${m.resource?.origin?.file ?? ""}\u0000${String(m.resource?.origin?.documentIndex ?? 0).padStart(8, "0")}`

export const runAnalysis = (snapshot: Snapshot, extra: ReadonlyArray<Message>, options: RunOptions): RunResult => {
  const raw = [...extra]
  for (const analyzer of options.analyzers) for (const m of analyzer.run(snapshot)) raw.push(m)
  const seen = new Set<string>()
  const all = raw.filter((m) => {
    if (
      options.namespace !== undefined &&
      m.resource !== undefined &&
      m.resource.namespace !== "" &&
      m.resource.namespace !== options.namespace
    )
      return false
    const name = suppressionName(m)
    if (options.suppressions.some((s) => s.code === m.type.code && s.resource.test(name))) return false
    // The same resource in two clusters is two findings.
    const key = `${m.type.code}|${m.resource?.cluster ?? ""}|${m.resource === undefined ? "" : resourceName(m.resource)}|${m.text}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  all.sort(
    (a, b) =>
      LEVEL_RANK[b.level] - LEVEL_RANK[a.level] ||
      a.type.code.localeCompare(b.type.code) ||
      (a.resource === undefined ? "" : resourceName(a.resource)).localeCompare(
        b.resource === undefined ? "" : resourceName(b.resource),
      ) ||
      origin(a).localeCompare(origin(b)) ||
      a.text.localeCompare(b.text),
  )
  const floor = LEVEL_RANK[options.outputThreshold]
  return { messages: all.filter((m) => LEVEL_RANK[m.level] >= floor), all }
}

/** Whether a message reaches `--failure-threshold` (spec §7 rule 1). */
export const failsAt = (messages: ReadonlyArray<Message>, threshold: Level): boolean =>
  messages.some((m) => LEVEL_RANK[m.level] >= LEVEL_RANK[threshold])
