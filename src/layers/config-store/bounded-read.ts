/**
 * Reading one input file within a size bound, for every reader of config a caller names (the
 * `--configDir` store, meshctl's `-f`): the file is opened without blocking (a FIFO would block
 * `open` until a writer comes), its type and size are taken from the open descriptor (not from
 * the path, which may change in between), only a regular file is read, and never more than
 * `maxBytes + 1` bytes of it, so a file that grows while read, or a device such as /dev/zero
 * reached by a link, costs at most the bound. Standard input is read the same way.
 */
import type { Stats } from "node:fs"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { specialFileKind } from "./config-tree.js"

export type BoundedRead =
  /** The text of at most `maxBytes` (`stats` of the file as it was opened; none for a stream). */
  | { readonly _tag: "Text"; readonly text: string; readonly stats?: Stats }
  /** Larger than the bound: `bytes` is its size, or (for input that grows) the bytes seen. */
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly stats?: Stats }
  /** Not a regular file: `kind` says what it is (`a FIFO (named pipe)`, `a directory`, ...). */
  | { readonly _tag: "NotRegular"; readonly kind: string }
  /** It could not be opened or read: the errno code (`ENOENT`, `EACCES`, `ELOOP`) and message. */
  | { readonly _tag: "Failed"; readonly code: string | undefined; readonly message: string }

const READ_CHUNK = 64 * 1024

const failed = (error: unknown): BoundedRead => ({
  _tag: "Failed",
  code:
    typeof error === "object" && error !== null && "code" in error
      ? String((error as { code: unknown }).code)
      : undefined,
  message: String((error as Error)?.message ?? error),
})

/** Reads the regular file at `file` if it holds at most `maxBytes` bytes (see the module doc). */
export const readBoundedFile = async (file: string, maxBytes: number): Promise<BoundedRead> => {
  let handle: fsp.FileHandle
  try {
    handle = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch (error) {
    return failed(error)
  }
  try {
    const stats = await handle.stat()
    if (stats.isDirectory()) return { _tag: "NotRegular", kind: "a directory" }
    if (!stats.isFile()) return { _tag: "NotRegular", kind: specialFileKind(stats) }
    if (stats.size > maxBytes) return { _tag: "TooLarge", bytes: stats.size, stats }
    // Read to the end, but stop one byte past the bound: the file may have grown since fstat.
    const chunks: Array<Buffer> = []
    let total = 0
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(READ_CHUNK, maxBytes + 1 - total))
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
      if (total > maxBytes) return { _tag: "TooLarge", bytes: total, stats }
    }
    return { _tag: "Text", text: Buffer.concat(chunks, total).toString("utf8"), stats }
  } catch (error) {
    return failed(error)
  } finally {
    await handle.close().catch(() => undefined)
  }
}

/**
 * Reads a stream (standard input) to its end if it holds at most `maxBytes` bytes; past that it
 * stops reading (and stops the stream) at once: `TooLarge` with the bytes seen.
 */
export const readBoundedStream = (stream: NodeJS.ReadableStream, maxBytes: number): Promise<BoundedRead> =>
  new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    let total = 0
    const finish = (result: BoundedRead) => {
      stream.removeListener("data", onData)
      stream.removeListener("end", onEnd)
      stream.removeListener("error", onError)
      resolve(result)
    }
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk
      total += buffer.length
      if (total > maxBytes) {
        stream.pause()
        ;(stream as { destroy?: () => void }).destroy?.()
        finish({ _tag: "TooLarge", bytes: total })
        return
      }
      chunks.push(buffer)
    }
    const onEnd = () => finish({ _tag: "Text", text: Buffer.concat(chunks, total).toString("utf8") })
    const onError = (error: unknown) => finish(failed(error))
    stream.on("data", onData)
    stream.on("end", onEnd)
    stream.on("error", onError)
  })
