import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Logger, Option, Stream } from "effect"
import { layerFile, makeFileMeshWatcher } from "../../../src/layers/mesh-config/file.js"
import { MeshWatcher } from "../../../src/services/mesh-config/watcher.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mesh-meshconfig-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
)

/** Waits (bounded) until a changes stream shows a value satisfying `predicate`. */
const until = <A>(changes: Stream.Stream<A>, predicate: (a: A) => boolean) =>
  changes.pipe(
    Stream.filter(predicate),
    Stream.runHead,
    Effect.map(Option.getOrThrow),
    Effect.timeout(Duration.seconds(15)),
  )

describe("file mesh watcher", () => {
  it.scopedLive("uses defaults when files are absent, then hot-reloads; a bad file keeps the last good config", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const meshPath = path.join(dir, "mesh")
      const networksPath = path.join(dir, "meshNetworks")
      const logs: Array<{ message: string; annotations: Record<string, unknown> }> = []
      const logger = Logger.make(({ message, annotations }) => {
        const record: Record<string, unknown> = {}
        for (const [k, v] of annotations) record[k] = v
        logs.push({ message: String(Array.isArray(message) ? message.join(" ") : message), annotations: record })
      })
      const { control } = yield* makeFileMeshWatcher({
        meshConfigPath: meshPath,
        networksConfigPath: networksPath,
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      const watcher = control.watcher
      expect((yield* watcher.config).trustDomain).toBe("cluster.local")
      expect(yield* watcher.networks).toEqual({ networks: {} })

      fs.writeFileSync(meshPath, "trustDomain: first.org\ndefaultConfig: {concurrency: 5}\n")
      const first = yield* until(watcher.configChanges, (c) => c.trustDomain === "first.org")
      expect(first.defaultConfig.concurrency).toBe(5)
      expect(first.defaultConfig.drainDuration).toBe("45s")

      fs.writeFileSync(meshPath, "trustDomain: second.org\nproxyListenPort: notaport\n")
      const issues = yield* until(watcher.issuesChanges, (i) => i.length > 0)
      expect(issues.map((i) => `${i.file} ${i.path}`)).toEqual([`${meshPath} proxyListenPort`])
      expect((yield* watcher.config).trustDomain).toBe("first.org")
      const logged = logs.find((l) => l.annotations.field === "proxyListenPort")
      expect(logged?.annotations.file).toBe(meshPath)

      fs.writeFileSync(meshPath, "trustDomain: fixed.org\n")
      yield* until(watcher.configChanges, (c) => c.trustDomain === "fixed.org")
      yield* until(watcher.issuesChanges, (i) => i.length === 0)

      fs.writeFileSync(networksPath, "networks:\n  n1:\n    endpoints: [{fromCidr: 10.0.0.0/8}]\n")
      const networks = yield* until(watcher.networksChanges, (n) => Object.keys(n.networks ?? {}).length > 0)
      expect(Object.keys(networks.networks ?? {})).toEqual(["n1"])

      // Deleting the file after start-up keeps the last configuration. A later change of the
      // networks file proves the deletion has been read (reloads read the mesh file first).
      fs.rmSync(meshPath)
      fs.writeFileSync(networksPath, "networks:\n  n2:\n    endpoints: [{fromCidr: 10.0.0.0/8}]\n")
      yield* until(watcher.networksChanges, (n) => Object.keys(n.networks ?? {}).includes("n2"))
      expect(logs.some((l) => l.message.includes("was removed"))).toBe(true)
      expect((yield* watcher.config).trustDomain).toBe("fixed.org")
    }),
  )

  it.scopedLive("the shared mesh config applies under the standard one", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "shared"), "ingressClass: shared\ntrustDomain: shared.org\n")
      fs.writeFileSync(path.join(dir, "mesh"), "trustDomain: standard.org\n")
      const config = yield* Effect.flatMap(MeshWatcher, (w) => w.config).pipe(
        Effect.provide(
          layerFile({ meshConfigPath: path.join(dir, "mesh"), sharedMeshConfigPath: path.join(dir, "shared") }),
        ),
      )
      expect(config.trustDomain).toBe("standard.org")
      expect(config.ingressClass).toBe("shared")
    }),
  )

  it.scopedLive("a bad file at start-up leaves the defaults and reports the issue", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "mesh"), "enableAutoMtls: sometimes\n")
      const { control } = yield* makeFileMeshWatcher({ meshConfigPath: path.join(dir, "mesh"), polling: true })
      expect((yield* control.watcher.config).enableAutoMtls).toBe(true)
      expect((yield* control.watcher.issues).map((i) => i.path)).toEqual(["enableAutoMtls"])
    }),
  )
})
