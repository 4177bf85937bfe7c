/**
 * The steady proxyless client of the end-to-end tests (test/fixtures/agent/xds-steady-client.mjs:
 * an RPC every 20 ms through one @grpc/grpc-js-xds channel) run as a process of its own, asked
 * for its counts over stdin; and the bounded polling the tests wait with (never a sleep).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { ROOT } from "./processes.js"

export interface SteadyReport {
  readonly total: number
  readonly counts: Record<string, number>
  readonly failureCount: number
  readonly failures: ReadonlyArray<{ code: number; details: string; at: number }>
  readonly startupFailures: number
  readonly lastStartupFailure?: { code: number; details: string }
  readonly states: ReadonlyArray<{ state: string; at: number }>
}

export interface SteadyClient {
  readonly process: ChildProcessWithoutNullStreams
  /** What the client counted so far. */
  readonly report: () => Promise<SteadyReport>
  /** Its stderr so far. */
  readonly output: () => string
}

/** Starts the client of `target` (`host:port`) with `env` added (GRPC_XDS_BOOTSTRAP, XDS_CREDENTIALS). */
export const startSteadyClient = (target: string, env: Record<string, string>): SteadyClient => {
  const child = spawn(
    process.execPath,
    [join(ROOT, "test/fixtures/agent/xds-steady-client.mjs"), target, "20", "2000"],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  )
  const pending = new Map<number, (report: SteadyReport) => void>()
  let nextId = 0
  let stderr = ""
  // One JSON report per line.
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as SteadyReport & { id: number }
    pending.get(message.id)?.(message)
    pending.delete(message.id)
  })
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  return {
    process: child,
    output: () => stderr,
    report: () =>
      new Promise((resolve, reject) => {
        if (child.exitCode !== null) return reject(new Error(`client gone: ${stderr}`))
        const id = nextId++
        pending.set(id, resolve)
        child.stdin.write(`${JSON.stringify({ id })}\n`)
      }),
  }
}

/**
 * Polls `check` until it returns a value (not undefined), within `ms`; the error names `what`
 * and adds `context()` (the processes' logs).
 */
export const pollUntil = async <A>(
  what: string,
  check: () => Promise<A | undefined>,
  ms: number,
  context: () => string,
  intervalMs = 25,
): Promise<A> => {
  const limit = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}\n${context()}`)
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
