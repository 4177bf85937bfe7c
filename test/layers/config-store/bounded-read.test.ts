/**
 * Reading an input within its size bound: a regular file is refused from its size, a FIFO or a
 * device is never opened for reading, and a stream that never ends is cut just past the bound.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readBoundedFile, readBoundedStream } from "../../../src/layers/config-store/bounded-read.js"

let dir = ""
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "bounded-read-"))
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("readBoundedFile", () => {
  it("reads a file within the bound and refuses a larger one from its size", async () => {
    const small = path.join(dir, "small.yaml")
    fs.writeFileSync(small, "a: 1\n")
    expect(await readBoundedFile(small, 5)).toMatchObject({ _tag: "Text", text: "a: 1\n" })
    const big = path.join(dir, "big.yaml")
    fs.writeFileSync(big, "")
    fs.truncateSync(big, 50 * 1024 * 1024)
    const started = performance.now()
    expect(await readBoundedFile(big, 1024)).toMatchObject({ _tag: "TooLarge", bytes: 50 * 1024 * 1024 })
    expect(performance.now() - started).toBeLessThan(500)
  })

  it("does not block on a FIFO without a writer, nor read a device", async () => {
    const fifo = path.join(dir, "pipe.yaml")
    execFileSync("mkfifo", [fifo])
    expect(await readBoundedFile(fifo, 1024)).toEqual({ _tag: "NotRegular", kind: "a FIFO (named pipe)" })
    expect(await readBoundedFile("/dev/zero", 1024)).toEqual({ _tag: "NotRegular", kind: "a character device" })
    expect(await readBoundedFile(dir, 1024)).toEqual({ _tag: "NotRegular", kind: "a directory" })
    expect(await readBoundedFile(path.join(dir, "none.yaml"), 1024)).toMatchObject({ _tag: "Failed", code: "ENOENT" })
  })
})

describe("readBoundedStream", () => {
  it("stops an endless stream just past the bound", async () => {
    let produced = 0
    const endless = new Readable({
      read() {
        produced += 64 * 1024
        this.push(Buffer.alloc(64 * 1024))
      },
    })
    const read = await readBoundedStream(endless, 1024 * 1024)
    expect(read).toMatchObject({ _tag: "TooLarge" })
    expect(read._tag === "TooLarge" && read.bytes).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024)
    expect(produced).toBeLessThan(4 * 1024 * 1024)
  })

  it("reads a stream that ends within the bound", async () => {
    expect(await readBoundedStream(Readable.from([Buffer.from("a: "), Buffer.from("1\n")]), 16)).toEqual({
      _tag: "Text",
      text: "a: 1\n",
    })
  })
})
