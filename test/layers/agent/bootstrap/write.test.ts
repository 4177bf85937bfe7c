/** Atomic writes: concurrent readers only ever see a complete old or new file. */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { writeFileAtomic } from "../../../../src/layers/agent/bootstrap/grpc-bootstrap.js"

describe("writeFileAtomic", () => {
  it.live("a reader racing 50 rewrites never sees a partial file; no temp files remain", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-atomic-")))
      const path = join(dir, "nested", "bootstrap.json")
      const body = (i: number) => JSON.stringify({ i, pad: "x".repeat(200_000) })
      yield* writeFileAtomic(path, body(0))
      let done = false
      const seen = new Set<number>()
      const reader = (async () => {
        while (!done) {
          const text = await readFile(path, "utf8")
          seen.add((JSON.parse(text) as { i: number }).i) // throws on a partial file
        }
      })()
      for (let i = 1; i <= 50; i++) yield* writeFileAtomic(path, body(i))
      done = true
      yield* Effect.promise(() => reader)
      expect(seen.size).toBeGreaterThan(1)
      expect(yield* Effect.promise(() => readdir(join(dir, "nested")))).toEqual(["bootstrap.json"])
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }),
  )
})
