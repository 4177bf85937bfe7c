/**
 * Files → snapshot entries. Mesh kinds (and the Gateway-API kinds) go through the config model's
 * validation: a resource that fails it is analyzed all the same, as the reference's file source
 * does (it validates in an analyzer, not before reading); a mesh resource keeps its findings for
 * its kind's validation analyzer (`schemaIssues`), the others' become SchemaValidationError
 * messages here. Orchestrator kinds
 * (Service, Pod, Deployment, Namespace, ConfigMap, ...) are kept as plain records: the analyzers
 * read the few fields they need. Each entry knows its file, document and line.
 */
import { Either } from "effect"
import { apiKindOf, isMeshKind, lookupKind, normaliseGroup } from "../config-model/kinds.js"
import { readYamlDocuments, validateDocument } from "../config-model/parse.js"
import type { ValidationIssue } from "../config-model/resource.js"
import { parseFieldPath } from "./field-lines.js"
import { MessageTypes } from "./message-types.js"
import { type Entry, type Message, message, type Origin, rec, str, stringMap } from "./snapshot.js"

export interface ReadResult {
  readonly entries: ReadonlyArray<Entry>
  /** Schema validation errors, as analysis messages. */
  readonly messages: ReadonlyArray<Message>
  /** Documents that could not be read at all (syntax errors, unknown kinds): `--ignore-unknown` hides them. */
  readonly unreadable: ReadonlyArray<string>
}

/** Groups the mesh owns: a kind of these groups the config model does not know is unreadable. */
const isMeshGroup = (group: string): boolean => group.endsWith(".mesh.io") || group.endsWith(".istio.io")

interface DocumentSpan {
  /** 1-based line of the document's first content. */
  readonly line: number
  /** 1-based line of the first line of `text`. */
  readonly textLine: number
  readonly text: string
}

const SEPARATOR = /^---(?=[ \t\r\n]|$)/

/**
 * Each document's first content line and text, in stream order (the reader counts documents the
 * same way: a stream's leading `---` opens the first one).
 */
export const documentSpans = (text: string): ReadonlyArray<DocumentSpan> => {
  const lines = text.split("\n")
  const spans: Array<{ start: number; lines: Array<string>; first?: number }> = [{ start: 0, lines: [] }]
  lines.forEach((line, i) => {
    if (SEPARATOR.test(line)) {
      const current = spans[spans.length - 1]!
      const leadingOnly = spans.length === 1 && current.first === undefined
      if (leadingOnly) spans.pop()
      spans.push({ start: i, lines: [] })
      const rest = line.slice(3).trim()
      if (rest !== "" && !rest.startsWith("#")) spans[spans.length - 1]!.first = i
      return
    }
    const current = spans[spans.length - 1]!
    current.lines.push(line)
    const trimmed = line.trim()
    if (current.first === undefined && trimmed !== "" && !trimmed.startsWith("#") && !trimmed.startsWith("%"))
      current.first = i
  })
  return spans.map((s, i) => ({
    line: (s.first ?? s.start) + 1,
    // A span opened by `---` holds the lines after it; the leading span starts at line 1.
    textLine: i === 0 && !SEPARATOR.test(lines[s.start] ?? "") ? 1 : s.start + 2,
    text: s.lines.join("\n"),
  }))
}

const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.lastIndexOf("/")
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

interface Sink {
  readonly entries: Array<Entry>
  readonly messages: Array<Message>
  readonly unreadable: Array<string>
}

