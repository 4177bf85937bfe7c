/**
 * What the installer must write to the CNI network directory so that the mesh plugin is
 * configured, given the directory's current files: nothing (up to date), one file (and, when a
 * `.conf` became a `.conflist`, the `.conf` to delete after), or nothing yet (no primary network,
 * or a malformed one, which is never rewritten).
 */
import { Either } from "effect"
import { type CniConfigError, formatCniConfig, insertMeshPlugin } from "./conflist-merge.js"
import { type NetDirFile, selectPrimaryConfig } from "./conflist-select.js"
import { type InstallSettings, meshOwnedName, STANDALONE_CONF_NAME } from "./install-settings.js"

export type ConfigPlan =
  | { readonly _tag: "UpToDate"; readonly file: string }
  | {
      readonly _tag: "Write"
      readonly file: string
      readonly text: string
      /** A `.conf` the written `.conflist` replaces: deleted once the list is in place. */
      readonly replaces?: string
      readonly skipped: ReadonlyArray<CniConfigError>
    }
  | { readonly _tag: "Wait"; readonly reason: string; readonly skipped: ReadonlyArray<CniConfigError> }
  | { readonly _tag: "Malformed"; readonly error: CniConfigError }

type PlanSettings = Pick<InstallSettings, "chained" | "confName" | "meshOwned" | "meshOwnedFilename">

/** The files the installer writes itself; never taken for the primary network. */
export const ownConfigFiles = (settings: PlanSettings): ReadonlyArray<string> => [
  meshOwnedName(settings),
  STANDALONE_CONF_NAME,
]

const writeUnlessSame = (
  files: ReadonlyArray<NetDirFile>,
  file: string,
  text: string,
  extra: { replaces?: string; skipped?: ReadonlyArray<CniConfigError> } = {},
): ConfigPlan =>
  files.find((f) => f.name === file)?.text === text && extra.replaces === undefined
    ? { _tag: "UpToDate", file }
    : {
        _tag: "Write",
        file,
        text,
        ...(extra.replaces !== undefined ? { replaces: extra.replaces } : {}),
        skipped: extra.skipped ?? [],
      }

export const planConfig = (
  settings: PlanSettings,
  files: ReadonlyArray<NetDirFile>,
  meshEntry: Record<string, unknown>,
): ConfigPlan => {
  if (!settings.chained) {
    return writeUnlessSame(
      files,
      settings.confName === "" ? STANDALONE_CONF_NAME : settings.confName,
      formatCniConfig(meshEntry),
    )
  }
  const selection = selectPrimaryConfig(files, { confName: settings.confName, ownFiles: ownConfigFiles(settings) })
  if (selection._tag !== "Found") return selection._tag === "Missing" ? { ...selection, _tag: "Wait" } : selection
  const primaryText = files.find((f) => f.name === selection.file)?.text ?? ""
  return Either.match(insertMeshPlugin(selection.file, primaryText, meshEntry), {
    onLeft: (error): ConfigPlan => ({ _tag: "Malformed", error }),
    onRight: (merged): ConfigPlan => {
      if (settings.meshOwned) return writeUnlessSame(files, meshOwnedName(settings), merged.text, selection)
      return writeUnlessSame(files, merged.file, merged.text, {
        ...(merged.file !== selection.file ? { replaces: selection.file } : {}),
        skipped: selection.skipped,
      })
    },
  })
}
