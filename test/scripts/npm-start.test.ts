/**
 * `npm start` must hand signals to the server: npm forwards SIGTERM to the script's shell, and
 * a shell that runs the server as its child (not `exec`) dies alone, leaving the server holding
 * every port. The script runs from a scratch copy of the checkout's package.json (bin/ and
 * examples/ linked) so the server's state stays out of the checkout; its listeners are moved to
 * ephemeral loopback ports by arguments after `--` (a single-valued flag keeps its last value).
 */
import { spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

const started: Array<number> = []
let dir = ""

afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {}
  }
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** The process ids below `pid` (Linux /proc). */
const descendants = (pid: number): Array<number> => {
  let children: Array<number> = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {}
  return children.flatMap((child) => [child, ...descendants(child)])
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const accepts = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = [
      address.slice(0, address.lastIndexOf(":")),
      Number(address.slice(address.lastIndexOf(":") + 1)),
    ]
    const socket = connect(port, host)
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

it("SIGTERM to `npm start` stops the server: no process left, its port freed", async () => {
  dir = mkdtempSync(join(tmpdir(), "npm-start-"))
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"))
  symlinkSync(join(ROOT, "bin"), join(dir, "bin"))
  symlinkSync(join(ROOT, "examples"), join(dir, "examples"))
  const npm = spawn(
    "npm",
    [
      "start",
      "--silent",
      "--",
      ...["--grpcAddr", "127.0.0.1:0", "--secureGRPCAddr", "127.0.0.1:0", "--httpAddr", "127.0.0.1:0"],
      ...["--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0", "--ctrlz_address", "127.0.0.1"],
      ...["--ctrlz_port", "0", "--shutdownDuration", "2s"],
    ],
    { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
  )
  started.push(npm.pid!)
  let output = ""
  const ads = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /ADS server listening on ([\d.]+:\d+)/.exec(output)
      if (match !== null) resolve(match[1]!)
    }
    npm.stdout.on("data", onData)
    npm.stderr.on("data", onData)
    npm.once("exit", () => reject(new Error(`npm start exited:\n${output}`)))
  })
  const server = descendants(npm.pid!)
  started.push(...server)
  expect(server.length).toBeGreaterThan(0)
  expect(await accepts(ads)).toBe(true)

  const exited = new Promise((resolve) => npm.once("exit", resolve))
  npm.kill("SIGTERM")
  await exited
  // Bounded wait for the whole tree to be gone (the server's shutdown bound is 2s).
  for (let i = 0; i < 100 && server.some(alive); i++) await new Promise((r) => setTimeout(r, 50))
  expect(server.filter(alive), output).toEqual([])
  expect(await accepts(ads)).toBe(false)
}, 90_000)
