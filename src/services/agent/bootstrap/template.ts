/**
 * The bootstrap template language of `--templateFile`: a small, documented subset of the Go
 * text/template the reference renders its bootstrap template with. Supported actions:
 *
 *   {{ .field }}        the value at `field` (strings as they are, numbers and booleans as text)
 *   {{ .a.b.c }}        a nested value
 *   {{ toJSON .x }}     the value as JSON (objects, lists, strings with quotes)
 *   {{ . }}             the whole value map, only with toJSON
 *   {{- ... -}}         trims the white space before / after the action, as in Go
 *   {{/* comment *\/}}  nothing
 *
 * Anything else (pipelines, if/range/with, other functions) is an error, and so is a field that
 * is not in the value map or an object printed without toJSON: a bootstrap rendered with a hole
 * in it would only fail later, inside the proxy. Errors name the template and the line.
 */
import { Either } from "effect"

export class TemplateError {
  readonly _tag = "TemplateError"
  constructor(readonly message: string) {}
}

const FIELD = /^\.(?:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)?$/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const lookup = (values: Record<string, unknown>, path: string): { found: boolean; value: unknown } => {
  if (path === ".") return { found: true, value: values }
  let current: unknown = values
  for (const segment of path.slice(1).split(".")) {
    if (!isRecord(current) || !Object.hasOwn(current, segment)) return { found: false, value: undefined }
    current = current[segment]
  }
  return { found: current !== undefined, value: current }
}

const lineOf = (text: string, index: number) => text.slice(0, index).split("\n").length

/** Renders `template` (named `name` in errors) with `values`. */
export const renderTemplate = (
  name: string,
  template: string,
  values: Record<string, unknown>,
): Either.Either<string, TemplateError> => {
  let out = ""
  let at = 0
  let trimNext = false
  for (;;) {
    const open = template.indexOf("{{", at)
    let text = template.slice(at, open === -1 ? undefined : open)
    if (trimNext) text = text.trimStart()
    if (open === -1) return Either.right(out + text)
    const close = template.indexOf("}}", open + 2)
    const line = lineOf(template, open)
    const fail = (message: string) => Either.left(new TemplateError(`${name}:${line}: ${message}`))
    if (close === -1) return fail("unclosed action: missing }}")
    let action = template.slice(open + 2, close)
    if (action.startsWith("-") && /^-\s/.test(action)) {
      text = text.trimEnd()
      action = action.slice(1)
    }
    trimNext = /\s-$/.test(action)
    if (trimNext) action = action.slice(0, -1)
    out += text
    at = close + 2
    action = action.trim()
    if (action.startsWith("/*") && action.endsWith("*/")) continue
    const words = action.split(/\s+/).filter((w) => w !== "")
    const [first, second, ...rest] = words
    if (first === undefined) return fail("empty action {{ }}")
    if (first === "toJSON") {
      if (second === undefined || rest.length > 0 || !FIELD.test(second)) {
        return fail(`toJSON takes one field, as in {{ toJSON .field }}: got {{ ${action} }}`)
      }
      const { found, value } = lookup(values, second)
      if (!found) return fail(`unknown field ${second}`)
      out += JSON.stringify(value)
      continue
    }
    if (!FIELD.test(first)) {
      return fail(`unsupported action {{ ${action} }}: only {{ .field }} and {{ toJSON .field }} are supported`)
    }
    if (second !== undefined) return fail(`unsupported action {{ ${action} }}: one field per action`)
    if (first === ".") return fail("{{ . }} prints the whole value map: use {{ toJSON . }}")
    const { found, value } = lookup(values, first)
    if (!found) return fail(`unknown field ${first}`)
    if (value === null) out += "null"
    else if (typeof value === "object") return fail(`${first} is an object or list: use {{ toJSON ${first} }}`)
    else out += String(value)
  }
}
