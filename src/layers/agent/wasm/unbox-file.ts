/**
 * Unpacking a downloaded file without holding it in memory: gzip and tar wrappers are streamed
 * into new temporary files, each capped at the module size limit (a small gzip can expand to
 * gigabytes). The rules are the reference's: an http(s) download is unboxed down to the first
 * regular file, at most four wrappers deep, and left as it is when that does not end in a Wasm
 * module; an image's tar layer must hold `plugin.wasm`.
 */
import { createReadStream } from "node:fs"
import { createGunzip } from "node:zlib"
import { Data, Effect, type Scope } from "effect"
import { extract } from "tar-stream"
import { isWasmBinary } from "../../../services/agent/wasm/checksum.js"
import { isGzip, isTar, PLUGIN_FILE } from "../../../services/agent/wasm/unpack.js"
import { abortable } from "./abortable.js"
import { type SavedFile, saveStream } from "./http-get.js"
import { readHead, temporaryFile } from "./module-files.js"

export class UnboxError extends Data.TaggedError("UnboxError")<{ readonly reason: string }> {}

export interface UnboxLimits {
  readonly cacheDir: string
  readonly maxBytes: number
}

const unpackedTooLarge = (maxBytes: number) =>
  new Error(`the unpacked module is larger than ${maxBytes} bytes (MESH_WASM_MAX_BINARY_SIZE_BYTES)`)

const unboxError = (what: string) => (e: unknown) =>
  new UnboxError({ reason: `${what}: ${e instanceof Error ? e.message : String(e)}` })

const baseName = (path: string) => path.replace(/\/+$/, "").split("/").pop() ?? ""

const gunzipFile = (from: SavedFile, limits: UnboxLimits) =>
  Effect.gen(function* () {
    const to = yield* temporaryFile(limits.cacheDir).pipe(Effect.mapError(unboxError("gunzip")))
    return yield* abortable(
      (signal) =>
        saveStream([createReadStream(from.path), createGunzip()], to, limits.maxBytes, unpackedTooLarge, signal),
      unboxError("gunzip"),
    )
  })

/** The first regular file of a tar accepted by `pick`, into a new file; undefined when none is. */
const tarFile = (from: SavedFile, limits: UnboxLimits, pick: (name: string) => boolean) =>
  Effect.gen(function* () {
    const to = yield* temporaryFile(limits.cacheDir).pipe(Effect.mapError(unboxError("read tar")))
    return yield* abortable(async (signal) => {
      const input = createReadStream(from.path)
      const entries = extract()
      input.on("error", (e) => entries.destroy(e))
      signal.addEventListener("abort", () => entries.destroy(new Error("aborted")), { once: true })
      input.pipe(entries)
      try {
        for await (const entry of entries) {
          if (entry.header.type === "file" && pick(entry.header.name))
            return await saveStream(
              [entry as unknown as NodeJS.ReadableStream],
              to,
              limits.maxBytes,
              unpackedTooLarge,
              signal,
            )
          entry.resume()
        }
        return undefined
      } finally {
        input.destroy()
        entries.destroy()
      }
    }, unboxError("read tar"))
  })

/** Strips gzip and tar wrappers around a download; a download that is no wrapped module comes back as it is. */
export const unboxDownload = (
  download: SavedFile,
  limits: UnboxLimits,
): Effect.Effect<SavedFile, UnboxError, Scope.Scope> =>
  Effect.gen(function* () {
    let current = download
    // Each round removes one wrapper; a bound keeps a crafted archive from looping forever.
    for (let round = 0; round < 4; round++) {
      const head = yield* readHead(current.path).pipe(Effect.mapError(unboxError("read download")))
      if (isWasmBinary(head)) return current
      if (isGzip(head)) current = yield* gunzipFile(current, limits)
      else if (isTar(head)) {
        const file = yield* tarFile(current, limits, () => true)
        if (file === undefined) return download
        current = file
      } else break
    }
    const head = yield* readHead(current.path).pipe(Effect.mapError(unboxError("read download")))
    return isWasmBinary(head) ? current : download
  })

/** An image's tar layer (gzipped or not) → its `plugin.wasm`. */
export const pluginFromTarLayer = (layer: SavedFile, limits: UnboxLimits) =>
  Effect.gen(function* () {
    const head = yield* readHead(layer.path).pipe(Effect.mapError(unboxError("read layer")))
    const tar = isGzip(head) ? yield* gunzipFile(layer, limits) : layer
    const plugin = yield* tarFile(tar, limits, (name) => baseName(name) === PLUGIN_FILE)
    if (plugin === undefined) return yield* new UnboxError({ reason: `the layer has no ${PLUGIN_FILE}` })
    return plugin
  })
