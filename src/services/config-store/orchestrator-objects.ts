/**
 * Orchestrator custom resources as config-store input. Each object is one pseudo-file of the
 * store (`orchestrator:<group>/<kind>/<namespace>/<name>`), validated exactly as a `--configDir`
 * document, so the snapshot's per-file rules apply unchanged: an update that makes an object
 * invalid keeps its last valid version served, deleting it removes it.
 *
 * The same kind/namespace/name under a mesh group and its upstream alias group is a conflict the
 * snapshot settles by file path: upstream pseudo-files are named `orchestrator:~<group>/...`,
 * and `~` sorts after every character of a group name, so the `*.mesh.io` object wins; the
 * upstream one is served only while no valid `*.mesh.io` object of that name exists.
 */
import { validateDocument } from "../config-model/parse.js"
import type { ConfigResource, ValidationIssue } from "../config-model/resource.js"
import type { OrchObject } from "../orchestrator/objects.js"
import type { FileUpdate } from "./snapshot.js"

/** The (group, version, kind) an object was read from. */
export interface ObjectSource {
  readonly group: string
  readonly version: string
  readonly kind: string
  /** Lower-case plural (the `resource` label of `mesh_validation_failed`). */
  readonly plural: string
  /** True for the upstream alias groups (`*.istio.io`). */
  readonly upstream: boolean
}

/** A store update for one object, with where it came from (for logs and metrics). */
export interface ObjectUpdate extends FileUpdate {
  readonly source: ObjectSource
  readonly namespace: string
  readonly name: string
  /** The object's resourceVersion (absent for deletions). */
  readonly resourceVersion?: string
}

export const ORCHESTRATOR_FILE_PREFIX = "orchestrator:"

/** The pseudo-file of one object; upstream groups sort after mesh groups (see above). */
export const objectFile = (
  source: Pick<ObjectSource, "group" | "kind" | "upstream">,
  namespace: string,
  name: string,
): string =>
  `${ORCHESTRATOR_FILE_PREFIX}${source.upstream ? "~" : ""}${source.group}/${source.kind}/${namespace}/${name}`

const namespaceOf = (object: OrchObject): string => object.metadata?.namespace ?? ""
const nameOf = (object: OrchObject): string => (typeof object.metadata?.name === "string" ? object.metadata.name : "")

/**
 * The resource as served: without `resourceVersion`, which the API server bumps on every write
 * (status included); keeping it would make a status-only write a config change and push.
 * Writers read the current version from the informer.
 */
const served = (resource: ConfigResource): ConfigResource => {
  if (resource.meta.resourceVersion === undefined) return resource
  const { resourceVersion: _, ...meta } = resource.meta
  return { ...resource, meta }
}

/**
 * `validateDocument`, with a throw (validators recurse: an object nested thousands deep
 * overflows the stack) turned into an issue of the object rather than a dead watch.
 */
const validateSafely = (
  file: string,
  kind: string,
  namespace: string,
  name: string,
  value: unknown,
): ReturnType<typeof validateDocument> => {
  try {
    return validateDocument(file, 0, value)
  } catch (error) {
    const message = String((error as Error)?.message ?? error).slice(0, 160)
    return {
      issues: [{ file, documentIndex: 0, kind, namespace, name, path: "", message: `cannot validate: ${message}` }],
    }
  }
}

/**
 * The store update of an added or updated object: validated as a config document of the
 * source's apiVersion and kind (list items may lack both; the watched resource defines them).
 */
export const objectUpdate = (source: ObjectSource, object: OrchObject): ObjectUpdate => {
  const namespace = namespaceOf(object)
  const name = nameOf(object)
  const file = objectFile(source, namespace, name)
  const result = validateSafely(file, source.kind, namespace, name, {
    ...object,
    apiVersion: `${source.group}/${source.version}`,
    kind: source.kind,
  })
  const resourceVersion = object.metadata?.resourceVersion
  return {
    file,
    result: { resources: result.resource === undefined ? [] : [served(result.resource)], issues: result.issues },
    source,
    namespace,
    name,
    ...(resourceVersion !== undefined ? { resourceVersion } : {}),
  }
}

/** The store update of a deleted object. */
export const objectRemoval = (source: ObjectSource, object: OrchObject): ObjectUpdate => {
  const namespace = namespaceOf(object)
  const name = nameOf(object)
  return { file: objectFile(source, namespace, name), result: undefined, source, namespace, name }
}

/** Several batches of updates as one: the last update of each object wins; sorted by file. */
export const coalesceUpdates = (updates: Iterable<ObjectUpdate>): ReadonlyArray<ObjectUpdate> => {
  const byFile = new Map<string, ObjectUpdate>()
  for (const update of updates) byFile.set(update.file, update)
  return [...byFile.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
}

/** The first issue of an object, for a one-line log: `field <path>: <message> (and N more issues)`. */
export const describeIssues = (issues: ReadonlyArray<ValidationIssue>): string => {
  const [first] = issues
  if (first === undefined) return ""
  const more = issues.length - 1
  const where = first.path === "" ? "" : `field ${first.path}: `
  return `${where}${first.message}${more > 0 ? ` (and ${more} more issue${more === 1 ? "" : "s"})` : ""}`
}
