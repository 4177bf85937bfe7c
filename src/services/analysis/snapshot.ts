/**
 * What the analyzers read: every object of the analyzed files (and of the cluster with
 * `--use-orch`), mesh kinds and orchestrator kinds alike, as plain records with where each came
 * from. Analyzers are pure functions of a Snapshot; the indexes here are built once so that no
 * analyzer compares every resource with every other.
 */
import { defaultMeshConfig, type MeshConfig } from "../mesh-config/mesh-config.js"
import type { Level, MessageType } from "./message-types.js"

export interface Origin {
  readonly file: string
  readonly documentIndex: number
  /** 1-based line of the document's first content line, when read from a file. */
  readonly line?: number
  /** The document's text (to find the line of a field lazily) and the file line it starts on. */
  readonly text?: string
  readonly textLine?: number
}

export interface Entry {
  /** The kind as documents write it (`Gateway` for both Gateway kinds; see `group`). */
  readonly kind: string
  /** The API group, upstream aliases resolved to the mesh's groups ("" for core). */
  readonly group: string
  readonly name: string
  /** "" for cluster-scoped kinds. */
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** `spec` for the mesh kinds; the whole object for the orchestrator kinds. */
  readonly body: Readonly<Record<string, unknown>>
  /** The mesh kinds' `status` (the orchestrator kinds keep theirs in `body`). */
  readonly status?: Readonly<Record<string, unknown>>
  readonly origin?: Origin
  /**
   * The cluster the object was read from, in a multi-cluster analysis only (`--remote-contexts`
   * or remote secrets): a remote context's cluster, or `default` for the primary cluster and the
   * files (the reference's ID for the cluster it analyzes).
   */
  readonly cluster?: string
  /**
   * A mesh resource's schema validation findings, found while reading it and reported by its
   * kind's `schema.ValidationAnalyzer.<Kind>` (analyzers/schema-validation.ts), as the reference
   * validates in analyzers: `--analyzer` selects them.
   */
  readonly schemaIssues?: ReadonlyArray<{ readonly text: string; readonly path?: FieldPath }>
}

export type FieldPath = ReadonlyArray<string | number>

export interface Message {
  readonly type: MessageType
  readonly level: Level
  readonly resource?: Entry
  /** Field path inside the document (`["spec", "http", 0, "route"]`), to find its line. */
  readonly path?: FieldPath
  readonly text: string
}

export interface Snapshot {
  readonly entries: ReadonlyArray<Entry>
  /** The entries of one kind (and group when given). */
  readonly ofKind: (kind: string, group?: string) => ReadonlyArray<Entry>
  readonly domainSuffix: string
  /** The effective mesh config (defaults, the cluster's, `--meshConfigFile`; see analysis-config). */
  readonly meshConfig: MeshConfig
  /** The control-plane revision analyzed (`--revision`), `default` unless named. */
  readonly revision: string
  /** When the analysis runs (epoch ms): certificate validity is judged at this time. */
  readonly now: number
}

export const makeSnapshot = (
  entries: ReadonlyArray<Entry>,
  options: {
    readonly domainSuffix?: string
    readonly meshConfig?: MeshConfig
    readonly revision?: string
    readonly now?: number
  } = {},
): Snapshot => {
  const byKind = new Map<string, Array<Entry>>()
  for (const entry of entries) {
    for (const key of [entry.kind, `${entry.group}/${entry.kind}`]) {
      const list = byKind.get(key)
      if (list === undefined) byKind.set(key, [entry])
      else list.push(entry)
    }
  }
  return {
    entries,
    ofKind: (kind, group) => byKind.get(group === undefined ? kind : `${group}/${kind}`) ?? [],
    domainSuffix: options.domainSuffix ?? "cluster.local",
    meshConfig: options.meshConfig ?? defaultMeshConfig(),
    revision: options.revision === undefined || options.revision === "" ? "default" : options.revision,
    now: options.now ?? Date.now(),
  }
}

/** Messages are made through this, so level and type always agree with the table. */
export const message = (type: MessageType, resource: Entry | undefined, text: string, path?: FieldPath): Message => ({
  type,
  level: type.level,
  ...(resource !== undefined ? { resource } : {}),
  ...(path !== undefined ? { path } : {}),
  text,
})

