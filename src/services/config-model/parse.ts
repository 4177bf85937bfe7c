/**
 * Parsing of configuration files: multi-document YAML → validated resources plus every problem
 * found, each with file, document index, kind/namespace/name when known and field path.
 */
import { Either, type Schema } from "effect"
import {
  describeYamlLimitProblem,
  jsYamlDocumentsBounded,
  parseDocumentsBounded,
  type YamlLimitProblem,
} from "./bounded-yaml.js"
import { documentBatches } from "./document-batches.js"
import { decodeAll, renderPath } from "./issues.js"
import { valueDepthOver } from "./json-limits.js"
import { apiVersionOf, type KindInfo, kindsNamed, lookupKind } from "./kinds.js"
import type { ConfigResource, ResourceMeta, ValidationIssue } from "./resource.js"
import { labelKeyProblem, labelValueProblem } from "./schemas/common.js"
import { GO_JS_YAML_SCHEMA, GO_YAML_OPTIONS, goFlowScalars } from "./yaml-dialect.js"
import { aliasExpansion, MAX_ALIAS_EXPANSION_NODES, MAX_NESTING_DEPTH, oversizedFileProblem } from "./yaml-limits.js"

export interface ParsedDocuments {
  readonly resources: ReadonlyArray<ConfigResource>
  readonly issues: ReadonlyArray<ValidationIssue>
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** The fields a mesh resource document may have (status is written by the control plane). */
const TOP_LEVEL_FIELDS = new Set(["apiVersion", "kind", "metadata", "spec", "status"])

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

interface DocContext {
  readonly file: string
  readonly documentIndex: number
  kind?: string
  namespace?: string
  name?: string
}

const issueAt = (ctx: DocContext, path: string, message: string): ValidationIssue => ({
  file: ctx.file,
  documentIndex: ctx.documentIndex,
  ...(ctx.kind !== undefined ? { kind: ctx.kind } : {}),
  ...(ctx.namespace !== undefined ? { namespace: ctx.namespace } : {}),
  ...(ctx.name !== undefined ? { name: ctx.name } : {}),
  path,
  message,
})

const stringMap = (
  value: unknown,
  path: string,
  problems: Array<[string, string]>,
  checkValue: boolean,
): Record<string, string> => {
  if (value === undefined || value === null) return {}
  if (!isRecord(value)) {
    problems.push([path, "must be a map of strings"])
    return {}
  }
  const out: Record<string, string> = {}
  for (const [key, raw] of Object.entries(value)) {
    const keyPath = renderPath([key], path)
    const keyProblem = labelKeyProblem(key)
    if (keyProblem !== undefined) problems.push([keyPath, keyProblem])
    if (typeof raw !== "string") {
      problems.push([keyPath, `value must be a string, got ${raw === null ? "null" : typeof raw}`])
      continue
    }
    if (checkValue) {
      const valueProblem = labelValueProblem(raw)
      if (valueProblem !== undefined) problems.push([keyPath, valueProblem])
    }
    out[key] = raw
  }
  return out
}

const parseMeta = (
  metadata: unknown,
  info: KindInfo | undefined,
  problems: Array<[string, string]>,
): ResourceMeta | undefined => {
  if (!isRecord(metadata)) {
    problems.push(["metadata", metadata === undefined ? "is required" : "must be a mapping"])
    return undefined
  }
  let ok = true
  const name = metadata.name
  if (typeof name !== "string" || name === "") {
    problems.push(["metadata.name", name === undefined || name === "" ? "is required" : "must be a string"])
    ok = false
  } else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    problems.push([
      "metadata.name",
      `invalid name "${name}": must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-' and '.', starting and ending with an alphanumeric character)`,
    ])
    ok = false
  }
  let namespace = metadata.namespace
  if (namespace === undefined || namespace === null || namespace === "") {
    namespace = info?.namespaced === false ? "" : "default"
  } else if (typeof namespace !== "string") {
    problems.push(["metadata.namespace", "must be a string"])
    ok = false
  } else if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    problems.push([
      "metadata.namespace",
      `invalid namespace "${namespace}": must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)`,
    ])
    ok = false
  }
  const labels = stringMap(metadata.labels, "metadata.labels", problems, true)
  const annotations = stringMap(metadata.annotations, "metadata.annotations", problems, false)
  if (!ok) return undefined
  const { resourceVersion, generation, creationTimestamp } = metadata
  return {
    name: name as string,
    namespace: namespace as string,
    labels,
    annotations,
    ...(typeof resourceVersion === "string" ? { resourceVersion } : {}),
    ...(typeof generation === "number" ? { generation } : {}),
    ...(typeof creationTimestamp === "string"
      ? { creationTimestamp }
      : creationTimestamp instanceof Date
        ? { creationTimestamp: creationTimestamp.toISOString() }
        : {}),
  }
}

