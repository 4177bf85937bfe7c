/**
 * Sidecar mode's proxy lifecycle with a stand-in proxy (test/fixtures/agent/fake-proxy.mjs):
 * launch with the reference's arguments, restart on crash with backoff, give up after the limit,
 * propagate a clean exit, and drain (admin drain, then wait for zero connections) before SIGTERM.
 */
import { existsSync, readFileSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Scope } from "effect"
import { superviseProxy } from "../../../../src/layers/agent/proxy/supervisor.js"
import { proxyArgs, proxyBootstrap } from "../../../../src/services/agent/proxy/proxy.js"
import { freePort } from "../../../support/ports.js"
import { ROOT } from "../../../support/processes.js"

const events = (file: string): Array<{ event: string; args?: string[]; pid: number }> =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
    : []

/** Waits for a condition on the record file (bounded; polls, never a blind sleep). */
const until = (file: string, done: (e: ReturnType<typeof events>) => boolean) =>
  Effect.gen(function* () {
    for (;;) {
      if (done(events(file))) return events(file)
      yield* Effect.sleep("10 millis")
    }
  }).pipe(Effect.timeout("15 seconds"))

const setup = (env: Record<string, string>, maxRestarts = 5, stopTimeout = Duration.seconds(5)) =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-fake-proxy-")))
    yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
    const adminPort = yield* Effect.promise(freePort)
    const configFile = join(dir, "proxy-rev.json")
    const bootstrap = proxyBootstrap({
      node: { id: "sidecar~10.0.0.1~app.default~default.svc.cluster.local", metadata: {} },
      serviceCluster: "mesh-proxy",
      adminPort,
      xdsSocket: join(dir, "XDS"),
      sdsSocket: join(dir, "socket"),
    })
    yield* Effect.promise(() => writeFile(configFile, JSON.stringify(bootstrap)))
    const record = join(dir, "record")
    const active = join(dir, "active")
    const args = proxyArgs({
      configFile,
      drainSeconds: 45,
      logLevel: "warning,misc:error",
      componentLogLevel: "",
      concurrency: 2,
    })
    const scope = yield* Scope.make()
    const supervisor = yield* superviseProxy({
      binaryPath: process.execPath,
      args: [join(ROOT, "test/fixtures/agent/fake-proxy.mjs"), ...args],
      adminPort,
      env: { FAKE_PROXY_RECORD: record, FAKE_PROXY_ACTIVE: active, ...env },
      maxRestarts,
      restartBackoff: { base: Duration.millis(10), max: Duration.millis(100) },
      drain: {
        minimumDrain: Duration.millis(50),
        exitOnZeroActiveConnections: true,
        terminationDrain: Duration.seconds(5),
        checkInterval: Duration.millis(20),
      },
      stopTimeout,
    }).pipe(Scope.extend(scope))
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    return { supervisor, record, active, scope, args }
  })

describe("proxy supervisor (stand-in proxy)", () => {
  it.scopedLive("launches the proxy with the reference's arguments and restarts it after crashes", () =>
    Effect.gen(function* () {
      const { supervisor, record } = yield* setup({ FAKE_PROXY_CRASH_TIMES: "2" })
      const seen = yield* until(record, (e) => e.some((x) => x.event === "listening"))
      const starts = seen.filter((e) => e.event === "start")
      expect(starts).toHaveLength(3)
      expect(starts[0]!.args).toEqual(
        expect.arrayContaining([
          "--drain-time-s",
          "45",
          "--disable-hot-restart",
          "-l",
          "warning",
          "--concurrency",
          "2",
        ]),
      )
      expect(starts[0]!.args).toEqual(expect.arrayContaining(["--component-log-level", "misc:error"]))
      expect(yield* supervisor.restarts).toBe(2)
      expect(yield* Deferred.isDone(supervisor.exited)).toBe(false)
    }),
  )

  it.scopedLive("gives up after the restart limit and hands the exit code to the agent", () =>
    Effect.gen(function* () {
      const { supervisor } = yield* setup({ FAKE_PROXY_CRASH_TIMES: "99" }, 2)
      expect(yield* Deferred.await(supervisor.exited)).toBe(3)
      expect(yield* supervisor.restarts).toBe(3)
    }),
  )

  it.scopedLive("propagates a clean exit of the proxy", () =>
    Effect.gen(function* () {
      const { supervisor, record } = yield* setup({})
      yield* until(record, (e) => e.some((x) => x.event === "listening"))
      process.kill((yield* supervisor.pid)!, "SIGUSR1")
      expect(yield* Deferred.await(supervisor.exited)).toBe(0)
    }),
  )

  it.scopedLive("on shutdown: graceful admin drain, waits for zero active connections, then SIGTERM", () =>
    Effect.gen(function* () {
      const { record, active, scope } = yield* setup({})
      yield* until(record, (e) => e.some((x) => x.event === "listening"))
      yield* Effect.promise(() => writeFile(active, "2"))
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* until(record, (e) => e.some((x) => x.event === "drain"))
      // connections still open: no SIGTERM yet, however long the minimum drain was
      yield* Effect.sleep("200 millis")
      expect(events(record).some((e) => e.event === "sigterm")).toBe(false)
      yield* Effect.promise(() => writeFile(active, "0"))
      yield* Fiber.join(closing)
      const after = events(record)
      expect(after.map((e) => e.event).filter((e) => e !== "listening" && e !== "start")).toEqual(["drain", "sigterm"])
      expect(JSON.stringify(after.find((e) => e.event === "drain"))).toContain("inboundonly&graceful")
    }),
  )

  it.scopedLive("on shutdown, a proxy that ignores SIGTERM is killed once the stop timeout passes", () =>
    Effect.gen(function* () {
      const { record, scope, supervisor } = yield* setup({ FAKE_PROXY_IGNORE_SIGTERM: "true" }, 5, Duration.millis(300))
      yield* until(record, (e) => e.some((x) => x.event === "listening"))
      const pid = (yield* supervisor.pid)!
      // The shutdown is a finalizer (uninterruptible); it must still end within its timeout.
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("10 seconds"))
      expect(events(record).some((e) => e.event === "sigterm")).toBe(true)
      expect(() => process.kill(pid, 0)).toThrow()
    }),
  )
})
