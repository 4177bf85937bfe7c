/**
 * A line diff in unified format (`---`/`+++` headers, `@@ -a,b +c,d @@` hunks with `context`
 * lines around each change), as `meshctl proxy-status <pod>` prints the differences between what
 * the control plane would send and what the proxy holds. Myers' O(ND) algorithm: dumps are long
 * and usually nearly equal, so the cost follows the number of differences.
 */

type Op = { readonly kind: " " | "-" | "+"; readonly line: string }

/** The shortest edit script turning `a` into `b`. */
export const diffLines = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): ReadonlyArray<Op> => {
  const n = a.length
  const m = b.length
  const max = n + m
  const offset = max + 1
  const v = new Int32Array(2 * max + 3)
  // trace[d]: the furthest x per diagonal k in [-d, d] after round d (for walking back).
  const trace: Array<Int32Array> = []
  let rounds = -1
  search: for (let d = 0; d <= max; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a[x] === b[y]) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) {
        trace.push(v.slice(offset - d, offset + d + 1))
        rounds = d
        break search
      }
    }
    trace.push(v.slice(offset - d, offset + d + 1))
  }
  const ops: Array<Op> = []
  let x = n
  let y = m
  for (let d = rounds; d > 0; d--) {
    const previous = trace[d - 1]!
    const at = (k: number) => previous[k + d - 1]!
    const k = x - y
    const previousK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1
    const previousX = at(previousK)
    const previousY = previousX - previousK
    while (x > previousX && y > previousY) {
      ops.push({ kind: " ", line: a[--x]! })
      y--
    }
    if (x === previousX) ops.push({ kind: "+", line: b[--y]! })
    else ops.push({ kind: "-", line: a[--x]! })
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: " ", line: a[--x]! })
    y--
  }
  return ops.reverse()
}

/** `start,length` of a hunk side, 1-based, as unified diffs write it (`start` alone for one line). */
const range = (start: number, length: number): string =>
  length === 1 ? `${start + 1}` : `${length === 0 ? start : start + 1},${length}`

/** The unified diff of two texts; "" when they are equal. */
export const unifiedDiff = (
  a: string,
  b: string,
  names: { readonly from: string; readonly to: string },
  context = 3,
): string => {
  const ops = diffLines(splitLines(a), splitLines(b))
  const changes = ops.flatMap((op, i) => (op.kind === " " ? [] : [i]))
  if (changes.length === 0) return ""
  // Group changes whose gap of equal lines fits within two contexts into one hunk.
  const groups: Array<[number, number]> = []
  for (const i of changes) {
    const last = groups.at(-1)
    if (last !== undefined && i - last[1] - 1 <= 2 * context) last[1] = i
    else groups.push([i, i])
  }
  // Line numbers in a and b before each op.
  const aLine: Array<number> = []
  const bLine: Array<number> = []
  let ai = 0
  let bi = 0
  for (const op of ops) {
    aLine.push(ai)
    bLine.push(bi)
    if (op.kind !== "+") ai++
    if (op.kind !== "-") bi++
  }
  const out = [`--- ${names.from}`, `+++ ${names.to}`]
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context)
    const to = Math.min(ops.length - 1, last + context)
    const slice = ops.slice(from, to + 1)
    const aLength = slice.filter((op) => op.kind !== "+").length
    const bLength = slice.filter((op) => op.kind !== "-").length
    out.push(`@@ -${range(aLine[from]!, aLength)} +${range(bLine[from]!, bLength)} @@`)
    for (const op of slice) out.push(`${op.kind}${op.line}`)
  }
  return `${out.join("\n")}\n`
}

const splitLines = (text: string): ReadonlyArray<string> => (text === "" ? [] : text.replace(/\n$/, "").split("\n"))
