/**
 * A listener of `mesh-discovery discovery` that cannot bind stops start-up: exit 1 and one line
 * naming the flag, the address and the cause. Before, a taken --grpcAddr or --ctrlz_port exited
 * 0 (the failure was hidden behind the interrupted sibling listeners) and a taken --httpAddr
 * printed `Error: ` with no message.
 */
import { rmSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { startDaemon } from "../support/processes.js"

let dir = ""
let occupier: Server
let port = 0

beforeAll(async () => {
  dir = exampleMeshDir("listen-errors-")
  occupier = createServer()
  await new Promise<void>((resolve) => occupier.listen(0, "127.0.0.1", resolve))
  port = (occupier.address() as { port: number }).port
})

afterAll(async () => {
  await new Promise((resolve) => occupier.close(resolve))
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

/** Starts discovery with `flags` overriding the loopback defaults; resolves with its exit code and output. */
const startWith = async (flags: Record<string, string>) => {
  const daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh"), flags), {}, dir)
  const exited = new Promise<number | null>((resolve) => daemon.process.once("exit", resolve))
  // A start-up that hangs instead of failing is the bug: bound the wait, then kill.
  const timer = setTimeout(() => daemon.process.kill("SIGKILL"), 15_000)
  const code = await exited
  clearTimeout(timer)
  return { code, output: daemon.output() }
}

describe("mesh-discovery discovery with an address already taken", () => {
  const cases: ReadonlyArray<readonly [string, (port: number) => Record<string, string>, (port: number) => string]> = [
    ["--grpcAddr", (p) => ({ "--grpcAddr": `127.0.0.1:${p}` }), (p) => `--grpcAddr 127.0.0.1:${p}`],
    ["--httpAddr", (p) => ({ "--httpAddr": `127.0.0.1:${p}` }), (p) => `--httpAddr 127.0.0.1:${p}`],
    ["--monitoringAddr", (p) => ({ "--monitoringAddr": `127.0.0.1:${p}` }), (p) => `--monitoringAddr 127.0.0.1:${p}`],
    ["--secureGRPCAddr", (p) => ({ "--secureGRPCAddr": `127.0.0.1:${p}` }), (p) => `--secureGRPCAddr 127.0.0.1:${p}`],
    ["--ctrlz_port", (p) => ({ "--ctrlz_port": String(p) }), (p) => `--ctrlz_address/--ctrlz_port 127.0.0.1:${p}`],
  ]
  for (const [flag, flags, named] of cases) {
    it(`${flag}: exits 1 naming the flag, the address and the cause`, async () => {
      const { code, output } = await startWith(flags(port))
      expect(code, output).toBe(1)
      expect(output).toContain(`Error: ${named(port)}: address already in use\n`)
    })
  }

  // The other listeners are still binding when the taken one fails; one whose host lookup
  // ("localhost") finished after its scope closed used to stay bound and keep the failed
  // process alive (about 2 starts in 3).
  it("exits even when a sibling listener binds after start-up failed", async () => {
    for (let i = 0; i < 3; i++) {
      const { code, output } = await startWith({
        "--grpcAddr": `127.0.0.1:${port}`,
        "--ctrlz_address": "localhost",
        "--httpAddr": "localhost:0",
      })
      expect(code, output).toBe(1)
    }
  })
})