/** Kind, namespace and name of a document, when it says them (to name it in an issue). */
const resourceNames = (value: Record<string, unknown>): Partial<DocContext> => {
  const metadata = isRecord(value.metadata) ? value.metadata : {}
  return {
    ...(typeof value.kind === "string" && value.kind !== "" ? { kind: value.kind } : {}),
    ...(typeof metadata.namespace === "string" && metadata.namespace !== "" ? { namespace: metadata.namespace } : {}),
    ...(typeof metadata.name === "string" ? { name: metadata.name } : {}),
  }
}

const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.lastIndexOf("/")
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) }
}

/** Validates one already-parsed document (a JS value). */
export const validateDocument = (
  file: string,
  documentIndex: number,
  value: unknown,
): { readonly resource?: ConfigResource; readonly issues: ReadonlyArray<ValidationIssue> } => {
  const ctx: DocContext = { file, documentIndex }
  if (!isRecord(value)) {
    return { issues: [issueAt(ctx, "", "document must be a mapping with apiVersion, kind and metadata")] }
  }
  // Values that were not read from YAML here (orchestrator objects, webhook requests) get the
  // same nesting bound before the validators, which recurse, walk them.
  if (valueDepthOver(value, MAX_NESTING_DEPTH)) {
    return {
      issues: [
        issueAt(
          { ...ctx, ...resourceNames(value) },
          "",
          `nested more than ${MAX_NESTING_DEPTH} levels deep (objects and arrays inside each other), over the limit of ${MAX_NESTING_DEPTH}: not validated`,
        ),
      ],
    }
  }
  const problems: Array<[string, string]> = []
  const { apiVersion, kind } = value
  if (typeof kind === "string" && kind !== "") ctx.kind = kind
  if (isRecord(value.metadata)) {
    if (typeof value.metadata.name === "string") ctx.name = value.metadata.name
    if (typeof value.metadata.namespace === "string" && value.metadata.namespace !== "")
      ctx.namespace = value.metadata.namespace
  }
  let info: KindInfo | undefined
  let version = ""
  if (typeof apiVersion !== "string" || apiVersion === "") {
    problems.push(["apiVersion", apiVersion === undefined || apiVersion === "" ? "is required" : "must be a string"])
  }
  if (typeof kind !== "string" || kind === "") {
    problems.push(["kind", kind === undefined || kind === "" ? "is required" : "must be a string"])
  }
  if (typeof apiVersion === "string" && apiVersion !== "" && typeof kind === "string" && kind !== "") {
    const split = splitApiVersion(apiVersion)
    version = split.version
    info = lookupKind(split.group, kind)
    if (info === undefined) {
      const candidates = kindsNamed(kind)
      problems.push([
        "kind",
        candidates.length === 0
          ? `unknown kind "${kind}" (apiVersion "${apiVersion}")`
          : `unknown kind "${kind}" in group "${split.group}"; expected apiVersion ${candidates
              .map((c) => `"${apiVersionOf(c)}"`)
              .join(" or ")}`,
      ])
    } else if (!info.versions.includes(version)) {
      problems.push([
        "apiVersion",
        `unsupported version "${version}" for ${kind}; accepted: ${info.versions.join(", ")}`,
      ])
      info = undefined
    }
  }
  const meta = parseMeta(value.metadata, info, problems)
  if (meta !== undefined && info?.nameProblem !== undefined) {
    const problem = info.nameProblem(meta.name)
    if (problem !== undefined) problems.push(["metadata.name", problem])
  }
  if (meta !== undefined && ctx.namespace === undefined && meta.namespace !== "") ctx.namespace = meta.namespace
  const issues: Array<ValidationIssue> = problems.map(([path, message]) => issueAt(ctx, path, message))
  if (info === undefined) return { issues }

  if (info.strict) {
    for (const key of Object.keys(value)) {
      if (!TOP_LEVEL_FIELDS.has(key)) issues.push(issueAt(ctx, renderPath([key]), "unknown field"))
    }
  }
  let body: unknown
  let prefix: string
  if (info.body === "spec") {
    body = value.spec ?? {}
    prefix = "spec"
  } else {
    const gathered: Record<string, unknown> = {}
    for (const field of info.body)
      if (value[field] !== undefined && value[field] !== null) gathered[field] = value[field]
    body = gathered
    prefix = ""
  }
  const decoded = decodeAll(info.schema as Schema.Schema<unknown, unknown>, body, { strict: info.strict })
  if (Either.isLeft(decoded)) {
    for (const problem of decoded.left) issues.push(issueAt(ctx, renderPath(problem.path, prefix), problem.message))
  }
  if (Either.isRight(decoded) && meta !== undefined && info.resourceCheck !== undefined) {
    info.resourceCheck(decoded.right, meta, (path, message) => issues.push(issueAt(ctx, path, message)))
  }
  if (issues.length > 0 || meta === undefined || Either.isLeft(decoded)) return { issues }
  return {
    resource: {
      group: info.group,
      version: info.version,
      kind: info.kind,
      meta,
      spec: decoded.right,
      source: { file, documentIndex },
    },
    issues,
  }
}

