/**
 * Sidecar mode: launches the proxy binary, restarts it (with backoff) when it crashes, hands
 * its clean exit to the agent, and on shutdown drains it — graceful listener drain through the
 * admin API, then the drain rule on the admin's active-connection count — before SIGTERM
 * (SIGKILL if it lingers).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { Deferred, Duration, Effect, Ref, Runtime } from "effect"
import { activeConnections } from "../../../services/agent/proxy/proxy.js"
import { type DrainSettings, drain } from "../../../services/agent/status/drain.js"
import { withScope } from "../../../services/logging/logging.js"

export interface SupervisorSettings {
  readonly binaryPath: string
  readonly args: ReadonlyArray<string>
  readonly adminPort: number
  readonly env?: Readonly<Record<string, string>>
  readonly maxRestarts: number
  readonly restartBackoff: { readonly base: Duration.Duration; readonly max: Duration.Duration }
  readonly drain: DrainSettings
  /** How long to wait for the proxy to exit after SIGTERM. */
  readonly stopTimeout: Duration.Duration
}

export interface ProxySupervisor {
  /** Completes with the proxy's exit code once it exits on its own and is not restarted. */
  readonly exited: Deferred.Deferred<number>
  readonly restarts: Effect.Effect<number>
  readonly pid: Effect.Effect<number | undefined>
}

const admin = (port: number, method: string, path: string) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method })
    return response.text()
  })

export const superviseProxy = (settings: SupervisorSettings) =>
  Effect.gen(function* () {
    const exited = yield* Deferred.make<number>()
    const restarts = yield* Ref.make(0)
    let child: ChildProcess | undefined
    let stopping = false
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string) => Runtime.runFork(runtime)(Effect.logInfo(line).pipe(withScope("default")))

    /** One run of the proxy: resolves with its exit code. */
    const runOnce = Effect.async<number>((resume) => {
      const proc = spawn(settings.binaryPath, [...settings.args], {
        env: { ...process.env, ...(settings.env ?? {}) },
        stdio: ["ignore", "pipe", "pipe"],
      })
      child = proc
      proc.stdout?.on("data", (b: Buffer) => log(`proxy: ${b.toString().trimEnd()}`))
      proc.stderr?.on("data", (b: Buffer) => log(`proxy: ${b.toString().trimEnd()}`))
      proc.once("error", (e) => {
        log(`proxy: cannot start ${settings.binaryPath}: ${e.message}`)
        resume(Effect.succeed(127))
      })
      proc.once("exit", (code, signal) => resume(Effect.succeed(code ?? (signal ? 128 : 1))))
    })

    const loop = Effect.gen(function* () {
      for (;;) {
        yield* Effect.logInfo(`starting proxy ${settings.binaryPath} ${settings.args.join(" ")}`)
        const code = yield* runOnce
        if (stopping) return
        if (code === 0) {
          yield* Effect.logInfo("proxy exited cleanly; the agent exits too")
          yield* Deferred.succeed(exited, 0)
          return
        }
        const n = yield* Ref.updateAndGet(restarts, (k) => k + 1)
        if (n > settings.maxRestarts) {
          yield* Effect.logError(`proxy exited with ${code}; giving up after ${settings.maxRestarts} restarts`)
          yield* Deferred.succeed(exited, code)
          return
        }
        const delay = Math.min(
          Duration.toMillis(settings.restartBackoff.max),
          Duration.toMillis(settings.restartBackoff.base) * 2 ** (n - 1),
        )
        yield* Effect.logWarning(`proxy exited with ${code}; restart ${n} in ${delay}ms`)
        yield* Effect.sleep(Duration.millis(delay))
      }
    }).pipe(withScope("default"))

    const stop = Effect.gen(function* () {
      stopping = true
      const proc = child
      if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return
      yield* admin(settings.adminPort, "POST", "/drain_listeners?inboundonly&graceful").pipe(
        Effect.catchAll((e) => Effect.logWarning(`proxy drain request failed: ${String(e)}`)),
      )
      yield* drain(
        settings.drain,
        admin(settings.adminPort, "GET", "/stats?usedonly&filter=downstream_cx_active").pipe(
          Effect.map(activeConnections),
          Effect.orElseSucceed(() => 0),
        ),
      )
      const gone = Effect.async<void>((resume) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resume(Effect.void)
        proc.once("exit", () => resume(Effect.void))
      })
      proc.kill("SIGTERM")
      yield* gone.pipe(
        // `stop` runs as a finalizer (uninterruptible): without this a proxy that ignores
        // SIGTERM would never be killed, the timeout being unable to cut the wait.
        Effect.interruptible,
        Effect.timeoutTo({
          duration: settings.stopTimeout,
          onSuccess: () => Effect.void,
          onTimeout: () => Effect.sync(() => proc.kill("SIGKILL")).pipe(Effect.zipRight(gone)),
        }),
        Effect.flatten,
      )
      yield* Effect.logInfo("proxy stopped")
    }).pipe(withScope("default"))

    yield* Effect.addFinalizer(() => stop)
    yield* Effect.forkScoped(loop)
    return {
      exited,
      restarts: Ref.get(restarts),
      pid: Effect.sync(() => child?.pid),
    } satisfies ProxySupervisor
  })
