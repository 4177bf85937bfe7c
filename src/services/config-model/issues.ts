/**
 * Turns Effect Schema parse failures into field-path issues (`spec.http[0].route[1].weight`).
 */
import { ParseResult } from "effect"

export interface FieldProblem {
  /** Path segments relative to the decoded value. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Renders path segments as `a.b[0].c`, prefixed by `prefix` when given. */
export const renderPath = (segments: ReadonlyArray<PropertyKey>, prefix = ""): string => {
  let out = prefix
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`
    else {
      const text = String(segment)
      if (/^\d+$/.test(text)) out += `[${text}]`
      else if (/^[A-Za-z_$][\w$-]*$/.test(text)) out += out === "" ? text : `.${text}`
      else out += `[${JSON.stringify(text)}]`
    }
  }
  return out
}

const cleanMessage = (tag: string, message: string): string => {
  if (tag === "Missing") return "is required"
  if (tag === "Unexpected") return "unknown field"
  return message
}

/** Every problem in a parse error, each with its path; duplicates collapsed. */
export const parseErrorProblems = (error: ParseResult.ParseError): ReadonlyArray<FieldProblem> => {
  const seen = new Set<string>()
  const out: Array<FieldProblem> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const problem = { path: issue.path, message: cleanMessage(issue._tag, issue.message) }
    const key = `${renderPath(problem.path)}\u0000${problem.message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push(problem)
  }
  return out
}
