/**
 * Running the built binaries in tests: one-shot commands with their output and exit code,
 * and daemons whose readiness is a log line (never a sleep).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const ROOT = join(import.meta.dirname, "..", "..")
export const binary = (name: string): string => join(ROOT, "bin", `${name}.cjs`)

export interface RunResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a binary to completion. `env` is added to a copy of this process's environment. */
export const run = (name: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<RunResult> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [binary(name), ...args],
      { env: { ...process.env, ...env, NO_COLOR: "1" }, cwd: ROOT, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      },
    )
  })

export interface Daemon {
  readonly process: ChildProcess
  /** Everything written so far to stdout and stderr. */
  readonly output: () => string
  /** Resolves with the first match of `pattern` in the output (waiting for it). */
  readonly waitFor: (pattern: RegExp, timeoutMillis?: number) => Promise<RegExpMatchArray>
  /** Sends a signal and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/**
 * Starts a daemon. By default it runs in a fresh temporary directory, so state it keeps under
 * its working directory (the CA's root, default config paths) is private to the test.
 */
export const startDaemon = (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  cwd: string = mkdtempSync(join(tmpdir(), `${name}-`)),
): Daemon => {
  const child = spawn(process.execPath, [binary(name), ...args], {
    env: { ...process.env, ...env, NO_COLOR: "1" },
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  })
  let text = ""
  const listeners = new Set<() => void>()
  const append = (chunk: Buffer) => {
    text += chunk.toString()
    for (const listener of listeners) listener()
  }
  child.stdout.on("data", append)
  child.stderr.on("data", append)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return {
    process: child,
    output: () => text,
    waitFor: (pattern, timeoutMillis = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = text.match(pattern)
          if (match !== null) {
            cleanup()
            resolve(match)
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${text}`))
        }, timeoutMillis)
        const onExit = () => {
          cleanup()
          reject(new Error(`process exited while waiting for ${pattern}; output:\n${text}`))
        }
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
          child.off("exit", onExit)
        }
        listeners.add(check)
        child.once("exit", onExit)
        check()
      }),
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    },
  }
}
