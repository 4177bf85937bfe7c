/**
 * The pure side of the config store: an immutable snapshot of the served resources and the
 * merge that applies per-file updates to it.
 *
 * Rules (spec part 1 §4, "last good config wins"):
 * - Every file contributes a set of resources. A file whose latest version parses and validates
 *   cleanly serves exactly its resources.
 * - A file whose latest version has any issue keeps serving the resources it served before
 *   (the whole previous version, so a file never half-applies). A brand-new file that is bad
 *   serves the documents of it that are valid: there is nothing older to fall back to.
 * - Removing a file removes only its resources; changing a file touches only its resources.
 * - Two definitions of one kind/namespace/name (in two files, or twice in one file) are a
 *   conflict: the definition from the file whose path sorts first wins (then the lower
 *   document index); every other definition is ignored and reported as an issue of its file.
 */
import type { ConfigResource, ValidationIssue } from "../config-model/resource.js"
import { resourceKey } from "../config-model/resource.js"
import type { KnownKind, ResourceOf } from "../config-model/specs.js"

/** The result of parsing one file (the shape of `parseConfigDocuments`). */
export interface FileParseResult {
  readonly resources: ReadonlyArray<ConfigResource>
  readonly issues: ReadonlyArray<ValidationIssue>
}

/** One file as the store sees it. */
export interface FileEntry {
  readonly file: string
  /** Resources this file currently serves (possibly from an older, valid version). */
  readonly served: ReadonlyArray<ConfigResource>
  /** Issues of the latest version of the file; empty once the file is clean. */
  readonly issues: ReadonlyArray<ValidationIssue>
  /** True when `served` comes from an older version because the latest one is invalid. */
  readonly stale: boolean
}

/** An update of one file: its new parse result, or `undefined` when the file is gone. */
export interface FileUpdate {
  readonly file: string
  readonly result: FileParseResult | undefined
}

export type ChangeType = "added" | "updated" | "removed"

export interface ResourceChange {
  readonly type: ChangeType
  readonly kind: string
  readonly namespace: string
  readonly name: string
  /** `kind/namespace/name`, as `resourceKey`. */
  readonly key: string
}

/** Two or more definitions of one resource; `winner` is served, the others are ignored. */
export interface ConfigConflict {
  readonly key: string
  readonly winner: ConfigResource
  readonly ignored: ReadonlyArray<ConfigResource>
}

const fileOf = (resource: ConfigResource): string => resource.source?.file ?? ""
const docOf = (resource: ConfigResource): number => resource.source?.documentIndex ?? 0

const compareCandidates = (a: ConfigResource, b: ConfigResource): number => {
  const fa = fileOf(a)
  const fb = fileOf(b)
  if (fa !== fb) return fa < fb ? -1 : 1
  return docOf(a) - docOf(b)
}

const compareByNamespaceName = (a: ConfigResource, b: ConfigResource): number => {
  if (a.meta.namespace !== b.meta.namespace) return a.meta.namespace < b.meta.namespace ? -1 : 1
  if (a.meta.name !== b.meta.name) return a.meta.name < b.meta.name ? -1 : 1
  return 0
}

