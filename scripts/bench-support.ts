/**
 * What the xDS benchmarks (bench-xds, bench-sidecar) share: flags, percentiles and spreads, the
 * message inbox of a client process, and the server's log lines on stderr (stdout carries only
 * the JSON result). Built as a script entry of its own, it does nothing when run.
 */
import type { ChildProcess } from "node:child_process"
import { Logger } from "effect"

/** The value of `--name`, or `fallback`. */
export const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

/** Wall-clock milliseconds with sub-millisecond resolution (comparable across processes). */
export const now = (): number => performance.timeOrigin + performance.now()

export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

export const round1 = (ms: number): number => Math.round(ms * 10) / 10

export interface Spread {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export const spreadOf = (latencies: ReadonlyArray<number>): Spread => ({
  p50: round1(percentile(latencies, 50)),
  p99: round1(percentile(latencies, 99)),
  max: round1(Math.max(0, ...latencies)),
})

/** A child process's messages, each kept until asked for (a process may send two in a row). */
export const inboxOf = <M>(child: ChildProcess): (() => Promise<M>) => {
  const queued: Array<M> = []
  const waiting: Array<(m: M) => void> = []
  child.on("message", (m: M) => {
    const resolve = waiting.shift()
    if (resolve !== undefined) resolve(m)
    else queued.push(m)
  })
  return () => {
    const m = queued.shift()
    return m !== undefined ? Promise.resolve(m) : new Promise<M>((resolve) => waiting.push(resolve))
  }
}

/** The server's log lines go to stderr: stdout carries only the JSON result. */
export const serverLogsToStderr = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))
