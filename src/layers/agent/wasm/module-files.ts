/**
 * Module files of the cache directory: written whole under a temporary name and renamed, so the
 * proxy never loads a half-written module; removed (with their emptied directory) on purge.
 */
import { randomBytes } from "node:crypto"
import { mkdir, rename, rm, rmdir, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Data, Effect } from "effect"

export class ModuleFileError extends Data.TaggedError("ModuleFileError")<{ readonly reason: string }> {}

const fileError = (e: unknown) => new ModuleFileError({ reason: e instanceof Error ? e.message : String(e) })

export const writeModuleFile = (path: string, bytes: Uint8Array) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`
      try {
        await writeFile(temporary, bytes, { mode: 0o644 })
        await rename(temporary, path)
      } catch (e) {
        await rm(temporary, { force: true })
        throw e
      }
    },
    catch: fileError,
  })

/** Removes a module file; its directory goes too once empty. Failures are only logged by the caller. */
export const removeModuleFile = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      await rm(path, { force: true })
      await rmdir(dirname(path)).catch(() => undefined)
    },
    catch: fileError,
  })
