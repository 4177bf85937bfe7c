/**
 * Running the system commands of traffic capture (iptables-save, iptables-restore, iptables,
 * ip, the probe), optionally inside a network namespace, with errors that say what is wrong:
 * a missing binary, missing privilege, or the command's own message.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { appendFileSync } from "node:fs"
import { Effect, type Scope } from "effect"
import { IptablesCommandError, IptablesMissingError, IptablesPermissionError } from "../../services/iptables/service.js"

export interface ExecResult {
  readonly exitCode: number
  readonly stdout: string
  readonly stderr: string
}

export interface ExecRequest {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly stdin?: string
}

/** Runs one command to completion; fails only when it cannot start. */
export type Exec = (request: ExecRequest) => Effect.Effect<ExecResult, IptablesMissingError | IptablesPermissionError>

const PACKAGE_HINT: Record<string, string> = {
  ip: "iproute2",
  nsenter: "util-linux",
}

/** The argv prefix that enters a namespace: a name goes through `ip netns exec`, a path through nsenter. */
export const namespacePrefix = (namespace: string): ReadonlyArray<string> =>
  namespace === ""
    ? []
    : namespace.includes("/")
      ? ["nsenter", `--net=${namespace}`, "--"]
      : ["ip", "netns", "exec", namespace]

/** The real thing: node's child_process, inside `namespace` when given. */
export const nodeExec =
  (namespace: string): Exec =>
  (request) => {
    const argv = [...namespacePrefix(namespace), request.command, ...request.args]
    return Effect.async<ExecResult, IptablesMissingError | IptablesPermissionError>((resume) => {
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      child.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") {
          const missing = argv[0]!
          const hint = PACKAGE_HINT[missing] ?? "iptables"
          resume(
            Effect.fail(
              new IptablesMissingError({
                message: `${missing} was not found in PATH; install the ${hint} package${
                  missing === request.command ? "" : ` (needed to run ${request.command})`
                }`,
              }),
            ),
          )
        } else if (error.code === "EACCES" || error.code === "EPERM") {
          resume(Effect.fail(new IptablesPermissionError({ message: `cannot run ${argv[0]}: ${error.message}` })))
        } else {
          resume(Effect.fail(new IptablesPermissionError({ message: `cannot run ${argv[0]}: ${error.message}` })))
        }
      })
      child.on("close", (code, signal) => {
        const exitCode = code ?? (signal !== null ? 128 : 1)
        // `ip netns exec` reports a missing command as exit 255 with "No such file or directory".
        if (namespace !== "" && exitCode !== 0 && /exec of "[^"]+" failed: No such file or directory/.test(stderr)) {
          resume(
            Effect.fail(
              new IptablesMissingError({
                message: `${request.command} was not found in PATH; install the iptables package`,
              }),
            ),
          )
          return
        }
        resume(Effect.succeed({ exitCode, stdout, stderr }))
      })
      child.stdin.on("error", () => {})
      child.stdin.end(request.stdin ?? "")
      return Effect.sync(() => {
        if (child.exitCode === null) child.kill("SIGKILL")
      })
    })
  }

/**
 * The dry-run stand-in: runs nothing, records every request, writes each request's standard
 * input to `filePath` when given (DRY_RUN_FILE_PATH) and answers success with empty output.
 */
export const dryRunExec =
  (filePath: string, record?: (request: ExecRequest) => void): Exec =>
  (request) =>
    Effect.sync(() => {
      record?.(request)
      if (filePath !== "" && request.stdin !== undefined) appendFileSync(filePath, request.stdin)
      return { exitCode: 0, stdout: "", stderr: "" }
    })

const PRIVILEGE = [
  /you must be root/i,
  /Permission denied/i,
  /Operation not permitted/i,
  /could not open socket to kernel/i,
  /setting the network namespace .* failed/i,
]

/** Turns a non-zero exit into a typed error naming the command. */
export const checkResult = (
  request: ExecRequest,
  result: ExecResult,
): Effect.Effect<ExecResult, IptablesPermissionError | IptablesCommandError> => {
  if (result.exitCode === 0) return Effect.succeed(result)
  const text = `${result.stderr}${result.stdout}`.trim()
  const what = [request.command, ...request.args].join(" ")
  if (PRIVILEGE.some((pattern) => pattern.test(text))) {
    return Effect.fail(
      new IptablesPermissionError({
        message: `${what} failed for lack of privilege (run as root or with CAP_NET_ADMIN and CAP_NET_RAW): ${text}`,
      }),
    )
  }
  return Effect.fail(new IptablesCommandError({ message: `${what} exited with ${result.exitCode}: ${text}` }))
}

/**
 * An exclusive lock on `path` across processes, held for the enclosing scope: a `flock` child
 * holds it until its standard input closes. Without `flock` (or when the file cannot be
 * opened) the scope proceeds unlocked; iptables' own `-w` still serializes each command.
 */
export const fileLock = (path: string): Effect.Effect<boolean, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<ChildProcess | undefined>((resume) => {
      const child = spawn("flock", ["--exclusive", path, "sh", "-c", "echo locked; exec cat"], {
        stdio: ["pipe", "pipe", "ignore"],
      })
      let settled = false
      const settle = (holder: ChildProcess | undefined) => {
        if (settled) return
        settled = true
        resume(Effect.succeed(holder))
      }
      child.on("error", () => settle(undefined))
      child.on("exit", () => settle(undefined))
      child.stdin.on("error", () => {})
      child.stdout.once("data", () => settle(child))
      return Effect.sync(() => child.kill("SIGKILL"))
    }),
    (holder) =>
      Effect.async<void>((resume) => {
        if (holder === undefined || holder.exitCode !== null || holder.signalCode !== null) return resume(Effect.void)
        holder.once("exit", () => resume(Effect.void))
        holder.stdin?.end()
      }),
  ).pipe(Effect.map((holder) => holder !== undefined))