/** One object (a document, a List item, an object listed from the cluster) into the sink. */
const readValue = (value: unknown, origin: Origin | undefined, defaultNamespace: string, sink: Sink): void => {
  if (value === null || value === undefined) return
  const object = rec(value)
  const where = origin === undefined ? "cluster object" : `${origin.file} document ${origin.documentIndex}`
  if (object.kind === "List" && Array.isArray(object.items)) {
    for (const item of object.items) readValue(item, origin, defaultNamespace, sink)
    return
  }
  const kind = str(object.kind)
  const apiVersion = str(object.apiVersion)
  const metadata = rec(object.metadata)
  const name = str(metadata.name)
  if (kind === "" || apiVersion === "" || name === "") {
    sink.unreadable.push(`${where}: not an orchestrator object (apiVersion, kind and metadata.name are required)`)
    return
  }
  const { group } = splitApiVersion(apiVersion)
  const info = lookupKind(group, kind)
  const namespaced = info?.namespaced ?? !CLUSTER_SCOPED.has(kind)
  const namespace = namespaced ? str(metadata.namespace) || defaultNamespace : ""
  const base = {
    kind,
    name,
    namespace,
    labels: stringMap(metadata.labels),
    annotations: stringMap(metadata.annotations),
    ...(origin !== undefined ? { origin } : {}),
  }
  if (info === undefined && isMeshGroup(group)) {
    sink.unreadable.push(`${where}: unknown kind ${kind} (apiVersion ${apiVersion})`)
    return
  }
  if (info === undefined || info.group === "" || info.group === "discovery.k8s.io") {
    sink.entries.push({ ...base, group: normaliseGroup(group), body: object })
    return
  }
  const plain: Entry = {
    ...base,
    kind: apiKindOf(info),
    group: info.group,
    body: rec(object.spec),
    ...(object.status !== undefined ? { status: rec(object.status) } : {}),
  }
  const withNamespace = namespaced ? { ...object, metadata: { ...metadata, namespace } } : object
  const result = validateDocument(origin?.file ?? "", origin?.documentIndex ?? 0, withNamespace)
  const issues = result.issues.map((issue) => ({
    text: `Schema validation error: ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`,
    ...(issue.path === "" ? {} : { path: parseFieldPath(issue.path) }),
  }))
  // As the reference's file source, an object that fails validation is still analyzed (its
  // other findings stand) and also reported. Only an object the reference could not decode into
  // its typed form (a field of the wrong type, an unknown field or enum value) or a
  // document-level problem (not a mapping, nested over the bound) stays out.
  const admitted = result.resource !== undefined || result.issues.every(isSemanticIssue)
  // An analyzed mesh resource's findings are its kind's validation analyzer's to report
  // (--analyzer selects them); the rest are reported with the reading.
  if (admitted && isMeshKind(info)) {
    sink.entries.push(issues.length === 0 ? plain : { ...plain, schemaIssues: issues })
    return
  }
  if (admitted) sink.entries.push(plain)
  for (const issue of issues)
    sink.messages.push(message(MessageTypes.SchemaValidationError, plain, issue.text, issue.path))
}

/** Decoding failures: the reference's typed decoding rejects these before any analysis. */
const UNDECODABLE = /^(?:expected |unknown field|unknown value)/

/** A validation issue about a decodable object (a missing or inconsistent field). */
const isSemanticIssue = (issue: ValidationIssue): boolean => issue.path !== "" && !UNDECODABLE.test(issue.message)

/**
 * Reads one file's text. Documents without a namespace get `defaultNamespace` (the reference's
 * `-n`), except cluster-scoped kinds.
 */
export const readDocuments = (file: string, text: string, defaultNamespace: string): ReadResult => {
  const sink: Sink = { entries: [], messages: [], unreadable: [] }
  const parsed = readYamlDocuments(text)
  if (Either.isLeft(parsed)) {
    sink.unreadable.push(`${file}: YAML syntax error: ${parsed.left.split("\n")[0]}`)
    return sink
  }
  const spans = documentSpans(text)
  const spansAgree = spans.length >= parsed.right.length
  parsed.right.forEach((value, documentIndex) => {
    const span = spansAgree ? spans[documentIndex] : undefined
    const origin: Origin = {
      file,
      documentIndex,
      ...(span !== undefined ? { line: span.line, textLine: span.textLine, text: span.text } : {}),
    }
    readValue(value, origin, defaultNamespace, sink)
  })
  return sink
}

/** Objects listed from the cluster (no file origin). */
export const readObjects = (objects: ReadonlyArray<unknown>, defaultNamespace: string): ReadResult => {
  const sink: Sink = { entries: [], messages: [], unreadable: [] }
  for (const object of objects) readValue(object, undefined, defaultNamespace, sink)
  return sink
}

/** Orchestrator kinds without a namespace. */
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "Node",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
  "PersistentVolume",
  "StorageClass",
  "PriorityClass",
  "GatewayClass",
])
