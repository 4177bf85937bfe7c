/**
 * `tag list`: one entry per tag webhook (tag, the revision it references, the namespaces
 * labelled `mesh.io/rev=<tag>`), as a table (TAG REVISION NAMESPACES, columns aligned as Go's
 * tabwriter with padding 1 aligns the reference's), JSON or YAML.
 */
import { Labels } from "../constants.js"
import { asObject, asStringMap, type Obj } from "../orchestrator/json.js"
import { revisionOf, tagOf } from "./tag-webhooks.js"

export interface TagDescription {
  readonly tag: string
  readonly revision: string
  readonly namespaces: ReadonlyArray<string>
}

/** Tags sorted by name; a tag split over several webhooks is listed once per revision. */
export const describeTags = (webhooks: ReadonlyArray<Obj>, namespaces: ReadonlyArray<Obj>): Array<TagDescription> => {
  const byTag = new Map<string, TagDescription>()
  for (const webhook of webhooks) {
    const tag = tagOf(webhook)
    if (tag === "") continue
    const revision = revisionOf(webhook)
    const key = `${tag}\u0000${revision}`
    if (byTag.has(key)) continue
    const using = namespaces
      .filter((ns) => asStringMap(asObject(ns.metadata).labels)[Labels.revision] === tag)
      .map((ns) => String(asObject(ns.metadata).name ?? ""))
      .sort()
    byTag.set(key, { tag, revision, namespaces: using })
  }
  return [...byTag.values()].sort((a, b) => a.tag.localeCompare(b.tag) || a.revision.localeCompare(b.revision))
}

/** Rows aligned with `padding` spaces after each column's widest cell; the last cell unpadded. */
export const alignColumns = (rows: ReadonlyArray<ReadonlyArray<string>>, padding: number): string => {
  const widths: Array<number> = []
  for (const row of rows)
    row.slice(0, -1).forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + padding))).join(""),
    )
    .map((line) => `${line}\n`)
    .join("")
}

export const tagTable = (tags: ReadonlyArray<TagDescription>): string =>
  alignColumns([["TAG", "REVISION", "NAMESPACES"], ...tags.map((t) => [t.tag, t.revision, t.namespaces.join(",")])], 1)

/** The warning of `tag remove` when namespaces still use the tag (spec part 3 §1 rule 1). */
export const removalWarning = (tag: string, namespaces: ReadonlyArray<string>): string =>
  `Caution, found ${namespaces.length} namespace(s) still injected by tag "${tag}": ${namespaces.join(" ")}\n` +
  `Removing the tag stops sidecar injection in them.`

/** A confirmation answer: yes only when the user says so. */
export const confirmed = (answer: string): boolean => ["y", "yes"].includes(answer.trim().toLowerCase())