/**
 * Texts the fast parser (js-yaml) must not take, because the two readers could disagree on them:
 * directives (`%YAML 1.1` changes scalar resolution), merge keys (`<<`), null-like keys (`null:`,
 * `~:` become `""` in the `yaml` library) and a `:` directly before `,`, `]` or `}` (Go's reader
 * keeps it in the scalar before it; only the slow path rewrites those, see yaml-dialect.ts). Such
 * files take the `yaml` library path. Anchors and aliases, tags beyond the schema, complex keys
 * and every syntax error make js-yaml throw, which sends the file to that path as well.
 */
const SLOW_PATH_ONLY = /^%|<<|:[,\]}]|(?:^|[\s{,?])(?:null|Null|NULL|~)[ \t]*:(?:[ \t]|$)/m

/**
 * The documents of a text, each a JS value (`null` for an empty document), read by js-yaml within
 * the nesting and node bounds (bounded-yaml.ts); a problem when a document has too many nodes;
 * or `undefined` when the text must be read by the `yaml` library (see SLOW_PATH_ONLY) or when
 * js-yaml rejects it (the `yaml` library then reports the precise per-document errors, and
 * nesting over the bound).
 */
export const fastDocumentsBounded = (
  text: string,
): { readonly documents: ReadonlyArray<unknown> } | { readonly problem: YamlLimitProblem } | undefined =>
  SLOW_PATH_ONLY.test(text) ? undefined : jsYamlDocumentsBounded(text, { schema: GO_JS_YAML_SCHEMA, maxAliases: 0 })

/** The documents js-yaml reads (see fastDocumentsBounded), or `undefined` for any other outcome. */
export const fastDocuments = (text: string): ReadonlyArray<unknown> | undefined => {
  const fast = fastDocumentsBounded(text)
  return fast !== undefined && "documents" in fast ? fast.documents : undefined
}

/**
 * The documents of a text as the config reader reads them (the reference's YAML dialect, see
 * yaml-dialect.ts), `null` for an empty one; or the first YAML error or bound crossed. For
 * callers that need the values themselves (what an orchestrator client would send for the text).
 */
export const readYamlDocuments = (text: string): Either.Either<ReadonlyArray<unknown>, string> => {
  const fast = fastDocumentsBounded(text)
  if (fast !== undefined && "documents" in fast) return Either.right(fast.documents)
  if (fast !== undefined) return Either.left(describeYamlLimitProblem(fast.problem))
  const { documents, problem } = parseDocumentsBounded(goFlowScalars(text), { ...GO_YAML_OPTIONS, uniqueKeys: true })
  if (problem !== undefined) return Either.left(describeYamlLimitProblem(problem))
  const error = documents.flatMap((document) => document.errors)[0]
  if (error !== undefined) return Either.left(error.message)
  return Either.right(documents.map((document) => document.toJS({ maxAliasCount: -1 }) ?? null))
}

/** Validates one parsed document (an orchestrator List item by item) into `resources` / `issues`. */
const addDocument = (
  file: string,
  documentIndex: number,
  value: unknown,
  resources: Array<ConfigResource>,
  issues: Array<ValidationIssue>,
): void => {
  if (value === null || value === undefined) return
  if (isRecord(value) && value.kind === "List" && value.apiVersion === "v1" && Array.isArray(value.items)) {
    // An orchestrator List (`kubectl get -o yaml`): every item is a document of its own.
    value.items.forEach((item: unknown, i: number) => {
      const result = validateDocument(file, documentIndex, item)
      if (result.resource !== undefined) resources.push(result.resource)
      for (const issue of result.issues) {
        issues.push({ ...issue, path: issue.path === "" ? `items[${i}]` : `items[${i}].${issue.path}` })
      }
    })
    return
  }
  const result = validateDocument(file, documentIndex, value)
  if (result.resource !== undefined) resources.push(result.resource)
  for (const issue of result.issues) issues.push(issue)
}

/** Longest text of a YAML error kept in an issue (the parser quotes whole tokens: binary junk). */
const MAX_ERROR_TEXT = 160

const clip = (text: string): string => (text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text)

/** What reading a file has used so far of its bounds (see yaml-limits.ts). */
interface Budget {
  aliasNodes: number
}

/**
 * A batch in which a document crossed a nesting or node bound: a batch of one document is that
 * document's issue (its place and the bound); a batch of several is read a document at a time, so
 * the bound refuses only the documents that cross it.
 */
const parseOverBound = (
  file: string,
  text: string,
  firstDocument: number,
  lineOffset: number,
  budget: Budget,
  resources: Array<ConfigResource>,
  issues: Array<ValidationIssue>,
  problem: YamlLimitProblem,
): number => {
  const pieces = documentBatches(text, 0).filter((piece) => piece.text !== "")
  if (pieces.length <= 1) {
    issues.push({
      file,
      documentIndex: firstDocument + problem.documentIndex,
      path: "",
      message: `${problem.message} (at line ${problem.line + lineOffset})`,
    })
    return problem.documentIndex + 1
  }
  let count = 0
  for (const piece of pieces) {
    count += parseBatch(
      file,
      piece.text,
      firstDocument + count,
      lineOffset + piece.lineOffset,
      budget,
      resources,
      issues,
    )
  }
  return count
}

/**
 * Parses one batch of whole documents (see document-batches.ts) into `resources` / `issues`, the
 * documents numbered from `firstDocument` and lines from `lineOffset + 1`; returns the number
 * of documents of the batch, empty ones included.
 *
 * Fast path: js-yaml reads the batch (several times faster than the `yaml` library). When it
 * cannot, the `yaml` library reads it document by document, so syntax errors are reported per
 * document with their line, and the valid documents are still validated.
 */
const parseBatch = (
  file: string,
  text: string,
  firstDocument: number,
  lineOffset: number,
  budget: Budget,
  resources: Array<ConfigResource>,
  issues: Array<ValidationIssue>,
): number => {
  const fast = fastDocumentsBounded(text)
  if (fast !== undefined && "documents" in fast) {
    const documents = fast.documents
    for (let i = 0; i < documents.length; i++) addDocument(file, firstDocument + i, documents[i], resources, issues)
    return documents.length
  }
  // A bound crossed: the documents of the batch are read one by one, so that the others are kept.
  if (fast !== undefined)
    return parseOverBound(file, text, firstDocument, lineOffset, budget, resources, issues, fast.problem)
  const { documents: list, problem } = parseDocumentsBounded(goFlowScalars(text), {
    ...GO_YAML_OPTIONS,
    prettyErrors: true,
    uniqueKeys: true,
  })
  if (problem !== undefined)
    return parseOverBound(file, text, firstDocument, lineOffset, budget, resources, issues, problem)
  list.forEach((document, i) => {
    const documentIndex = firstDocument + i
    if (document.errors.length > 0) {
      // The first error says what is wrong; the ones after it are mostly its echo (a binary file
      // has hundreds): one issue per document, with how many more there are.
      const [error] = document.errors
      const line = error?.linePos?.[0]?.line
      const reason = clip((error?.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, ""))
      const more = document.errors.length - 1
      issues.push({
        file,
        documentIndex,
        path: "",
        message: `YAML syntax error${line !== undefined ? ` at line ${line + lineOffset}` : ""}: ${reason}${more > 0 ? ` (and ${more} more YAML error${more === 1 ? "" : "s"} in this document)` : ""}`,
      })
      return
    }
    if (document.contents === null) return
    const added = aliasExpansion(document)
    if (added > budget.aliasNodes) {
      issues.push({
        file,
        documentIndex,
        path: "",
        message: `YAML aliases expand ${Number.isFinite(added) ? `to ${added} more nodes` : "without end (an alias inside its own anchor)"}, over the limit of ${MAX_ALIAS_EXPANSION_NODES} nodes added by aliases in one file: document not read`,
      })
      return
    }
    budget.aliasNodes -= added
    let value: unknown
    try {
      value = document.toJS({ maxAliasCount: -1 })
    } catch (error) {
      issues.push({ file, documentIndex, path: "", message: `YAML error: ${clip(String(error))}` })
      return
    }
    addDocument(file, documentIndex, value, resources, issues)
  })
  return list.length
}

/**
 * Parses a (multi-document) YAML text, a batch of documents per step: the caller may yield to
 * other work between steps (the file store does, so a large file does not stall serving). Empty
 * documents are skipped; the document index counts every document of the stream, empty ones
 * included, from 0. A text over MAX_CONFIG_FILE_BYTES is not parsed; aliases may add at most
 * MAX_ALIAS_EXPANSION_NODES nodes to the file (see yaml-limits.ts).
 */
export function* parseConfigSteps(file: string, text: string): Generator<void, ParsedDocuments, void> {
  const resources: Array<ConfigResource> = []
  const issues: Array<ValidationIssue> = []
  const oversized = oversizedFileProblem(Buffer.byteLength(text, "utf8"))
  if (oversized !== undefined) {
    issues.push({ file, documentIndex: 0, path: "", message: oversized })
    return { resources, issues }
  }
  const budget: Budget = { aliasNodes: MAX_ALIAS_EXPANSION_NODES }
  let documentIndex = 0
  for (const batch of documentBatches(text)) {
    try {
      documentIndex += parseBatch(file, batch.text, documentIndex, batch.lineOffset, budget, resources, issues)
    } catch (error) {
      // Parsers and validators recurse: a document nested thousands deep overflows the stack.
      issues.push({ file, documentIndex, path: "", message: `cannot read YAML: ${clip(String(error))}` })
      return { resources, issues }
    }
    yield
  }
  return { resources, issues }
}

/** Parses a (multi-document) YAML text at once (see parseConfigSteps). */
export const parseConfigDocuments = (file: string, text: string): ParsedDocuments => {
  const steps = parseConfigSteps(file, text)
  for (;;) {
    const step = steps.next()
    if (step.done === true) return step.value
  }
}
