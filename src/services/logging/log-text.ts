/**
 * What a log line may hold (issue 34 item 4). Callers choose node ids, NACK messages, request
 * paths and resource names, and those reach the log: uncut, a 3 MB query became a 3 MB line;
 * unescaped, a newline in a node id wrote a line that looked like the server's own, and ANSI
 * escapes recoloured or cleared the terminal of whoever read the log.
 *
 * The logger (layers/logging.ts) applies `escapeControl` and a byte bound to every message,
 * annotation value and stack it writes, so no call site can forget; call sites that put a
 * caller's value into a message cut it shorter with `callerText`, so that one long value does
 * not crowd out the rest of the line. Pure functions, no state.
 */

/** Longest caller-supplied value a call site puts into a log line (bytes of UTF-8). */
export const MAX_CALLER_VALUE_BYTES = 256
/**
 * Longest message the logger writes (bytes of UTF-8, after escaping). Large enough for the
 * few multi-line dumps the binaries log on purpose (an iptables-restore input, a kubeconfig),
 * which come out on one line with `\n` escapes.
 */
export const MAX_MESSAGE_BYTES = 8 * 1024
/** Longest annotation value (`key=value` in text, a field in JSON). */
export const MAX_FIELD_BYTES = 1024
/** Longest stack or error text attached to a line. */
export const MAX_STACK_BYTES = 8 * 1024

/**
 * Characters a log line must not carry raw: C0 controls (newline, carriage return, tab, ESC, …),
 * DEL, C1 controls (U+009B is a one-character ANSI escape introducer), the Unicode line and
 * paragraph separators (some viewers break lines at them) and the bidirectional overrides and
 * isolates (which reorder what a reader sees).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const UNSAFE_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above, keeping line feeds
const UNSAFE_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" }

const escapeOne = (c: string): string => NAMED[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` with every unsafe character written as an escape (`\n`, `\t`, `\u001b`), on one line. */
export const escapeControl = (text: string): string => (UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text)

/**
 * `text` with unsafe characters escaped except line feeds, each line of which that does not
 * already start with whitespace indented by a tab: for stacks, whose lines stay lines but can
 * never start like a log line of their own.
 */
export const escapeBlock = (text: string): string =>
  text
    .replace(UNSAFE_BUT_NEWLINE, escapeOne)
    .split("\n")
    .map((line) => (line === "" || line.startsWith(" ") || line.startsWith("\t") ? line : `\t${line}`))
    .join("\n")

/** UTF-8 length of `text` without encoding it when it is clearly short enough. */
const byteLength = (text: string, max: number): number =>
  text.length * 3 <= max ? text.length : Buffer.byteLength(text, "utf8")

/** The first `max` UTF-16 units of `text`, without splitting a surrogate pair. */
const headUnits = (text: string, max: number): string => {
  if (text.length <= max) return text
  const last = text.charCodeAt(max - 1)
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max)
}

/** The first at most `max` bytes of `text`'s UTF-8, ending on a whole character. */
const headBytes = (text: string, max: number): string => {
  // `max` UTF-16 units encode to at least `max` bytes: only that much of a long text is encoded.
  const bytes = Buffer.from(headUnits(text, max), "utf8")
  if (bytes.length <= max) return bytes.toString("utf8")
  let end = max
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString("utf8")
}

/** The marker after a cut text, with the length it had. */
export const cutMarker = (originalBytes: number): string => `…[cut, ${originalBytes} bytes]`

/**
 * `text` as it may appear in a log line: control characters escaped, then at most `max` bytes
 * of it followed by `…[cut, N bytes]` naming the length of the original (UTF-8 bytes) when it
 * was longer. Only the head of a long text is escaped, so a 3 MB value costs one slice.
 */
export const boundedText = (text: string, max: number): string => {
  const fits = byteLength(text, max) <= max
  if (fits && !UNSAFE.test(text)) return text
  // Escaping only lengthens a text, so the first `max` units hold everything that is kept.
  const escaped = escapeControl(headUnits(text, max))
  if (fits && byteLength(escaped, max) <= max) return escaped
  return `${headBytes(escaped, max)}${cutMarker(Buffer.byteLength(text, "utf8"))}`
}

/** Like `boundedText`, for a multi-line block (a stack): lines kept, each indented (see escapeBlock). */
export const boundedBlock = (text: string, max: number): string => {
  const fits = byteLength(text, max) <= max
  const escaped = escapeBlock(headUnits(text, max))
  if (fits && byteLength(escaped, max) <= max) return escaped
  return `${headBytes(escaped, max)}${cutMarker(Buffer.byteLength(text, "utf8"))}`
}

/**
 * A caller's value for a log message: escaped and cut to `max` bytes (MAX_CALLER_VALUE_BYTES by
 * default), with its original length when cut. The logger's own bound is a backstop; this keeps
 * a line readable when a caller sends megabytes.
 */
export const callerText = (value: string, max: number = MAX_CALLER_VALUE_BYTES): string => boundedText(value, max)
