/**
 * `PILOT_ENABLE_ANALYSIS`, as pure decisions: the analysis messages each orchestrator config
 * object should carry in `status.validationMessages` (the reference's shape: level, type
 * {code, name}, documentationUrl, description), from the config store's issues (schema
 * validation, the same name under two groups) and the cross-resource analyzer
 * (config-model/subset-references.ts), and the status patch that brings an object there — none
 * when it carries them already, `null` to clear them once fixed.
 */

import type { ValidationIssue } from "../config-model/resource.js"
import { ORCHESTRATOR_FILE_PREFIX } from "../config-store/orchestrator-objects.js"
import { MessageTypes as SharedTypes } from "./message-types.js"

export interface AnalysisMessage {
  readonly level: "Error" | "Warning" | "Info"
  readonly type: { readonly code: string; readonly name: string }
  readonly documentationUrl: string
  readonly description: string
}

/** The message types this controller writes, from the shared table (analysis/message-types.ts). */
export const MessageTypes = {
  SchemaValidationError: SharedTypes.SchemaValidationError,
  // An undefined subset is served as it is (the DestinationRule may come later): a warning here.
  ReferencedResourceNotFound: { ...SharedTypes.ReferencedResourceNotFound, level: "Warning" },
} as const

const documentationUrl = (code: string) =>
  `https://mesh.io/latest/docs/reference/config/analysis/${code.toLowerCase()}/?ref=status-controller`

export const messageOf = (type: keyof typeof MessageTypes, issue: ValidationIssue): AnalysisMessage => {
  const t = MessageTypes[type]
  const where = issue.path === "" ? "" : `${issue.path}: `
  const prefix = type === "SchemaValidationError" ? "Schema validation error: " : ""
  return {
    level: t.level,
    type: { code: t.code, name: t.name },
    documentationUrl: documentationUrl(t.code),
    description: `${prefix}${where}${issue.message}`,
  }
}

/** The object an orchestrator pseudo-file stands for (see config-store/orchestrator-objects.ts). */
export interface ObjectId {
  /** The group it was read from (an upstream alias group included). */
  readonly group: string
  readonly kind: string
  readonly namespace: string
  readonly name: string
}

export const objectOfFile = (file: string): ObjectId | undefined => {
  if (!file.startsWith(ORCHESTRATOR_FILE_PREFIX)) return undefined
  let rest = file.slice(ORCHESTRATOR_FILE_PREFIX.length)
  if (rest.startsWith("~")) rest = rest.slice(1)
  const parts = rest.split("/")
  if (parts.length !== 4) return undefined
  const [group, kind, namespace, name] = parts as [string, string, string, string]
  return name === "" ? undefined : { group, kind, namespace, name }
}

export const objectIdKey = (id: ObjectId): string => `${id.group}/${id.kind}/${id.namespace}/${id.name}`

/** The messages each object should carry. */
export interface DesiredMessages {
  readonly get: (id: ObjectId) => ReadonlyArray<AnalysisMessage>
  /** Objects with at least one message. */
  readonly size: number
}

const resourceKey = (id: Pick<ObjectId, "kind" | "namespace" | "name">) => `${id.kind}/${id.namespace}/${id.name}`

/**
 * The messages of each object: its validation issues as errors (issues name the object by its
 * pseudo-file; issues of `--configDir` files are not objects and are left out), then the
 * analyzer's warnings. Warnings name the served resource by kind, namespace and name (served
 * resources carry no pseudo-file): they go to the object of that name under either group.
 */
export const desiredMessages = (
  validation: ReadonlyArray<ValidationIssue>,
  warnings: ReadonlyArray<ValidationIssue>,
): DesiredMessages => {
  const byObject = new Map<string, Array<AnalysisMessage>>()
  const byResource = new Map<string, Array<AnalysisMessage>>()
  const add = (map: Map<string, Array<AnalysisMessage>>, key: string, message: AnalysisMessage) => {
    const list = map.get(key) ?? []
    if (!list.some((m) => m.description === message.description && m.type.code === message.type.code))
      list.push(message)
    map.set(key, list)
  }
  for (const issue of validation) {
    const id = objectOfFile(issue.file)
    if (id !== undefined) add(byObject, objectIdKey(id), messageOf("SchemaValidationError", issue))
  }
  for (const issue of warnings) {
    if (issue.kind === undefined || issue.name === undefined) continue
    const key = resourceKey({ kind: issue.kind, namespace: issue.namespace ?? "", name: issue.name })
    add(byResource, key, messageOf("ReferencedResourceNotFound", issue))
  }
  const keys = new Set([...byObject.keys()].map((k) => k.slice(k.indexOf("/") + 1)))
  for (const k of byResource.keys()) keys.add(k)
  return {
    get: (id) => [...(byObject.get(objectIdKey(id)) ?? []), ...(byResource.get(resourceKey(id)) ?? [])],
    size: keys.size,
  }
}

/** A message as stored, reduced to the fields compared (unknown extra fields are ignored). */
const comparable = (value: unknown): string => {
  if (!Array.isArray(value)) return "[]"
  return JSON.stringify(
    value.map((m) => {
      const o = (typeof m === "object" && m !== null ? m : {}) as Record<string, unknown>
      const type = (typeof o.type === "object" && o.type !== null ? o.type : {}) as Record<string, unknown>
      return [o.level, type.code, type.name, o.documentationUrl, o.description]
    }),
  )
}

/**
 * The merge patch of the status subresource that makes `current` (the object's
 * `status.validationMessages`) equal to `desired`; undefined when it is already.
 */
export const statusPatch = (current: unknown, desired: ReadonlyArray<AnalysisMessage>): unknown => {
  if (comparable(current) === comparable(desired)) return undefined
  return { status: { validationMessages: desired.length === 0 ? null : desired } }
}
