/**
 * Which file of the CNI network directory is the node's primary network: `--cni-conf-name` when
 * set (its `.conf`/`.conflist` twin when only that exists), else the first `.conf`/`.conflist`
 * in lexical order that parses and holds a plugin, as the container runtime itself picks it.
 * Files the installer writes itself (the mesh-owned list, the standalone config) are never a
 * primary.
 */
import { Either } from "effect"
import { type CniConfigError, hasPlugins, parseCniConfig } from "./conflist-merge.js"

export interface NetDirFile {
  readonly name: string
  /** undefined when the file could not be read. */
  readonly text: string | undefined
}

export type PrimarySelection =
  /** The file to chain into. */
  | { readonly _tag: "Found"; readonly file: string; readonly skipped: ReadonlyArray<CniConfigError> }
  /** Nothing usable yet: wait for the directory to change. */
  | { readonly _tag: "Missing"; readonly reason: string; readonly skipped: ReadonlyArray<CniConfigError> }
  /** The named file exists but cannot be used: never rewritten, waited on. */
  | { readonly _tag: "Malformed"; readonly error: CniConfigError }

const isNetworkFile = (name: string): boolean => name.endsWith(".conf") || name.endsWith(".conflist")

/** The `.conf` ↔ `.conflist` twin of a name, if it has one. */
const twinOf = (name: string): string | undefined =>
  name.endsWith(".conf") ? `${name}list` : name.endsWith(".conflist") ? name.slice(0, -"list".length) : undefined

export const selectPrimaryConfig = (
  files: ReadonlyArray<NetDirFile>,
  options: { readonly confName: string; readonly ownFiles: ReadonlyArray<string> },
): PrimarySelection => {
  const byName = new Map(files.map((f) => [f.name, f]))
  if (options.confName !== "") {
    const twin = twinOf(options.confName)
    const name = byName.has(options.confName)
      ? options.confName
      : twin !== undefined && byName.has(twin)
        ? twin
        : undefined
    if (name === undefined) return { _tag: "Missing", reason: `${options.confName} does not exist yet`, skipped: [] }
    const text = byName.get(name)?.text
    if (text === undefined) return { _tag: "Missing", reason: `${name} cannot be read`, skipped: [] }
    return Either.match(parseCniConfig(name, text), {
      onLeft: (error): PrimarySelection => ({ _tag: "Malformed", error }),
      onRight: (): PrimarySelection => ({ _tag: "Found", file: name, skipped: [] }),
    })
  }
  const skipped: Array<CniConfigError> = []
  const candidates = files
    .filter((f) => isNetworkFile(f.name) && !options.ownFiles.includes(f.name))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const candidate of candidates) {
    if (candidate.text === undefined) continue
    const parsed = parseCniConfig(candidate.name, candidate.text)
    if (Either.isLeft(parsed)) {
      skipped.push(parsed.left)
      continue
    }
    if (hasPlugins(parsed.right)) return { _tag: "Found", file: candidate.name, skipped }
  }
  return { _tag: "Missing", reason: "no valid network configuration found", skipped }
}
