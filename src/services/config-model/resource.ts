/**
 * The shape every configuration resource shares once parsed and validated, and the issue
 * report a rejected document produces. Shared by the schemas, the config stores, the
 * registries, the generators and `meshctl validate`.
 */

/** Where a resource came from: file and 0-based document index within it. */
export interface SourceLocation {
  readonly file: string
  readonly documentIndex: number
}

export interface ResourceMeta {
  readonly name: string
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly resourceVersion?: string
  readonly generation?: number
  readonly creationTimestamp?: string
}

/** A validated resource. `group` is normalised to the mesh's group (aliases resolved). */
export interface ConfigResource<Spec = unknown> {
  readonly group: string
  readonly version: string
  readonly kind: string
  readonly meta: ResourceMeta
  readonly spec: Spec
  readonly source?: SourceLocation
}

/** Identity of a resource within a store: kind, namespace and name. */
export const resourceKey = (resource: Pick<ConfigResource, "kind" | "meta">): string =>
  `${resource.kind}/${resource.meta.namespace}/${resource.meta.name}`

/** One problem with one document: everything a person needs to find and fix it. */
export interface ValidationIssue {
  readonly file: string
  readonly documentIndex: number
  readonly kind?: string
  readonly namespace?: string
  readonly name?: string
  /** Dotted field path, e.g. `spec.http[0].route[1].weight`; empty for document-level problems. */
  readonly path: string
  readonly message: string
}

export const formatIssue = (issue: ValidationIssue): string => {
  const what =
    issue.kind !== undefined
      ? ` ${issue.kind}${issue.name !== undefined ? ` ${issue.namespace !== undefined ? `${issue.namespace}/` : ""}${issue.name}` : ""}`
      : ""
  const field = issue.path === "" ? "" : ` field ${issue.path}:`
  return `${issue.file} document ${issue.documentIndex}${what}:${field} ${issue.message}`
}