// Loose readers of untyped bodies: analyzers never assume a field's shape.
export const rec = (value: unknown): Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
export const arr = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
export const str = (value: unknown): string => (typeof value === "string" ? value : "")
export const num = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)
export const strs = (value: unknown): ReadonlyArray<string> => arr(value).filter((v) => typeof v === "string")
export const stringMap = (value: unknown): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(rec(value))) if (typeof v === "string") out[k] = v
  return out
}

/** Whether every label of a selector is on the object (an empty selector selects everything). */
export const selects = (
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean => {
  for (const [k, v] of Object.entries(selector)) if (labels[k] !== v) return false
  return true
}

/** `kind namespace/name`, as messages name a resource. */
export const resourceName = (entry: Entry): string =>
  entry.namespace === "" ? `${entry.kind} ${entry.name}` : `${entry.kind} ${entry.namespace}/${entry.name}`

/** A short host is relative to the namespace of the resource naming it. */
export const fqdn = (host: string, namespace: string, domainSuffix: string): string =>
  host.includes(".") || host.includes("*") ? host : `${host}.${namespace}.svc.${domainSuffix}`

/** Whether a wildcard host (`*`, `*.suffix`) or exact host covers `host`. */
export const hostCovers = (pattern: string, host: string): boolean =>
  pattern === host ||
  pattern === "*" ||
  (pattern.startsWith("*.") &&
    (host.endsWith(pattern.slice(1)) || (host.startsWith("*.") && host.endsWith(pattern.slice(1)))))

/** Pods of a namespace, built once per snapshot: selector matching stays per namespace. */
export const podsByNamespace = (snapshot: Snapshot): ReadonlyMap<string, ReadonlyArray<Entry>> => {
  const out = new Map<string, Array<Entry>>()
  for (const pod of snapshot.ofKind("Pod", "")) {
    const list = out.get(pod.namespace)
    if (list === undefined) out.set(pod.namespace, [pod])
    else list.push(pod)
  }
  return out
}

/** The workload labels of a Pod, or of a Deployment's pod template. */
export const workloadLabels = (entry: Entry): Readonly<Record<string, string>> =>
  entry.kind === "Pod" ? entry.labels : stringMap(rec(rec(rec(entry.body.spec).template).metadata).labels)

/** A workload selector's labels (`selector.matchLabels` or `workloadSelector.labels`). */
export const matchLabels = (value: unknown): Readonly<Record<string, string>> | undefined => {
  const r = rec(value)
  if (Object.keys(r).length === 0) return undefined
  return stringMap(r.matchLabels ?? r.labels)
}

/** Entries grouped by a key (one pass). */
export const groupBy = <T>(items: Iterable<T>, key: (item: T) => string): Map<string, Array<T>> => {
  const out = new Map<string, Array<T>>()
  for (const item of items) {
    const k = key(item)
    const list = out.get(k)
    if (list === undefined) out.set(k, [item])
    else list.push(item)
  }
  return out
}

/** Services by FQDN, and the hosts ServiceEntries declare (exact and wildcard). */
export interface HostIndex {
  readonly services: ReadonlyMap<string, Entry>
  readonly entryHosts: ReadonlySet<string>
  readonly wildcardHosts: ReadonlyArray<string>
  readonly known: (host: string) => boolean
}

export const hostIndex = (snapshot: Snapshot): HostIndex => {
  const services = new Map<string, Entry>()
  for (const s of snapshot.ofKind("Service", ""))
    services.set(`${s.name}.${s.namespace}.svc.${snapshot.domainSuffix}`, s)
  const entryHosts = new Set<string>()
  const wildcardHosts: Array<string> = []
  for (const se of snapshot.ofKind("ServiceEntry")) {
    for (const h of strs(se.body.hosts)) {
      const host = fqdn(h, se.namespace, snapshot.domainSuffix)
      if (host.includes("*")) wildcardHosts.push(host)
      else entryHosts.add(host)
    }
  }
  return {
    services,
    entryHosts,
    wildcardHosts,
    known: (host) =>
      host.includes("*") ||
      services.has(host) ||
      entryHosts.has(host) ||
      wildcardHosts.some((w) => hostCovers(w, host)),
  }
}
