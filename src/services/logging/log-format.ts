/**
 * One log line as the binaries write it: console columns (time, level, scope, caller, message
 * and `key=value` fields, tab-separated, a stack on the lines below) or one JSON object per line
 * (`--log_as_json`). Every message, field and stack is escaped and bounded here (log-text.ts),
 * whatever the call site did, so a caller's text can neither forge a line nor make one huge.
 */
import { boundedBlock, boundedText, MAX_FIELD_BYTES, MAX_MESSAGE_BYTES, MAX_STACK_BYTES } from "./log-text.js"
import { DEFAULT_SCOPE } from "./scopes.js"

export interface LogRecord {
  readonly time: Date
  readonly level: string
  readonly scope: string
  /** The innermost span, when the scope logs callers. */
  readonly caller?: string | undefined
  readonly message: string
  readonly fields: ReadonlyArray<readonly [string, unknown]>
  /** A stack or an error's text, written below the line (console) or as `stack` (JSON). */
  readonly stack?: string | undefined
}

/** Longest annotation key (keys are the code's own; bounded all the same). */
const MAX_KEY_BYTES = 128

/**
 * A field value for JSON: numbers, booleans and null as they are; a string escaped and bounded;
 * anything else as its JSON when that is short and plain, else as bounded text.
 */
const jsonField = (value: unknown): unknown => {
  if (typeof value === "string") return boundedText(value, MAX_FIELD_BYTES)
  if (value === null || value === undefined || typeof value === "number" || typeof value === "boolean") return value
  try {
    const json = JSON.stringify(value)
    if (json !== undefined && boundedText(json, MAX_FIELD_BYTES) === json) return value
  } catch {
    // circular or a bigint: its text below
  }
  return fieldText(value)
}

/** A field value for the console: its text (JSON for non-strings), escaped and bounded. */
const fieldText = (value: unknown): string => {
  if (typeof value === "string") return boundedText(value, MAX_FIELD_BYTES)
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return boundedText(text, MAX_FIELD_BYTES)
}

/** The line (with its final newline, and a stack below it on the console) for `record`. */
export const formatLogLine = (record: LogRecord, asJson: boolean): string => {
  const msg = boundedText(record.message, MAX_MESSAGE_BYTES)
  const scope = boundedText(record.scope, MAX_KEY_BYTES)
  const caller = record.caller === undefined ? undefined : boundedText(record.caller, MAX_KEY_BYTES)
  const time = record.time.toISOString()
  if (asJson) {
    const fields: Record<string, unknown> = {}
    for (const [key, value] of record.fields) fields[boundedText(key, MAX_KEY_BYTES)] = jsonField(value)
    return `${JSON.stringify({
      time,
      level: record.level,
      scope,
      ...(caller !== undefined ? { caller } : {}),
      msg,
      ...fields,
      ...(record.stack !== undefined ? { stack: boundedBlock(record.stack, MAX_STACK_BYTES) } : {}),
    })}\n`
  }
  const extra = record.fields.map(([key, value]) => `${boundedText(key, MAX_KEY_BYTES)}=${fieldText(value)}`).join(" ")
  const columns = [time, record.level]
  if (scope !== DEFAULT_SCOPE) columns.push(scope)
  if (caller !== undefined) columns.push(caller)
  columns.push(extra === "" ? msg : `${msg}\t${extra}`)
  return `${columns.join("\t")}\n${record.stack !== undefined ? `${boundedBlock(record.stack, MAX_STACK_BYTES)}\n` : ""}`
}
