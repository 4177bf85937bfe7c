/**
 * A small RFC 6902 applier (add, remove, replace; JSON pointers with ~0/~1 escapes; `-` appends)
 * to check that the injector's patches turn the original pod into the injected one.
 */
type Json = unknown

const unescapeToken = (token: string): string => token.replaceAll("~1", "/").replaceAll("~0", "~")

const tokensOf = (pointer: string): Array<string> => {
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw new Error(`invalid JSON pointer ${pointer}`)
  return pointer.slice(1).split("/").map(unescapeToken)
}

const indexOf = (list: Array<Json>, token: string, forAdd: boolean): number => {
  if (token === "-" && forAdd) return list.length
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`invalid array index ${token}`)
  const index = Number(token)
  if (index > list.length || (!forAdd && index === list.length)) throw new Error(`index ${token} out of bounds`)
  return index
}

export const applyPatch = (
  document: Json,
  ops: ReadonlyArray<{ readonly op: string; readonly path: string; readonly value?: unknown }>,
): Json => {
  let root: Json = structuredClone(document)
  for (const op of ops) {
    const tokens = tokensOf(op.path)
    if (tokens.length === 0) {
      if (op.op === "remove") throw new Error("cannot remove the root")
      root = structuredClone(op.value)
      continue
    }
    let parent: Json = root
    for (const token of tokens.slice(0, -1)) {
      if (Array.isArray(parent)) parent = parent[indexOf(parent, token, false)]
      else if (typeof parent === "object" && parent !== null && token in parent)
        parent = (parent as Record<string, Json>)[token]
      else throw new Error(`path ${op.path} does not exist`)
    }
    const last = tokens.at(-1) as string
    const value = structuredClone(op.value)
    if (Array.isArray(parent)) {
      const index = indexOf(parent, last, op.op === "add")
      if (op.op === "add") parent.splice(index, 0, value)
      else if (op.op === "remove") parent.splice(index, 1)
      else if (op.op === "replace") parent[index] = value
      else throw new Error(`unsupported op ${op.op}`)
    } else if (typeof parent === "object" && parent !== null) {
      const record = parent as Record<string, Json>
      if (op.op === "add") record[last] = value
      else if (op.op === "remove" || op.op === "replace") {
        if (!(last in record)) throw new Error(`${op.op} of missing ${op.path}`)
        if (op.op === "remove") delete record[last]
        else record[last] = value
      } else throw new Error(`unsupported op ${op.op}`)
    } else throw new Error(`path ${op.path} does not exist`)
  }
  return root
}
