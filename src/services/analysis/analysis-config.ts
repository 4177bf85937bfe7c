/**
 * The mesh config and revision an analysis runs with. The mesh config is the built-in defaults,
 * then (with the cluster) the revision's mesh ConfigMap, then `--meshConfigFile`: each source's
 * fields override the one before, with the mesh-config merge rules (the same parser meshd uses,
 * so a bad file is reported by file and field).
 *
 * `--revision` picks the control plane analyzed: as in the reference, mesh config objects
 * labelled for another revision (`mesh.io/rev`) are not part of the analysis; unlabelled ones are
 * shared by every revision.
 */
import { Either } from "effect"
import type { ValidationIssue } from "../config-model/resource.js"
import { Labels } from "../constants.js"
import { applyMeshConfig, defaultMeshConfig, type MeshConfig, type MeshConfigSource } from "../mesh-config/index.js"
import type { Entry } from "./snapshot.js"

export const DEFAULT_REVISION = "default"

/** `default` and "" both name the default revision. */
export const normalizeRevision = (revision: string): string => (revision === "" ? DEFAULT_REVISION : revision)

/** Defaults ← cluster ConfigMap text ← file; every issue names its source and field. */
export const analysisMeshConfig = (sources: {
  readonly cluster?: MeshConfigSource | undefined
  readonly file?: MeshConfigSource | undefined
}): Either.Either<
  { readonly value: MeshConfig; readonly warnings: ReadonlyArray<string> },
  ReadonlyArray<ValidationIssue>
> => {
  let value = defaultMeshConfig()
  const warnings: Array<string> = []
  for (const source of [sources.cluster, sources.file]) {
    if (source === undefined) continue
    const applied = applyMeshConfig(source.file, source.text, value)
    if (Either.isLeft(applied)) return applied
    value = applied.right.value
    warnings.push(...applied.right.warnings)
  }
  return Either.right({ value, warnings })
}

/** An issue as one line: `<file>: <field>: <message>`. */
export const issueText = (issue: ValidationIssue): string =>
  issue.path === "" ? `${issue.file}: ${issue.message}` : `${issue.file}: ${issue.path}: ${issue.message}`

const isMeshGroup = (group: string): boolean => group.endsWith(".mesh.io")

/** Whether an object takes part in the analysis of `revision` (only mesh config objects are filtered). */
export const inRevision = (entry: Entry, revision: string): boolean => {
  if (!isMeshGroup(entry.group)) return true
  const label = entry.labels[Labels.revision]
  return label === undefined || normalizeRevision(label) === normalizeRevision(revision)
}
