/**
 * Re-indexes the module files a previous run left in the cache directory, so that a restart
 * neither downloads them again nor leaves them on disk forever (the reference's cache starts
 * empty and never looks at the directory; this is the mesh's own addition).
 *
 * Only a file whose bytes hash to the checksum its name carries is trusted: that is every module
 * pulled over http(s). A module pulled from an OCI registry is named by its manifest digest,
 * which its bytes cannot confirm, so it is skipped like a corrupt file (and fetched again when
 * asked for, which rewrites it in place). A restored module counts as last used at its file's
 * mtime, so WASM_MODULE_EXPIRY purges it on the usual schedule.
 */
import { readdir, readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect } from "effect"
import { parseModuleFilePlace, type WasmCacheIndex } from "../../../services/agent/wasm/cache-index.js"
import { isWasmBinary, sha256Hex } from "../../../services/agent/wasm/checksum.js"

const reasonOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** Entries of a directory, or none when it is missing or unreadable (logged). */
const listDirectory = (path: string) =>
  Effect.tryPromise(() => readdir(path, { withFileTypes: true })).pipe(
    Effect.catchAll((e) => {
      const missing = (e.error as NodeJS.ErrnoException | undefined)?.code === "ENOENT"
      return missing
        ? Effect.succeed([])
        : Effect.logWarning(`cannot list Wasm cache directory ${path}: ${reasonOf(e.error)}`).pipe(Effect.as([]))
    }),
  )

/** Restores one file into the index; true when it was indexed. */
const restoreFile = (index: WasmCacheIndex, path: string, nameHash: string, checksum: string) =>
  Effect.gen(function* () {
    const { bytes, mtimeMs } = yield* Effect.tryPromise(async () => ({
      bytes: await readFile(path),
      mtimeMs: (await stat(path)).mtimeMs,
    }))
    if (sha256Hex(bytes) !== checksum || !isWasmBinary(bytes)) {
      yield* Effect.logWarning(
        `skipping Wasm cache file ${path}: its content does not match the sha256 in its name (corrupt, or an OCI module named by its manifest digest)`,
      )
      return false
    }
    // A future mtime (clock moved back) would postpone the purge indefinitely: cap it at now.
    const now = yield* Clock.currentTimeMillis
    index.restore(nameHash, checksum, path, Math.min(Math.floor(mtimeMs), now))
    return true
  }).pipe(
    Effect.catchAll((e) =>
      Effect.logWarning(`skipping Wasm cache file ${path}: ${reasonOf(e.error)}`).pipe(Effect.as(false)),
    ),
  )

/** Scans `cacheDir` (`<nameHash>/<checksum>.wasm`) into `index`; returns how many were restored. */
export const restoreCacheIndex = (cacheDir: string, index: WasmCacheIndex) =>
  Effect.gen(function* () {
    let restored = 0
    for (const directory of yield* listDirectory(cacheDir)) {
      if (!directory.isDirectory()) continue
      const directoryPath = join(cacheDir, directory.name)
      for (const file of yield* listDirectory(directoryPath)) {
        const place = parseModuleFilePlace(directory.name, file.name)
        if (place === undefined || !file.isFile()) continue
        if (yield* restoreFile(index, join(directoryPath, file.name), place.nameHash, place.checksum)) restored++
      }
    }
    if (restored > 0) yield* Effect.logInfo(`restored ${restored} Wasm module(s) from the cache directory ${cacheDir}`)
    return restored
  })
