/**
 * The `--configDir` store against hostile or broken trees: symbolic link loops, a billion-laughs
 * file, an oversized file, a binary file (one bounded report, not a log flood), and a large valid
 * set of files loading without stalling the event loop.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Logger } from "effect"
import {
  MAX_LOGGED_ISSUES_PER_FILE,
  makeFileConfigStore,
  walkConfigTree,
} from "../../../src/layers/config-store/file-store.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { MAX_CONFIG_FILE_BYTES } from "../../../src/services/config-model/yaml-limits.js"
import { awaitEvent } from "../../../src/services/config-store/memory.js"
import { billionLaughs } from "../../services/config-model/helpers.js"

const serviceEntry = (name: string, host = `${name}.example.com`) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: default
spec:
  hosts: [${host}]
  resolution: DNS
  ports:
  - number: 80
    name: http
    protocol: HTTP
`

/** A ServiceEntry of ~700 bytes of real content (no comments: those cost nothing to parse). */
const wideServiceEntry = (name: string) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: ${name}
  namespace: default
  labels: {app: ${name}, team: payments, tier: backend, version: v1}
spec:
  hosts: [${Array.from({ length: 6 }, (_, i) => `${name}-${i}.example.com`).join(", ")}]
  resolution: STATIC
  ports:
${Array.from({ length: 4 }, (_, i) => `  - {number: ${8080 + i}, name: http-${i}, protocol: HTTP}`).join("\n")}
  endpoints:
