import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Queue, Ref, Stream, TestClock } from "effect"
import {
  debounceReloads,
  layerFile,
  makeFileConfigStore,
  type PendingReload,
} from "../../../src/layers/config-store/file-store.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { ConfigChangeEvent } from "../../../src/services/config-store/config-store.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { awaitEvent } from "../../../src/services/config-store/memory.js"
import { metricValue } from "../../support/metrics.js"

const serviceEntry = (name: string, host: string, namespace = "default") => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  hosts: [${host}]
  resolution: DNS
  ports:
  - number: 80
    name: http
    protocol: HTTP
`

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mesh-config-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
)

const within = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.timeout(self, Duration.seconds(15))

const summary = (event: ConfigChangeEvent) => event.changes.map((c) => `${c.type} ${c.key}`)

describe("debounceReloads", () => {
  it.scoped("re-reads once after changes settle for the debounce duration, with every path seen", () =>
    Effect.gen(function* () {
      const input = yield* Queue.unbounded<string | undefined>()
      const reloads = yield* Ref.make<ReadonlyArray<PendingReload>>([])
      yield* Effect.forkScoped(
        debounceReloads(Stream.fromQueue(input), Duration.millis(100), (p) => Ref.update(reloads, (r) => [...r, p])),
      )
      yield* Queue.offer(input, "/d/a.yaml")
      yield* TestClock.adjust(Duration.millis(60))
      yield* Queue.offer(input, "/d/b.yaml")
      yield* TestClock.adjust(Duration.millis(60))
      expect(yield* Ref.get(reloads)).toEqual([])
      yield* TestClock.adjust(Duration.millis(50))
      const first = yield* Ref.get(reloads)
      expect(first).toHaveLength(1)
      expect(first[0]?.full).toBe(false)
      expect([...(first[0]?.paths ?? [])]).toEqual(["/d/a.yaml", "/d/b.yaml"])
      // An event without a name asks for a full rescan.
      yield* Queue.offer(input, undefined)
      yield* TestClock.adjust(Duration.millis(100))
      const second = yield* Ref.get(reloads)
      expect(second).toHaveLength(2)
      expect(second[1]?.full).toBe(true)
      expect(second[1]?.paths.size).toBe(0)
    }),
  )
})

const withMetrics = Effect.provide(metricsLayer("test"))

describe("file config store (real directory)", () => {
  it.scopedLive("loads recursively; add, change and delete produce exactly the changed resources", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.mkdirSync(path.join(dir, "sub", "deeper"), { recursive: true })
      fs.mkdirSync(path.join(dir, ".hidden"))
      fs.writeFileSync(path.join(dir, "a.yaml"), serviceEntry("a", "a.com"))
      fs.writeFileSync(
        path.join(dir, "sub", "deeper", "b.yml"),
        `${serviceEntry("b", "b.com")}---\n${serviceEntry("b2", "b2.com")}`,
      )
      fs.writeFileSync(path.join(dir, "notes.txt"), "not config")
      fs.writeFileSync(path.join(dir, ".hidden", "h.yaml"), serviceEntry("h", "h.com"))
      const { store } = yield* makeFileConfigStore({ configDir: dir })
      yield* store.awaitSynced
      const initial = yield* store.snapshot
      expect(initial.list("ServiceEntry").map((r) => r.meta.name)).toEqual(["a", "b", "b2"])
      expect(initial.get("ServiceEntry", "default", "b2")?.source).toEqual({
        file: path.join(dir, "sub", "deeper", "b.yml"),
        documentIndex: 1,
      })

      const { events } = yield* store.subscribe
      fs.writeFileSync(path.join(dir, "sub", "c.yaml"), serviceEntry("c", "c.com"))
      const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(added)).toEqual(["added ServiceEntry/default/c"])
      expect(added.kinds).toEqual(["ServiceEntry"])

      fs.writeFileSync(path.join(dir, "a.yaml"), serviceEntry("a", "a2.com"))
      const updated = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(updated)).toEqual(["updated ServiceEntry/default/a"])

      fs.rmSync(path.join(dir, "sub"), { recursive: true })
      // The deletion may be reported in one or several events; collect until all three are gone.
      const gone = new Set<string>()
      while (gone.size < 3) {
        const more = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
        for (const s of summary(more)) gone.add(s)
      }
      expect([...gone].sort()).toEqual([
        "removed ServiceEntry/default/b",
        "removed ServiceEntry/default/b2",
        "removed ServiceEntry/default/c",
      ])
      expect((yield* store.list("ServiceEntry")).map((r) => r.meta.name)).toEqual(["a"])
    }).pipe(withMetrics),
  )

  it.scopedLive(
    "a corrupted file keeps serving its last valid version, is logged and counted, and clears when fixed",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const file = path.join(dir, "mesh.yaml")
        fs.writeFileSync(file, `${serviceEntry("one", "one.com")}---\n${serviceEntry("two", "two.com")}`)
        fs.writeFileSync(path.join(dir, "other.yaml"), serviceEntry("other", "other.com"))
        const logs: Array<{ message: string; annotations: Record<string, unknown> }> = []
        const logger = Logger.make(({ message, annotations }) => {
          const record: Record<string, unknown> = {}
          for (const [k, v] of annotations) record[k] = v
          logs.push({ message: String(Array.isArray(message) ? message.join(" ") : message), annotations: record })
        })
        const { store } = yield* makeFileConfigStore({ configDir: dir }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        )
        expect((yield* store.snapshot).size).toBe(3)
        expect(yield* metricValue("mesh_validation_config_load_error")).toBe(0)
        const { events } = yield* store.subscribe

        // Malformed YAML.
        fs.writeFileSync(file, "apiVersion: networking.mesh.io/v1\nkind: [unclosed\n")
        const broken = yield* within(awaitEvent(events, (e) => e.issuesChanged))
        expect(broken.changes).toEqual([])
        expect(broken.snapshot.list("ServiceEntry").map((r) => r.meta.name)).toEqual(["one", "other", "two"])
        expect(broken.snapshot.invalidFiles).toEqual([file])
        expect(yield* metricValue("mesh_validation_config_load_error")).toBe(1)
        expect(yield* metricValue("mesh_validation_failed")).toBe(1)
        const errorLine = logs.find((l) => l.annotations.file === file && l.annotations.document === 0)
        expect(errorLine?.annotations.scope).toBe("file")
        expect(errorLine?.message).toContain("YAML syntax error")

        // A schema error next to a valid (changed) document: still the last valid version.
        fs.writeFileSync(
          file,
          `${serviceEntry("one", "changed.com")}---\napiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: two}\nspec:\n  hosts: []\n`,
        )
        const schema = yield* within(
          awaitEvent(events, (e) => e.issuesChanged && e.snapshot.issues.some((i) => i.path === "spec.hosts")),
        )
        expect(schema.snapshot.get("ServiceEntry", "default", "one")?.spec).toMatchObject({ hosts: ["one.com"] })
        expect(schema.snapshot.get("ServiceEntry", "default", "two")).toBeDefined()
        expect(yield* metricValue("mesh_validation_config_load_error")).toBe(2)
        expect(yield* metricValue("mesh_validation_failed")).toBe(2)
        const fieldLine = logs.find((l) => l.annotations.field === "spec.hosts")
        expect(fieldLine?.annotations).toMatchObject({ file, document: 1, kind: "ServiceEntry", name: "default/two" })

        // The fix clears the error and applies exactly the difference.
        fs.writeFileSync(file, serviceEntry("one", "fixed.com"))
        const fixed = yield* within(awaitEvent(events, (e) => e.issuesChanged))
        expect(fixed.snapshot.issues).toEqual([])
        expect(summary(fixed)).toEqual(["updated ServiceEntry/default/one", "removed ServiceEntry/default/two"])
        expect(yield* metricValue("mesh_validation_config_load_error")).toBe(2)
        expect(logs.some((l) => l.message.includes("file is valid again"))).toBe(true)
      }).pipe(withMetrics),
  )

  it.scopedLive("files in directories created after start-up are picked up; symlinked swaps too", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { store } = yield* makeFileConfigStore({ configDir: dir })
      const { events } = yield* store.subscribe
      fs.mkdirSync(path.join(dir, "new", "nested"), { recursive: true })
      // (not named `n`: Go's YAML, which config files are read as, takes a plain `n` for false)
      fs.writeFileSync(path.join(dir, "new", "nested", "n.yaml"), serviceEntry("nested", "n.com"))
      const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(added)).toEqual(["added ServiceEntry/default/nested"])
      fs.writeFileSync(path.join(dir, "new", "nested", "n.yaml"), serviceEntry("nested", "n2.com"))
      const updated = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(updated)).toEqual(["updated ServiceEntry/default/nested"])

      // ConfigMap-style mount: visible file -> ..data/file, and ..data swapped atomically.
      const v1 = path.join(dir, "..v1")
      const v2 = path.join(dir, "..v2")
      fs.mkdirSync(v1)
      fs.mkdirSync(v2)
      fs.writeFileSync(path.join(v1, "cm.yaml"), serviceEntry("cm", "v1.com"))
      fs.writeFileSync(path.join(v2, "cm.yaml"), serviceEntry("cm", "v2.com"))
      fs.symlinkSync("..v1", path.join(dir, "..data"))
      fs.symlinkSync(path.join("..data", "cm.yaml"), path.join(dir, "cm.yaml"))
      const cm = yield* within(awaitEvent(events, (e) => e.changes.some((c) => c.name === "cm")))
      expect(cm.snapshot.get("ServiceEntry", "default", "cm")?.spec).toMatchObject({ hosts: ["v1.com"] })
      fs.symlinkSync("..v2", path.join(dir, "..data_tmp"))
      fs.renameSync(path.join(dir, "..data_tmp"), path.join(dir, "..data"))
      const swapped = yield* within(awaitEvent(events, (e) => e.changes.some((c) => c.name === "cm")))
      expect(summary(swapped)).toEqual(["updated ServiceEntry/default/cm"])
      expect(swapped.snapshot.get("ServiceEntry", "default", "cm")?.spec).toMatchObject({ hosts: ["v2.com"] })
    }).pipe(withMetrics),
  )

  it.scopedLive("conflicting definitions across files: the first path wins, deterministically", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "b.yaml"), serviceEntry("same", "from-b.com"))
      fs.writeFileSync(path.join(dir, "a.yaml"), serviceEntry("same", "from-a.com"))
      const { store } = yield* makeFileConfigStore({ configDir: dir })
      const snapshot = yield* store.snapshot
      expect(snapshot.get("ServiceEntry", "default", "same")?.spec).toMatchObject({ hosts: ["from-a.com"] })
      expect(snapshot.issues.map((i) => i.file)).toEqual([path.join(dir, "b.yaml")])
    }).pipe(withMetrics),
  )

  it.scopedLive("polling mode picks up changes too", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const { store } = yield* makeFileConfigStore({ configDir: dir, polling: true, pollInterval: Duration.millis(50) })
      expect((yield* store.snapshot).size).toBe(0)
      const { events } = yield* store.subscribe
      fs.writeFileSync(path.join(dir, "x.yaml"), serviceEntry("x", "x.com"))
      const event = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(event)).toEqual(["added ServiceEntry/default/x"])
    }).pipe(withMetrics),
  )

  it.scopedLive("a missing directory serves nothing and is picked up once created", () =>
    Effect.gen(function* () {
      const parent = yield* tempDir
      const dir = path.join(parent, "later")
      const { store } = yield* makeFileConfigStore({ configDir: dir, pollInterval: Duration.millis(50) })
      expect((yield* store.snapshot).size).toBe(0)
      const { events } = yield* store.subscribe
      fs.mkdirSync(dir)
      fs.writeFileSync(path.join(dir, "x.yaml"), serviceEntry("x", "x.com"))
      const event = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(summary(event)).toEqual(["added ServiceEntry/default/x"])
    }).pipe(withMetrics),
  )

  it.scopedLive("layerFile provides the ConfigStore, synced when built", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "x.yaml"), serviceEntry("x", "x.com"))
      const names = yield* Effect.gen(function* () {
        const store = yield* ConfigStore
        yield* store.awaitSynced
        return (yield* store.list("ServiceEntry")).map((r) => r.meta.name)
      }).pipe(Effect.provide(layerFile({ configDir: dir }).pipe(Layer.provide(metricsLayer("test")))))
      expect(names).toEqual(["x"])
    }),
  )
})
