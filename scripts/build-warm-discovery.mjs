// Makes mesh-discovery's code cache (bin/launch.cjs) with a start of `discovery` on a copy of the
// example mesh, stopped once /ready answers, instead of with a `--help` run alone. Why: the cache
// then holds the functions a start compiles (module set-up of the server, its layers), which the
// next start reads instead of compiling: about 0.1 s less from spawn to /ready (issue 38). The
// `--help` run comes first and this start reads its cache, so the help path stays in it too.
// A start that does not get ready in time is stopped without writing: the `--help` cache stays.
import { spawn } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const READY_WITHIN_MS = 30_000
const EXIT_WITHIN_MS = 10_000

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts, waits for /ready, stops with SIGTERM (the cache is written at exit); resolves either way. */
export const warmDiscoveryCodeCache = async (root) => {
  const dir = mkdtempSync(join(tmpdir(), "mesh-build-warm-"))
  cpSync(join(root, "examples", "mesh"), join(dir, "mesh"), { recursive: true })
  const any = "127.0.0.1:0"
  const args = [
    join(root, "bin", "mesh-discovery.cjs"),
    "discovery",
    ...["--configDir", join(dir, "mesh"), "--registries", "Mock", "--shutdownDuration", "1s"],
    ...["--httpAddr", any, "--grpcAddr", any, "--secureGRPCAddr", any, "--httpsAddr", any, "--monitoringAddr", any],
    ...["--ctrlz_address", "127.0.0.1", "--ctrlz_port", "0"],
  ]
  // The working directory holds the CA's state (./var) and is removed after.
  const child = spawn(process.execPath, args, {
    cwd: dir,
    env: { ...process.env, MESH_WRITE_CODE_CACHE: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let output = ""
  child.stdout.on("data", (chunk) => {
    output = (output + chunk).slice(-8000)
  })
  child.stderr.on("data", (chunk) => {
    output = (output + chunk).slice(-8000)
  })
  const exited = new Promise((resolve) => child.once("exit", resolve))
  const deadline = Date.now() + READY_WITHIN_MS
  let ready = false
  while (!ready && child.exitCode === null && Date.now() < deadline) {
    const http = /http listening on ([\d.]+:\d+)/.exec(output)?.[1]
    if (http !== undefined)
      ready = await fetch(`http://${http}/ready`).then(
        (response) => response.status === 200,
        () => false,
      )
    if (!ready) await sleep(20)
  }
  // Not ready: no cache from this run (SIGKILL skips the writer), the `--help` one stays.
  child.kill(ready ? "SIGTERM" : "SIGKILL")
  const stopped = await Promise.race([exited.then(() => true), sleep(EXIT_WITHIN_MS).then(() => false)])
  if (!stopped) child.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
  if (!ready || !stopped)
    process.stderr.write(
      `build: mesh-discovery's code cache is the --help run's (the warm start did not finish):\n${output}\n`,
    )
}
