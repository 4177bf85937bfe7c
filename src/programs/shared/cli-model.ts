/**
 * Reads a binary's @effect/cli command tree into a CommandModel (flags, their value types,
 * defaults and descriptions; subcommands; positional usage) for the argv check and the help
 * page. @effect/cli exposes the tree's shape only through its internal node tags, which this
 * walk follows; the version is pinned in package.json, and test/programs/cli.test.ts fails if
 * a flag goes missing from help.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import { Option } from "effect"
import { annotate, type CommandModel, type FlagModel, type TreeNotes } from "../../services/cli/command-model.js"
import { type FlagNote, flagNoteOf } from "./options.js"

/** The node fields the walk reads (see @effect/cli/src/internal/options.ts, args.ts, commandDescriptor.ts). */
interface Node {
  readonly _tag: string
  readonly [field: string]: unknown
}

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")
const plainText = (doc: unknown): string =>
  HelpDoc.toAnsiText(doc as HelpDoc.HelpDoc)
    .replace(ansi, "")
    .replace(/\s+/g, " ")
    .trim()

const dashed = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`)

const valueNameOf = (single: Node): string | undefined => {
  const pseudo = single.pseudoName as Option.Option<string>
  const primitive = single.primitiveType as Node
  if (primitive._tag === "Bool") return undefined
  if (Option.isSome(pseudo)) return pseudo.value === "text" ? "string" : pseudo.value
  switch (primitive._tag) {
    case "Choice":
      return (primitive.alternatives as ReadonlyArray<readonly [string, unknown]>).map(([name]) => name).join("|")
    case "Integer":
      return "int"
    case "Float":
      return "float"
    case "Path":
      return "path"
    default:
      return "string"
  }
}

interface Context {
  readonly note?: FlagNote | undefined
  readonly fallback?: { readonly value: unknown } | undefined
  readonly repeated?: boolean
}

const defaultText = (context: Context): string | undefined => {
  if (context.note !== undefined) return context.note.default
  if (context.fallback === undefined) return undefined
  const value = context.fallback.value
  if (Option.isOption(value)) return Option.isSome(value) ? String(value.value) : undefined
  return String(value)
}

const collectFlags = (node: Node, context: Context, out: Array<FlagModel>): void => {
  switch (node._tag) {
    case "Single":
      out.push({
        names: [dashed(node.name as string), ...(node.aliases as ReadonlyArray<string>).map(dashed)],
        valueName: valueNameOf(node),
        repeated: context.repeated === true,
        description: plainText(node.description),
        default: defaultText(context),
        env: context.note?.env,
      })
      return
    case "Map":
      collectFlags(node.options as Node, { ...context, note: context.note ?? flagNoteOf(node.f) }, out)
      return
    case "Both":
    case "OrElse":
      collectFlags(node.left as Node, context, out)
      collectFlags(node.right as Node, context, out)
      return
    case "Variadic":
    case "KeyValueMap":
      collectFlags(node.argumentOption as Node, { ...context, repeated: true }, out)
      return
    case "WithDefault":
      collectFlags(node.options as Node, { ...context, fallback: context.fallback ?? { value: node.fallback } }, out)
      return
    case "WithFallback":
      collectFlags(node.options as Node, context, out)
      return
    default:
      return
  }
}

const argsUsage = (node: Node): string => {
  switch (node._tag) {
    case "Single":
      return `<${Option.getOrElse(node.pseudoName as Option.Option<string>, () => node.name as string)}>`
    case "Map":
    case "WithFallbackConfig":
      return argsUsage(node.args as Node)
    case "Both":
      return [argsUsage(node.left as Node), argsUsage(node.right as Node)].filter((s) => s !== "").join(" ")
    case "Variadic":
      return `${argsUsage(node.args as Node)}...`
    case "WithDefault":
      return `[${argsUsage(node.args as Node)}]`
    default:
      return ""
  }
}

const modelOf = (node: Node): CommandModel => {
  switch (node._tag) {
    case "Map":
      return modelOf(node.command as Node)
    case "Subcommands":
      return { ...modelOf(node.parent as Node), children: (node.children as ReadonlyArray<Node>).map(modelOf) }
    default: {
      const flags: Array<FlagModel> = []
      if (node.options !== undefined) collectFlags(node.options as Node, {}, flags)
      return {
        name: node.name as string,
        description: plainText(node.description),
        flags,
        args: node.args === undefined ? "" : argsUsage(node.args as Node),
        children: [],
      }
    }
  }
}

/** The tree of `root`; with `notes`, its aliases folded and group flags attached (see TreeNotes). */
export const commandModel = (root: { readonly descriptor: unknown }, notes?: TreeNotes): CommandModel => {
  const model = modelOf(root.descriptor as Node)
  return notes === undefined ? model : annotate(model, notes)
}
