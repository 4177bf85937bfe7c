/**
 * bug-report's include/exclude filters (spec part 3 §1 rule 5): `ns/dep/pod/labels/annotations/container`,
 * each part a comma-separated list of alternatives, trailing parts omittable, an empty part or
 * `*` meaning any. Names match as globs; labels and annotations are `key=value` pairs whose keys
 * match exactly and whose values match as globs (a bare key asks only that the key exists).
 *
 * A filter matches when every part it gives matches (alternatives within a part are ORed). A
 * container is collected when it matches at least one include filter (none given: all) and no
 * exclude filter. (The reference's exclude excludes on ANY matching part; the spec's rule reads
 * "matches a filter", so a filter here matches only as a whole.)
 */
import { globMatch } from "./glob.js"

export interface KeyValueMatcher {
  readonly key: string
  /** undefined: the key only has to exist. */
  readonly value?: string
}

export interface SelectionFilter {
  readonly namespaces: ReadonlyArray<string>
  readonly deployments: ReadonlyArray<string>
  readonly pods: ReadonlyArray<string>
  readonly labels: ReadonlyArray<KeyValueMatcher>
  readonly annotations: ReadonlyArray<KeyValueMatcher>
  readonly containers: ReadonlyArray<string>
}

/** What a filter is matched against: one container of one pod. */
export interface ContainerRef {
  readonly namespace: string
  /** "" when the pod belongs to no Deployment. */
  readonly deployment: string
  readonly pod: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly container: string
}

const PARTS = ["namespace", "deployment", "pod", "labels", "annotations", "container"] as const

const alternatives = (part: string): ReadonlyArray<string> => {
  const items = part
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  // `*` alone stands for "any": the same as leaving the part out.
  return items.length === 1 && items[0] === "*" ? [] : items
}

const keyValues = (part: string, what: string): ReadonlyArray<KeyValueMatcher> | string => {
  const out: Array<KeyValueMatcher> = []
  for (const item of alternatives(part)) {
    const eq = item.indexOf("=")
    const key = eq < 0 ? item : item.slice(0, eq)
    if (key === "") return `empty ${what} key in "${item}"`
    if (/[*?]/.test(key)) return `${what} keys cannot be globs: "${key}"`
    out.push(eq < 0 ? { key } : { key, value: item.slice(eq + 1) })
  }
  return out
}

/** Parses one filter; a string is the error. */
export const parseSelectionFilter = (text: string): SelectionFilter | string => {
  const parts = text.trim().split("/")
  if (parts.length > PARTS.length)
    return `invalid filter "${text}": at most ${PARTS.length} parts (${PARTS.join("/")}), got ${parts.length}`
  const at = (i: number) => parts[i] ?? ""
  const labels = keyValues(at(3), "label")
  if (typeof labels === "string") return `invalid filter "${text}": ${labels}`
  const annotations = keyValues(at(4), "annotation")
  if (typeof annotations === "string") return `invalid filter "${text}": ${annotations}`
  return {
    namespaces: alternatives(at(0)),
    deployments: alternatives(at(1)),
    pods: alternatives(at(2)),
    labels,
    annotations,
    containers: alternatives(at(5)),
  }
}

/** Parses every filter; the first error wins. */
export const parseSelectionFilters = (texts: ReadonlyArray<string>): ReadonlyArray<SelectionFilter> | string => {
  const out: Array<SelectionFilter> = []
  for (const text of texts) {
    if (text.trim() === "") continue
    const parsed = parseSelectionFilter(text)
    if (typeof parsed === "string") return parsed
    out.push(parsed)
  }
  return out
}

const anyName = (patterns: ReadonlyArray<string>, name: string) =>
  patterns.length === 0 || patterns.some((p) => globMatch(p, name))

const anyKeyValue = (matchers: ReadonlyArray<KeyValueMatcher>, values: Readonly<Record<string, string>>) =>
  matchers.length === 0 ||
  matchers.some((m) => {
    const actual = values[m.key]
    return actual !== undefined && (m.value === undefined || globMatch(m.value, actual))
  })

/** Whether every part the filter gives matches the container. */
export const filterMatches = (filter: SelectionFilter, ref: ContainerRef): boolean =>
  anyName(filter.namespaces, ref.namespace) &&
  anyName(filter.deployments, ref.deployment) &&
  anyName(filter.pods, ref.pod) &&
  anyKeyValue(filter.labels, ref.labels) &&
  anyKeyValue(filter.annotations, ref.annotations) &&
  anyName(filter.containers, ref.container)

/** Whether the filter selects the pod for some container (its container part ignored). */
const podMatches = (filter: SelectionFilter, ref: Omit<ContainerRef, "container">): boolean =>
  filterMatches({ ...filter, containers: [] }, { ...ref, container: "" })

export interface Selection {
  readonly include: ReadonlyArray<SelectionFilter>
  readonly exclude: ReadonlyArray<SelectionFilter>
}

/** Spec rule 5: at least one include filter (or none given) and no exclude filter. */
export const containerSelected = (selection: Selection, ref: ContainerRef): boolean =>
  (selection.include.length === 0 || selection.include.some((f) => filterMatches(f, ref))) &&
  !selection.exclude.some((f) => filterMatches(f, ref))

/**
 * Whether anything of the pod could be selected: some include filter matches the pod, and no
 * exclude filter without a container part excludes it whole.
 */
export const podSelected = (selection: Selection, ref: Omit<ContainerRef, "container">): boolean =>
  (selection.include.length === 0 || selection.include.some((f) => podMatches(f, ref))) &&
  !selection.exclude.some((f) => f.containers.length === 0 && podMatches(f, ref))

/** The namespaces the reference leaves out by default (orchestrator system and local storage). */
export const DEFAULT_EXCLUDED_NAMESPACES: ReadonlyArray<string> = [
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
]

/** `--exclude`'s default: one filter listing those namespaces. */
export const DEFAULT_EXCLUDE: ReadonlyArray<string> = [DEFAULT_EXCLUDED_NAMESPACES.join(",")]

/**
 * The Deployment a pod belongs to: its ReplicaSet owner's name without the `pod-template-hash`
 * suffix ("" for pods no ReplicaSet owns).
 */
export const deploymentOf = (pod: {
  readonly metadata: {
    readonly labels?: Readonly<Record<string, string>>
    readonly ownerReferences?: ReadonlyArray<{ readonly kind?: string; readonly name?: string }>
  }
}): string => {
  const owner = pod.metadata.ownerReferences?.find((o) => o.kind === "ReplicaSet")
  if (owner?.name === undefined) return ""
  const hash = pod.metadata.labels?.["pod-template-hash"]
  if (hash !== undefined && owner.name.endsWith(`-${hash}`)) return owner.name.slice(0, -(hash.length + 1))
  const dash = owner.name.lastIndexOf("-")
  return dash > 0 ? owner.name.slice(0, dash) : owner.name
}
