/**
 * Unpacking downloads from files (unbox-file.ts): gzip and tar wrappers streamed away, a
 * download that is no wrapped module left as it is, `plugin.wasm` found in an image layer, and
 * every unpacked file capped at the module limit (a small gzip of zeros does not become a large
 * file), with no temporary file left behind.
 */
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { SavedFile } from "../../../../src/layers/agent/wasm/http-get.js"
import { pluginFromTarLayer, unboxDownload } from "../../../../src/layers/agent/wasm/unbox-file.js"
import { sha256Hex } from "../../../../src/services/agent/wasm/checksum.js"
import { tarOf, tempDir, wasmModule } from "./helpers.js"

const WASM = wasmModule("unboxed")

/** Writes `bytes` as a downloaded file of `dir`. */
const downloaded = (dir: string, name: string, bytes: Buffer) =>
  Effect.promise(async (): Promise<SavedFile> => {
    const path = join(dir, name)
    await writeFile(path, bytes)
    return { path, sha256: sha256Hex(bytes), size: bytes.length }
  })

const contents = (file: SavedFile) => Effect.promise(() => readFile(file.path))

describe("unboxing files", () => {
  it.scoped("strips gzip and tar around a download, leaves other bytes alone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("mesh-wasm-unbox-")
      const limits = { cacheDir: dir, maxBytes: 1024 * 1024 }
      const tar = yield* Effect.promise(() => tarOf({ "filter.wasm": WASM }))
      for (const [name, bytes] of [
        ["tgz", gzipSync(tar)],
        ["gz", gzipSync(WASM)],
        ["tar", tar],
        ["wasm", WASM],
      ] as const) {
        const module = yield* Effect.scoped(
          Effect.flatMap(downloaded(dir, name, bytes), (file) => unboxDownload(file, limits)).pipe(
            Effect.flatMap((file) => Effect.map(contents(file), (bytes) => ({ bytes, sha256: file.sha256 }))),
          ),
        )
        expect(module.bytes, name).toEqual(WASM)
        expect(module.sha256, name).toBe(sha256Hex(WASM))
      }
      const text = Buffer.from("plain text")
      const plain = yield* Effect.scoped(
        Effect.flatMap(downloaded(dir, "text", text), (file) => unboxDownload(file, limits)),
      )
      expect(plain.path).toBe(join(dir, "text"))
      // the scopes removed every intermediate file
      expect((yield* Effect.promise(() => readdir(dir))).sort()).toEqual(["gz", "tar", "text", "tgz", "wasm"])
    }),
  )

  it.scoped("finds plugin.wasm in a gzipped or plain tar layer, and fails without one", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("mesh-wasm-unbox-")
      const limits = { cacheDir: dir, maxBytes: 1024 * 1024 }
      const tar = yield* Effect.promise(() => tarOf({ "README.md": Buffer.from("x"), "./plugin.wasm": WASM }))
      for (const [name, bytes] of [
        ["layer.tgz", gzipSync(tar)],
        ["layer.tar", tar],
      ] as const) {
        const plugin = yield* Effect.scoped(
          Effect.flatMap(downloaded(dir, name, bytes), (file) => pluginFromTarLayer(file, limits)).pipe(
            Effect.flatMap(contents),
          ),
        )
        expect(plugin, name).toEqual(WASM)
      }
      const without = yield* Effect.promise(() => tarOf({ "other.wasm": WASM }))
      const error = yield* Effect.flip(
        Effect.scoped(
          Effect.flatMap(downloaded(dir, "other.tar", without), (file) => pluginFromTarLayer(file, limits)),
        ),
      )
      expect(error.reason).toContain("plugin.wasm")
    }),
  )

  it.scoped("an archive expanding past the module limit is refused there, nothing left behind", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("mesh-wasm-unbox-")
      const limits = { cacheDir: dir, maxBytes: 256 * 1024 }
      // 8 MiB of zeros after the Wasm header compress to a few KiB
      const bomb = gzipSync(Buffer.concat([WASM, Buffer.alloc(8 * 1024 * 1024)]))
      expect(bomb.length).toBeLessThan(limits.maxBytes)
      const gz = yield* Effect.flip(
        Effect.scoped(Effect.flatMap(downloaded(dir, "bomb.gz", bomb), (file) => unboxDownload(file, limits))),
      )
      expect(gz.reason).toContain(`larger than ${limits.maxBytes} bytes (MESH_WASM_MAX_BINARY_SIZE_BYTES)`)
      const tar = yield* Effect.promise(() => tarOf({ "plugin.wasm": Buffer.alloc(1024 * 1024) }))
      const inTar = yield* Effect.flip(
        Effect.scoped(
          Effect.flatMap(downloaded(dir, "big.tgz", gzipSync(tar)), (file) => pluginFromTarLayer(file, limits)),
        ),
      )
      expect(inTar.reason).toContain(`larger than ${limits.maxBytes} bytes`)
      expect((yield* Effect.promise(() => readdir(dir))).sort()).toEqual(["big.tgz", "bomb.gz"])
    }),
  )
})
