/**
 * Unpacking a module from the archives it may come in: the image variant's layer is a (gzipped)
 * tar holding `plugin.wasm`; an http(s) download may be a gzip and/or tar around the module,
 * which is unboxed down to the first regular file (the reference's rule).
 * Tar reading uses tar-stream (present in node_modules through @kubernetes/client-node).
 */
import { promisify } from "node:util"
import { gunzip } from "node:zlib"
import { Data, Effect } from "effect"
import { extract } from "tar-stream"
import { isWasmBinary } from "./checksum.js"

export const PLUGIN_FILE = "plugin.wasm"

const gunzipAsync = promisify(gunzip)

export const isGzip = (bytes: Uint8Array) => bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b

/** POSIX/GNU tar: "ustar" at offset 257 of the first header. */
export const isTar = (bytes: Uint8Array) =>
  bytes.length >= 262 && Buffer.from(bytes.subarray(257, 262)).toString("latin1") === "ustar"

const baseName = (path: string) => path.replace(/\/+$/, "").split("/").pop() ?? ""

/** The first regular file of a tar accepted by `pick`, or undefined. */
const readTarFile = async (tar: Uint8Array, pick: (name: string) => boolean): Promise<Buffer | undefined> => {
  const entries = extract()
  entries.end(Buffer.from(tar))
  for await (const entry of entries) {
    if (entry.header.type === "file" && pick(entry.header.name)) {
      const chunks: Array<Buffer> = []
      for await (const chunk of entry) chunks.push(Buffer.from(chunk as Uint8Array))
      entries.destroy()
      return Buffer.concat(chunks)
    }
    entry.resume()
  }
  return undefined
}

export class UnpackError extends Data.TaggedError("UnpackError")<{ readonly reason: string }> {}

const attempt = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (e) => new UnpackError({ reason: `${what}: ${e instanceof Error ? e.message : e}` }),
  })

/** A tar layer (gzipped or not) → its `plugin.wasm`. */
export const pluginFromTarLayer = (layer: Uint8Array) =>
  Effect.gen(function* () {
    const tar = isGzip(layer) ? yield* attempt("gunzip layer", () => gunzipAsync(layer)) : layer
    const plugin = yield* attempt("read layer tar", () => readTarFile(tar, (name) => baseName(name) === PLUGIN_FILE))
    if (plugin === undefined) return yield* new UnpackError({ reason: `the layer has no ${PLUGIN_FILE}` })
    return plugin
  })

/** Strips gzip and tar wrappers around a downloaded module; other bytes are returned as they are. */
export const unboxModule = (bytes: Uint8Array) =>
  Effect.gen(function* () {
    let current: Buffer = Buffer.from(bytes)
    // Each round removes one wrapper; a bound keeps a crafted archive from looping forever.
    for (let round = 0; round < 4 && !isWasmBinary(current); round++) {
      if (isGzip(current)) current = yield* attempt("gunzip", () => gunzipAsync(current))
      else if (isTar(current)) {
        const file = yield* attempt("read tar", () => readTarFile(current, () => true))
        if (file === undefined) return Buffer.from(bytes)
        current = file
      } else break
    }
    return isWasmBinary(current) ? current : Buffer.from(bytes)
  })
