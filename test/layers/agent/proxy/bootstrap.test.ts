/** Writing the sidecar bootstrap: template and override read from files, JSON written atomically, file errors. */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { writeProxyBootstrap } from "../../../../src/layers/agent/proxy/bootstrap.js"

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-agent-bootstrap-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

const values = { nodeID: "sidecar~1~a.b~b.svc", adminPort: 15100 }
const builtIn = { node: { id: "built-in" } }

describe("writeProxyBootstrap", () => {
  it.scoped("renders the template, merges the override and writes JSON, leaving no temporary file", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(() =>
        writeFile(join(dir, "t.json"), '{"node": {"id": "{{ .nodeID }}"}, "admin": {"port": {{ .adminPort }}}}'),
      )
      yield* Effect.promise(() => writeFile(join(dir, "o.yaml"), "admin:\n  access_log_path: /dev/null\n"))
      const outFile = join(dir, "out", "proxy-rev.json")
      yield* writeProxyBootstrap({
        outFile,
        templateFile: join(dir, "t.json"),
        overrideFile: join(dir, "o.yaml"),
        values,
        builtIn,
      })
      expect(JSON.parse(yield* Effect.promise(() => readFile(outFile, "utf8")))).toEqual({
        node: { id: "sidecar~1~a.b~b.svc" },
        admin: { port: 15100, access_log_path: "/dev/null" },
      })
      expect(yield* Effect.promise(() => readdir(join(dir, "out")))).toEqual(["proxy-rev.json"])
    }),
  )

  it.scoped("without files writes the built-in bootstrap", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outFile = join(dir, "proxy-rev.json")
      yield* writeProxyBootstrap({ outFile, templateFile: "", overrideFile: "", values, builtIn })
      expect(JSON.parse(yield* Effect.promise(() => readFile(outFile, "utf8")))).toEqual(builtIn)
    }),
  )

  it.scoped("a missing template or override file is an error naming it; nothing is written", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outFile = join(dir, "proxy-rev.json")
      const missingTemplate = yield* Effect.exit(
        writeProxyBootstrap({ outFile, templateFile: join(dir, "nope.json"), overrideFile: "", values, builtIn }),
      )
      expect(missingTemplate).toEqual(
        Exit.fail(
          expect.objectContaining({
            message: expect.stringMatching(/^--templateFile .*nope\.json: cannot read: ENOENT/),
          }),
        ),
      )
      const missingOverride = yield* Effect.exit(
        writeProxyBootstrap({ outFile, templateFile: "", overrideFile: join(dir, "nope.yaml"), values, builtIn }),
      )
      expect(missingOverride).toEqual(
        Exit.fail(
          expect.objectContaining({
            message: expect.stringMatching(/^MESH_BOOTSTRAP_OVERRIDE .*nope\.yaml: cannot read: ENOENT/),
          }),
        ),
      )
      expect(yield* Effect.promise(() => readdir(dir))).toEqual([])
    }),
  )

  it.scoped("a template with an unknown field fails and names the file and field", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const template = join(dir, "t.json")
      yield* Effect.promise(() => writeFile(template, '{"id": "{{ .nodeId }}"}'))
      const exit = yield* Effect.exit(
        writeProxyBootstrap({
          outFile: join(dir, "out.json"),
          templateFile: template,
          overrideFile: "",
          values,
          builtIn,
        }),
      )
      expect(exit).toEqual(
        Exit.fail(expect.objectContaining({ message: `--templateFile ${template}:1: unknown field .nodeId` })),
      )
    }),
  )
})
