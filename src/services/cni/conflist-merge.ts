/**
 * Chaining the mesh plugin into a node's CNI network configuration, and taking it out again.
 * Pure text-to-text functions: the installer reads a file, calls these, and writes the result.
 *
 * Rules (the reference's, except where noted):
 * - A `.conflist` keeps every field and plugin in order; every earlier mesh entry is dropped and
 *   the current one appended last, so the mesh plugin runs after the primary network's plugins.
 * - A `.conf` (one plugin) becomes a list `{cniVersion, name, plugins: [original, mesh]}` to be
 *   saved as `.conflist`. Unlike the reference, the original object is kept whole (its own
 *   `cniVersion` and `name` included) and lends the list its version and name, as libcni does
 *   when it reads a `.conf` as a list: removal can then give the original back unchanged.
 * - The mesh entry carries no `cniVersion` of its own inside a list (the list's applies).
 * - Anything that is not valid JSON in the expected shape is a CniConfigError, never rewritten.
 */
import { Data, Either } from "effect"
import { MESH_CNI_PLUGIN_TYPE } from "./plugin-config.js"

/** A CNI config file that cannot be used as it is (bad JSON, wrong shape). */
export class CniConfigError extends Data.TaggedError("CniConfigError")<{
  readonly file: string
  readonly reason: string
}> {
  override get message(): string {
    return `CNI config ${this.file}: ${this.reason}`
  }
}

type JsonObject = Record<string, unknown>

/** A parsed CNI config file: a network list, or a single network (a `.conf`). */
export type CniConfigFile =
  | { readonly _tag: "List"; readonly config: JsonObject; readonly plugins: ReadonlyArray<JsonObject> }
  | { readonly _tag: "Single"; readonly config: JsonObject }

/** Used when a `.conf` lacks them (the reference's fixed list name and version). */
export const DEFAULT_LIST_NAME = "k8s-pod-network"
export const DEFAULT_LIST_CNI_VERSION = "0.3.1"

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const isConflistName = (file: string): boolean => file.endsWith(".conflist")

/** Parses a CNI config file; a `.conflist` must be a list, a `.conf` may be either (runtimes accept both). */
export const parseCniConfig = (file: string, text: string): Either.Either<CniConfigFile, CniConfigError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return Either.left(new CniConfigError({ file, reason: `not valid JSON (${(error as Error).message})` }))
  }
  if (!isObject(parsed)) return Either.left(new CniConfigError({ file, reason: "not a JSON object" }))
  if ("plugins" in parsed) {
    const plugins = parsed.plugins
    if (!Array.isArray(plugins)) return Either.left(new CniConfigError({ file, reason: '"plugins" is not a list' }))
    const index = plugins.findIndex((p) => !isObject(p) || typeof p.type !== "string" || p.type === "")
    if (index >= 0)
      return Either.left(new CniConfigError({ file, reason: `plugins[${index}] is not an object with a "type"` }))
    return Either.right({ _tag: "List", config: parsed, plugins: plugins as ReadonlyArray<JsonObject> })
  }
  if (isConflistName(file)) return Either.left(new CniConfigError({ file, reason: 'a .conflist without "plugins"' }))
  if (typeof parsed.type !== "string" || parsed.type === "")
    return Either.left(new CniConfigError({ file, reason: 'no "type" (and no "plugins")' }))
  return Either.right({ _tag: "Single", config: parsed })
}

/** Whether a parsed file holds at least one network plugin (an empty list is skipped when choosing a primary). */
export const hasPlugins = (config: CniConfigFile): boolean => config._tag === "Single" || config.plugins.length > 0

const isMeshEntry = (plugin: JsonObject): boolean => plugin.type === MESH_CNI_PLUGIN_TYPE

/** How every config file this package writes is laid out: two-space JSON and a final newline. */
export const formatCniConfig = (config: unknown): string => `${JSON.stringify(config, null, 2)}\n`

/** The file name a merged config is saved under: a `.conf` turned into a list becomes `.conflist`. */
export const mergedFileName = (file: string, parsed: CniConfigFile): string =>
  parsed._tag === "Single" && file.endsWith(".conf") ? `${file}list` : file

/**
 * The existing config `text` of `file` with `meshEntry` chained last (earlier mesh entries
 * dropped), and the name to save it under.
 */
export const insertMeshPlugin = (
  file: string,
  text: string,
  meshEntry: JsonObject,
): Either.Either<{ readonly file: string; readonly text: string }, CniConfigError> =>
  Either.map(parseCniConfig(file, text), (parsed) => {
    const { cniVersion: _inheritedFromList, ...entry } = meshEntry
    if (parsed._tag === "List") {
      const plugins = [...parsed.plugins.filter((p) => !isMeshEntry(p)), entry]
      return { file, text: formatCniConfig({ ...parsed.config, plugins }) }
    }
    const original = parsed.config
    const list = {
      cniVersion: typeof original.cniVersion === "string" ? original.cniVersion : DEFAULT_LIST_CNI_VERSION,
      name: typeof original.name === "string" ? original.name : DEFAULT_LIST_NAME,
      plugins: [original, entry],
    }
    return { file: mergedFileName(file, parsed), text: formatCniConfig(list) }
  })

/** Whether the config chains the mesh plugin. */
export const containsMeshPlugin = (parsed: CniConfigFile): boolean =>
  parsed._tag === "List" ? parsed.plugins.some(isMeshEntry) : isMeshEntry(parsed.config)

/**
 * The config without any mesh entry, or undefined when it had none (nothing to write). With
 * `restoreSingle` (the installer turned this list out of a `.conf`), a list left with one plugin
 * is given back as that plugin alone, the `.conf` it was.
 */
export const removeMeshPlugin = (
  file: string,
  text: string,
  options: { readonly restoreSingle?: boolean } = {},
): Either.Either<string | undefined, CniConfigError> =>
  Either.map(parseCniConfig(file, text), (parsed) => {
    if (parsed._tag === "Single" || !parsed.plugins.some(isMeshEntry)) return undefined
    const plugins = parsed.plugins.filter((p) => !isMeshEntry(p))
    if (options.restoreSingle === true && plugins.length === 1) return formatCniConfig(plugins[0])
    return formatCniConfig({ ...parsed.config, plugins })
  })
