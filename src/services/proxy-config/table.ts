/**
 * Columns aligned as the reference's tables are (Go's tabwriter with min width 0, padding 5,
 * space padding): every cell but the last of a row is padded to its column's widest cell plus
 * five spaces (`padding`: the node proxy's tables use one); the last cell is printed as is.
 */
const PADDING = 5

export const formatTable = (rows: ReadonlyArray<ReadonlyArray<string>>, padding: number = PADDING): string => {
  const widths: Array<number> = []
  for (const row of rows) {
    row.slice(0, -1).forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  }
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + padding, " "))).join(""),
    )
    .map((line) => `${line}\n`)
    .join("")
}
