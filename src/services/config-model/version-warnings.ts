/**
 * Warnings for documents written at a version the reference's CRD marks deprecated: such a
 * document is valid (the API server stores it) and the API server answers with the CRD's
 * `deprecationWarning`. `meshctl validate` and the validation webhook pass these on as warnings,
 * never as errors.
 */
import { parseDocumentsBounded } from "./bounded-yaml.js"
import { deprecationWarningOf, lookupKind } from "./kinds.js"
import { fastDocumentsBounded } from "./parse.js"
import type { ValidationIssue } from "./resource.js"
import { oversizedFileProblem } from "./yaml-limits.js"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** The deprecation warning for a document of `kind` written as `apiVersion`, if its version is deprecated. */
export const deprecatedVersionWarning = (apiVersion: string, kind: string): string | undefined => {
  const slash = apiVersion.lastIndexOf("/")
  if (slash < 0) return undefined
  const info = lookupKind(apiVersion.slice(0, slash), kind)
  return info === undefined ? undefined : deprecationWarningOf(info, apiVersion.slice(slash + 1))
}

/** The warning for one document (a JS value), located like a validation issue. */
const documentWarning = (
  file: string,
  documentIndex: number,
  value: Record<string, unknown>,
  path: string,
): ValidationIssue | undefined => {
  const kind = text(value.kind)
  const message = deprecatedVersionWarning(text(value.apiVersion), kind)
  if (message === undefined) return undefined
  const metadata = isRecord(value.metadata) ? value.metadata : {}
  const name = text(metadata.name)
  const namespace = text(metadata.namespace)
  return {
    file,
    documentIndex,
    kind,
    ...(namespace !== "" ? { namespace } : {}),
    ...(name !== "" ? { name } : {}),
    path,
    message,
  }
}

/**
 * The documents of a text as JS values, read as parse.ts reads them: js-yaml when it can, else
 * the `yaml` library, within the same nesting and node bounds. A document it cannot read, or
 * whose aliases expand past the `yaml` library's default bound, is `undefined`, and nothing is
 * read from the first document over a bound on: parse.ts reports those as errors.
 */
const readDocuments = (yamlText: string): ReadonlyArray<unknown> => {
  const fast = fastDocumentsBounded(yamlText)
  if (fast !== undefined && "documents" in fast) return fast.documents
  // A document over the node bound: the parser reports it; nothing is read twice.
  if (fast !== undefined) return []
  const { documents } = parseDocumentsBounded(yamlText, { merge: true })
  return documents.map((document) => {
    if (document.errors.length > 0) return undefined
    try {
      return document.toJS()
    } catch {
      return undefined
    }
  })
}

/**
 * The deprecation warnings of a (multi-document) YAML text, documents numbered as the parser
 * numbers them (every document counted, empty ones included); the items of a v1 List each.
 * Documents that cannot be read, and texts too large to parse, give no warning: the parser
 * reports them as errors.
 */
export const documentVersionWarnings = (file: string, yamlText: string): ReadonlyArray<ValidationIssue> => {
  if (oversizedFileProblem(Buffer.byteLength(yamlText, "utf8")) !== undefined) return []
  const documents = readDocuments(yamlText)
  const warnings: Array<ValidationIssue> = []
  documents.forEach((value: unknown, documentIndex) => {
    if (!isRecord(value)) return
    if (value.kind === "List" && value.apiVersion === "v1" && Array.isArray(value.items)) {
      value.items.forEach((item: unknown, i: number) => {
        const warning = isRecord(item) ? documentWarning(file, documentIndex, item, `items[${i}]`) : undefined
        if (warning !== undefined) warnings.push(warning)
      })
      return
    }
    const warning = documentWarning(file, documentIndex, value, "apiVersion")
    if (warning !== undefined) warnings.push(warning)
  })
  return warnings
}