/** Structural equality of JSON-like values (plain objects, arrays, primitives). */
export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b)
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  if (ka.length !== kb.length) return false
  for (const k of ka) {
    if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

/** Same resource content, wherever it came from (the source location is ignored). */
export const sameResource = (a: ConfigResource, b: ConfigResource): boolean =>
  a.group === b.group &&
  a.version === b.version &&
  a.kind === b.kind &&
  deepEqual(a.meta, b.meta) &&
  deepEqual(a.spec, b.spec)

const conflictIssue = (winner: ConfigResource, loser: ConfigResource): ValidationIssue => ({
  file: fileOf(loser),
  documentIndex: docOf(loser),
  kind: loser.kind,
  namespace: loser.meta.namespace,
  name: loser.meta.name,
  path: "",
  message: `duplicate ${resourceKey(loser)}: already defined in ${fileOf(winner)} document ${docOf(winner)}; this definition is ignored`,
})

const EMPTY_KIND: ReadonlyMap<string, ConfigResource> = new Map()
// Safe to share between servers: a pure memo of immutable snapshot maps (sorted once per map).
const sortedCache = new WeakMap<ReadonlyMap<string, ConfigResource>, ReadonlyArray<ConfigResource>>()

/** An immutable, consistent view of every served resource. */
export class ConfigSnapshot {
  private constructor(
    /** Increases by one with every applied change. */
    readonly version: number,
    readonly files: ReadonlyMap<string, FileEntry>,
    /** kind -> key -> served resource. Unchanged kinds share their map with the previous snapshot. */
    readonly byKind: ReadonlyMap<string, ReadonlyMap<string, ConfigResource>>,
    /** key -> every definition, best first. */
    private readonly candidates: ReadonlyMap<string, ReadonlyArray<ConfigResource>>,
    readonly conflicts: ReadonlyMap<string, ConfigConflict>,
  ) {}

  static readonly empty: ConfigSnapshot = new ConfigSnapshot(0, new Map(), new Map(), new Map(), new Map())

  /** Kinds with at least one served resource, sorted. */
  get kinds(): ReadonlyArray<string> {
    return [...this.byKind.keys()].filter((k) => (this.byKind.get(k)?.size ?? 0) > 0).sort()
  }

  get size(): number {
    let n = 0
    for (const m of this.byKind.values()) n += m.size
    return n
  }

  /** The served resource of a kind, namespace and name; typed by its kind's schema for known kinds. */
  get<K extends KnownKind>(kind: K, namespace: string, name: string): ResourceOf<K> | undefined
  get(kind: string, namespace: string, name: string): ConfigResource | undefined
  get(kind: string, namespace: string, name: string): ConfigResource | undefined {
    return this.byKind.get(kind)?.get(`${kind}/${namespace}/${name}`)
  }

  getByKey(key: string): ConfigResource | undefined {
    const kind = key.slice(0, key.indexOf("/"))
    return this.byKind.get(kind)?.get(key)
  }

  /**
   * Served resources of a kind, sorted by namespace then name; optionally one namespace only.
   * A known kind's resources come typed by its schema (specs.ts): parse.ts gives a resource its
   * kind only once its spec decoded with that kind's schema.
   */
  list<K extends KnownKind>(kind: K, namespace?: string): ReadonlyArray<ResourceOf<K>>
  list(kind: string, namespace?: string): ReadonlyArray<ConfigResource>
  list(kind: string, namespace?: string): ReadonlyArray<ConfigResource> {
    const map = this.byKind.get(kind) ?? EMPTY_KIND
    let sorted = sortedCache.get(map)
    if (sorted === undefined) {
      sorted = [...map.values()].sort(compareByNamespaceName)
      sortedCache.set(map, sorted)
    }
    return namespace === undefined ? sorted : sorted.filter((r) => r.meta.namespace === namespace)
  }

  /** Every served resource, by kind then namespace then name. */
  all(): ReadonlyArray<ConfigResource> {
    return this.kinds.flatMap((kind) => this.list(kind))
  }

  /** Every current problem: issues of invalid files, then conflicts; sorted by file and document. */
  get issues(): ReadonlyArray<ValidationIssue> {
    const out: Array<ValidationIssue> = []
    for (const entry of this.files.values()) out.push(...entry.issues)
    for (const conflict of this.conflicts.values()) {
      for (const loser of conflict.ignored) out.push(conflictIssue(conflict.winner, loser))
    }
    return out.sort((a, b) => (a.file !== b.file ? (a.file < b.file ? -1 : 1) : a.documentIndex - b.documentIndex))
  }

  /** Files whose latest version is invalid, sorted. */
  get invalidFiles(): ReadonlyArray<string> {
    return [...this.files.values()]
      .filter((f) => f.issues.length > 0)
      .map((f) => f.file)
      .sort()
  }

  /**
   * Applies file updates as one atomic step. Returns the new snapshot (the same object when
   * nothing changed) and exactly the resources that changed.
   */
  apply(updates: ReadonlyArray<FileUpdate>): ApplyResult {
    const files = new Map(this.files)
    const candidates = new Map(this.candidates)
    const touched = new Set<string>()
    let filesChanged = false
    let issuesChanged = false

    const dropServed = (entry: FileEntry) => {
      for (const r of entry.served) {
        const key = resourceKey(r)
        const list = candidates.get(key)
        if (list === undefined) continue
        const rest = list.filter((c) => fileOf(c) !== entry.file)
        if (rest.length === 0) candidates.delete(key)
        else candidates.set(key, rest)
        touched.add(key)
      }
    }

    for (const update of updates) {
      const previous = files.get(update.file)
      if (update.result === undefined) {
        if (previous === undefined) continue
        dropServed(previous)
        files.delete(update.file)
        filesChanged = true
        if (previous.issues.length > 0) issuesChanged = true
        continue
      }
      const { resources, issues } = update.result
      const clean = issues.length === 0
      const served = clean || previous === undefined ? withSource(update.file, resources) : previous.served
      const entry: FileEntry = {
        file: update.file,
        served,
        issues,
        stale: !clean && previous !== undefined,
      }
      const sameIssues = deepEqual(previous?.issues ?? [], issues)
      if (previous !== undefined && previous.served === served && sameIssues) continue
      if (!sameIssues) issuesChanged = true
      filesChanged = true
      if (previous !== undefined && previous.served !== served) dropServed(previous)
      files.set(update.file, entry)
      if (previous === undefined || previous.served !== served) {
        for (const r of served) {
          const key = resourceKey(r)
          const list = candidates.get(key) ?? []
          candidates.set(key, [...list, r])
          touched.add(key)
        }
      }
    }

    if (!filesChanged) return { snapshot: this, changes: [], issuesChanged: false }

    const byKind = new Map(this.byKind)
    const copiedKinds = new Set<string>()
    const kindMap = (kind: string): Map<string, ConfigResource> => {
      if (!copiedKinds.has(kind)) {
        copiedKinds.add(kind)
        byKind.set(kind, new Map(byKind.get(kind) ?? EMPTY_KIND))
      }
      return byKind.get(kind) as Map<string, ConfigResource>
    }
    const conflicts = new Map(this.conflicts)
    const changes: Array<ResourceChange> = []

    for (const key of [...touched].sort()) {
      const list = candidates.get(key)
      const sorted = list === undefined ? undefined : [...list].sort(compareCandidates)
      if (sorted !== undefined) candidates.set(key, sorted)
      const winner = sorted?.[0]
      if (sorted !== undefined && sorted.length > 1 && winner !== undefined) {
        const previousConflict = conflicts.get(key)
        const ignored = sorted.slice(1)
        if (
          previousConflict === undefined ||
          previousConflict.winner.source?.file !== winner.source?.file ||
          previousConflict.ignored.length !== ignored.length
        ) {
          issuesChanged = true
        }
        conflicts.set(key, { key, winner, ignored })
      } else if (conflicts.delete(key)) {
        issuesChanged = true
      }
      const before = this.getByKey(key)
      const [kind = "", namespace = "", ...nameParts] = key.split("/")
      const name = nameParts.join("/")
      if (winner === undefined) {
        if (before !== undefined) {
          kindMap(kind).delete(key)
          changes.push({ type: "removed", kind, namespace, name, key })
        }
      } else if (before === undefined) {
        kindMap(kind).set(key, winner)
        changes.push({ type: "added", kind, namespace, name, key })
      } else if (before !== winner) {
        kindMap(kind).set(key, winner)
        if (!sameResource(before, winner)) changes.push({ type: "updated", kind, namespace, name, key })
      }
    }
    for (const kind of copiedKinds) if (byKind.get(kind)?.size === 0) byKind.delete(kind)

    return {
      snapshot: new ConfigSnapshot(this.version + 1, files, byKind, candidates, conflicts),
      changes,
      issuesChanged,
    }
  }
}

export interface ApplyResult {
  readonly snapshot: ConfigSnapshot
  readonly changes: ReadonlyArray<ResourceChange>
  /** The set of current issues (invalid files, conflicts) changed. */
  readonly issuesChanged: boolean
}

/** Ensures every resource of a file names that file as its source. */
const withSource = (file: string, resources: ReadonlyArray<ConfigResource>): ReadonlyArray<ConfigResource> =>
  resources.map((r, i) =>
    r.source?.file === file ? r : { ...r, source: { file, documentIndex: r.source?.documentIndex ?? i } },
  )

/** Kinds named by a list of changes, sorted. */
export const changedKinds = (changes: ReadonlyArray<ResourceChange>): ReadonlyArray<string> =>
  [...new Set(changes.map((c) => c.kind))].sort()