${Array.from({ length: 4 }, (_, i) => `  - {address: 10.0.${i}.1, labels: {zone: z${i}}}`).join("\n")}
`

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mesh-config-limits-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })),
)

const within = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.timeout(self, Duration.seconds(30))

const withMetrics = Effect.provide(metricsLayer("test"))

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** A logger that keeps every line, to count what the store logs. */
const capture = () => {
  const lines: Array<Line> = []
  const logger = Logger.make(({ logLevel, message, annotations }) => {
    const record: Record<string, unknown> = {}
    for (const [k, v] of annotations) record[k] = v
    lines.push({
      level: logLevel.label,
      message: String(Array.isArray(message) ? message.join(" ") : message),
      annotations: record,
    })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

describe("entries of --configDir that are not regular files", () => {
  it.scopedLive("a FIFO, /dev/zero behind a link and a link loop between files are skipped, each logged once", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      fs.writeFileSync(path.join(dir, "a.yaml"), serviceEntry("a"))
      execFileSync("mkfifo", [path.join(dir, "pipe.yaml")])
      fs.symlinkSync("/dev/zero", path.join(dir, "zero.yaml"))
      fs.symlinkSync("loop-b.yaml", path.join(dir, "loop-a.yaml"))
      fs.symlinkSync("loop-a.yaml", path.join(dir, "loop-b.yaml"))

      const tree = yield* Effect.promise(() => walkConfigTree(dir))
      expect(tree.files).toEqual([path.join(dir, "a.yaml")])
      expect(tree.skipped.map((e) => `${path.basename(e.path)}: ${e.reason}`)).toEqual([
        "loop-a.yaml: symbolic link loop (too many levels of links)",
        "loop-b.yaml: symbolic link loop (too many levels of links)",
        "pipe.yaml: a FIFO (named pipe)",
        "zero.yaml: a character device",
      ])

      const { lines, layer } = capture()
      // Before the fix a FIFO blocked the load forever and /dev/zero grew the process unbounded.
      const { store, reload } = yield* within(makeFileConfigStore({ configDir: dir }).pipe(Effect.provide(layer)))
      expect((yield* store.snapshot).list("ServiceEntry").map((r) => r.meta.name)).toEqual(["a"])
      const skippedLines = () => lines.filter((l) => l.level === "WARN" && l.message.includes(": not read: "))
      expect(skippedLines().map((l) => l.message)).toEqual([
        `${path.join(dir, "loop-a.yaml")}: not read: symbolic link loop (too many levels of links); only regular files are read`,
        `${path.join(dir, "loop-b.yaml")}: not read: symbolic link loop (too many levels of links); only regular files are read`,
        `${path.join(dir, "pipe.yaml")}: not read: a FIFO (named pipe); only regular files are read`,
        `${path.join(dir, "zero.yaml")}: not read: a character device; only regular files are read`,
      ])
      expect(skippedLines()[0]?.annotations).toMatchObject({ file: path.join(dir, "loop-a.yaml") })
      // Rescans do not log them again.
      yield* reload()
      yield* reload()
      expect(skippedLines()).toHaveLength(4)
    }).pipe(withMetrics),
  )
})

describe("symbolic links in --configDir", () => {
  it.scopedLive("a loop is skipped and warned about once; every file is read once; links elsewhere still work", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outside = yield* tempDir
      fs.mkdirSync(path.join(dir, "sub"))
      fs.writeFileSync(path.join(dir, "a.yaml"), serviceEntry("a"))
      fs.writeFileSync(path.join(dir, "sub", "b.yaml"), serviceEntry("b"))
      fs.writeFileSync(path.join(outside, "ext.yaml"), serviceEntry("ext"))
      // Two loops (the case that exhausted memory), a link out of the tree, and a second name
      // for a file and for a directory already in the tree.
      fs.symlinkSync(".", path.join(dir, "loop"))
      fs.symlinkSync("..", path.join(dir, "sub", "up"))
      fs.symlinkSync(outside, path.join(dir, "elsewhere"))
      fs.symlinkSync("a.yaml", path.join(dir, "same-as-a.yaml"))
      fs.symlinkSync("sub", path.join(dir, "sub-again"))

      const tree = yield* Effect.promise(() => walkConfigTree(dir))
      expect(tree.files).toEqual([
        path.join(dir, "a.yaml"),
        path.join(dir, "elsewhere", "ext.yaml"),
        path.join(dir, "sub", "b.yaml"),
      ])
      const realDir = fs.realpathSync(dir)
      expect(tree.loops).toEqual([
        { link: path.join(dir, "loop"), target: realDir },
        { link: path.join(dir, "sub", "up"), target: realDir },
      ])

      const { lines, layer } = capture()
      const { store, reload } = yield* makeFileConfigStore({ configDir: dir }).pipe(Effect.provide(layer))
      const snapshot = yield* store.snapshot
      expect(snapshot.list("ServiceEntry").map((r) => `${r.meta.name} ${r.source?.file}`)).toEqual([
        `a ${path.join(dir, "a.yaml")}`,
        `b ${path.join(dir, "sub", "b.yaml")}`,
        `ext ${path.join(dir, "elsewhere", "ext.yaml")}`,
      ])
      // No duplicate definitions: each file was read under one path.
      expect(snapshot.issues).toEqual([])
      const loopWarnings = () => lines.filter((l) => l.level === "WARN" && l.message.includes("loops back to"))
      expect(loopWarnings().map((l) => l.message)).toEqual([
        `${path.join(dir, "loop")}: symbolic link loops back to ${realDir}; not followed (the files there are read once, under their own path)`,
        `${path.join(dir, "sub", "up")}: symbolic link loops back to ${realDir}; not followed (the files there are read once, under their own path)`,
      ])
      // Rescans do not warn again.
      yield* reload()
      yield* reload()
      expect(loopWarnings()).toHaveLength(2)

      // A change through the watcher (a new file next to the loops) is picked up, once.
      const { events } = yield* store.subscribe
      fs.writeFileSync(path.join(dir, "sub", "c.yaml"), serviceEntry("c"))
      const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
      expect(added.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["added ServiceEntry/default/c"])
      expect(added.snapshot.issues).toEqual([])
      expect(loopWarnings()).toHaveLength(2)
    }).pipe(withMetrics),
  )
})

describe("costly files in --configDir", () => {
  it.scopedLive(
    "a billion-laughs file and an oversized file are refused with a clear issue and keep their last good version",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const laughs = path.join(dir, "laughs.yaml")
        const big = path.join(dir, "big.yaml")
        fs.writeFileSync(laughs, serviceEntry("laughs"))
        fs.writeFileSync(big, serviceEntry("big"))
        const { lines, layer } = capture()
        const { store } = yield* makeFileConfigStore({ configDir: dir }).pipe(Effect.provide(layer))
        expect((yield* store.snapshot).size).toBe(2)
        const { events } = yield* store.subscribe

        const started = Date.now()
        fs.writeFileSync(laughs, billionLaughs())
        const refused = yield* within(awaitEvent(events, (e) => e.snapshot.invalidFiles.includes(laughs)))
        // Without the bound, expanding ~999k routes takes seconds and hundreds of MB.
        expect(Date.now() - started).toBeLessThan(5_000)
        expect(refused.snapshot.issues.filter((i) => i.file === laughs).map((i) => i.message)).toEqual([
          expect.stringMatching(/^YAML aliases expand to \d+ more nodes, over the limit of 100000 nodes/),
        ])
        expect(refused.snapshot.get("ServiceEntry", "default", "laughs")).toBeDefined()

        // Oversized: refused from its size (never read), and the old version is served.
        const handle = fs.openSync(big, "w")
        fs.writeSync(handle, serviceEntry("big"))
        fs.ftruncateSync(handle, MAX_CONFIG_FILE_BYTES + 1)
        fs.closeSync(handle)
        const tooBig = yield* within(awaitEvent(events, (e) => e.snapshot.invalidFiles.includes(big)))
        expect(tooBig.snapshot.issues.filter((i) => i.file === big).map((i) => i.message)).toEqual([
          `file is 4 MiB (${MAX_CONFIG_FILE_BYTES + 1} bytes), over the limit of 4 MiB for one config file: split it into smaller files`,
        ])
        expect(tooBig.snapshot.get("ServiceEntry", "default", "big")).toBeDefined()
        const errors = () => lines.filter((l) => l.level === "ERROR" && l.annotations.file === big)
        expect(errors()).toHaveLength(1)
        expect(errors()[0]?.message).toContain("over the limit of 4 MiB")
      }).pipe(withMetrics),
  )

  it.scopedLive("a binary file is logged as a bounded number of lines, and not again while it is unchanged", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const blob = path.join(dir, "blob.yaml")
      // Junk over several documents and lines: hundreds of YAML errors and issues in all.
      const junk = Array.from(
        { length: 300 },
        (_, i) =>
          `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: "Bad_${i}"}\nspec: {hosts: [], x${i}: 1}\n`,
      ).join("---\n")
      fs.writeFileSync(
        blob,
        `${junk}---\n${Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 31) % 256)).toString("latin1")}`,
      )
      const { lines, layer } = capture()
      const { store, reload } = yield* makeFileConfigStore({ configDir: dir, polling: true }).pipe(
        Effect.provide(layer),
      )
      const issues = (yield* store.snapshot).issues.filter((i) => i.file === blob)
      expect(issues.length).toBeGreaterThan(250)
      const errors = () => lines.filter((l) => l.level === "ERROR" && l.annotations.file === blob)
      expect(errors()).toHaveLength(MAX_LOGGED_ISSUES_PER_FILE + 1)
      expect(errors().at(-1)?.message).toBe(
        `invalid configuration: ... and ${issues.length - MAX_LOGGED_ISSUES_PER_FILE} more issues in this file (meshctl validate -f ${blob} lists them all)`,
      )
      // The same content again (a new inode and mtime): read again, not logged again.
      fs.writeFileSync(`${blob}.tmp`, fs.readFileSync(blob))
      fs.renameSync(`${blob}.tmp`, blob)
      yield* reload()
      yield* reload()
      expect(errors()).toHaveLength(MAX_LOGGED_ISSUES_PER_FILE + 1)
    }).pipe(withMetrics),
  )

  it.scopedLive("a file copied next to itself logs a few duplicate warnings and a count, not one per resource", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const text = Array.from({ length: 50 }, (_, i) => serviceEntry(`dup-${i}`)).join("---\n")
      fs.writeFileSync(path.join(dir, "a.yaml"), text)
      fs.writeFileSync(path.join(dir, "copy.yaml"), text)
      const { lines, layer } = capture()
      const { store } = yield* makeFileConfigStore({ configDir: dir, polling: true }).pipe(Effect.provide(layer))
      expect((yield* store.snapshot).issues).toHaveLength(50)
      const warnings = lines.filter((l) => l.level === "WARN" && l.message.includes("defined more than once"))
      expect(warnings).toHaveLength(MAX_LOGGED_ISSUES_PER_FILE + 1)
      expect(warnings.at(-1)?.message).toContain("... and 47 more resources are defined more than once")
    }).pipe(withMetrics),
  )

  it.scopedLive("a large valid set of files loads in slices: timers keep firing (max event-loop delay bounded)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      // 4 files of ~2 MB (~10k resources): parsed whole, each blocks the event loop for a second or more.
      const files = 4
      const perFile = 2_600
      for (let f = 0; f < files; f++) {
        const docs = Array.from({ length: perFile }, (_, i) => wideServiceEntry(`se-${f}-${i}`))
        fs.writeFileSync(path.join(dir, `set-${f}.yaml`), docs.join("---\n"))
      }
      expect(fs.statSync(path.join(dir, "set-0.yaml")).size).toBeGreaterThan(1_500_000)
      // A timer every 10 ms records the longest gap between its runs while the store loads.
      // The CPU time between two runs tells the same without counting time the machine spent
      // on other processes (CI machines are busy).
      let last = performance.now()
      let lastCpu = process.cpuUsage()
      let maxGap = 0
      let maxCpu = 0
      const tick = () => {
        const now = performance.now()
        const cpu = process.cpuUsage(lastCpu)
        maxGap = Math.max(maxGap, now - last)
        maxCpu = Math.max(maxCpu, (cpu.user + cpu.system) / 1000)
        last = now
        lastCpu = process.cpuUsage()
      }
      const timer = yield* Effect.acquireRelease(
        Effect.sync(() => setInterval(tick, 10)),
        (t) => Effect.sync(() => clearInterval(t)),
      )
      const { store } = yield* makeFileConfigStore({ configDir: dir, polling: true })
      // The stretch from the timer's last run to the end of the load counts too.
      tick()
      clearInterval(timer)
      expect((yield* store.snapshot).size).toBe(files * perFile)
      // Parsing alone takes seconds here; the largest stall stays well under a /ready probe's timeout.
      console.log(`config load: max event-loop gap ${maxGap.toFixed(0)} ms, ${maxCpu.toFixed(0)} ms of CPU`)
      expect(maxCpu).toBeLessThan(400)
      expect(maxGap).toBeLessThan(1_000)
    }).pipe(withMetrics),
  )
})
