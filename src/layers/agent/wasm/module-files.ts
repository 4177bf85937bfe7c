/**
 * Files of the cache directory. A pull writes only temporary files (`.download-<random>.tmp` at
 * the top of the cache directory, removed with the pull's scope whatever happens); the module
 * is renamed into its place `<nameHash>/<checksum>.wasm` once complete and verified, so the proxy
 * never loads a half-written module. Temporary files a killed agent left are removed at start.
 * Modules are removed (with their emptied directory) on purge.
 */
import { randomBytes } from "node:crypto"
import { mkdir, open, readdir, rename, rm, rmdir } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Data, Effect } from "effect"

export class ModuleFileError extends Data.TaggedError("ModuleFileError")<{ readonly reason: string }> {}

const fileError = (e: unknown) => new ModuleFileError({ reason: e instanceof Error ? e.message : String(e) })

const TEMP_PREFIX = ".download-"
const TEMP_SUFFIX = ".tmp"

/** A fresh temporary path in `cacheDir`, removed when the scope closes (a no-op once renamed). */
export const temporaryFile = (cacheDir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await mkdir(cacheDir, { recursive: true })
        return join(cacheDir, `${TEMP_PREFIX}${randomBytes(8).toString("hex")}${TEMP_SUFFIX}`)
      },
      catch: fileError,
    }),
    (path) => Effect.promise(() => rm(path, { force: true })),
  )

/** Removes the temporary files of pulls a previous run did not finish; how many. */
export const removeStaleTemporaryFiles = (cacheDir: string) =>
  Effect.tryPromise({
    try: async () => {
      const names = await readdir(cacheDir).catch(() => [] as Array<string>)
      const stale = names.filter((name) => name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX))
      for (const name of stale) await rm(join(cacheDir, name), { force: true })
      return stale.length
    },
    catch: fileError,
  })

/** The first `length` bytes of a file (fewer when it is shorter). */
export const readHead = (path: string, length = 512) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(path, "r")
      try {
        const buffer = Buffer.alloc(length)
        const { bytesRead } = await handle.read(buffer, 0, length, 0)
        return buffer.subarray(0, bytesRead)
      } finally {
        await handle.close()
      }
    },
    catch: fileError,
  })

/** Moves a complete, verified temporary file to its place in the cache. */
export const installModuleFile = (temporary: string, path: string) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      await rename(temporary, path)
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
