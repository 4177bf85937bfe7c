/**
 * The README's first minutes: the control plane on the example mesh, the example backends
 * (`node examples/backends.mjs`) and the example proxyless client (`node examples/client.mjs`,
 * a real @grpc/grpc-js-xds channel) give working RPCs. The example's endpoint ports are moved
 * to free ones in a copy of examples/mesh, so the test runs beside anything else on this host.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir, proxylessBootstrap } from "../support/discovery.js"
import { freePorts } from "../support/ports.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

let dir = ""
let daemon: Daemon | undefined
let backends: ChildProcess | undefined

afterAll(async () => {
  backends?.kill("SIGKILL")
  await daemon?.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

it("npm start + node examples/backends.mjs + node examples/client.mjs: the client's RPCs reach the reviews backends", async () => {
  dir = exampleMeshDir("example-mesh-")
  const services = join(dir, "mesh/services.yaml")
  let text = readFileSync(services, "utf8")
  const ports = ["18080", "19081", "19082", "19090"]
  const free = await freePorts(ports.length)
  ports.forEach((port, i) => {
    text = text.replace(`: ${port}\n`, `: ${free[i]}\n`)
  })
  writeFileSync(services, text)

  daemon = startDaemon("mesh-discovery", discoveryArgs(join(dir, "mesh")), {}, dir)
  const ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!

  backends = spawn(process.execPath, [join(ROOT, "examples/backends.mjs"), join(dir, "mesh")], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  let backendOutput = ""
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      backendOutput += chunk.toString()
      if ((backendOutput.match(/listening on/g) ?? []).length === 4) resolve()
    }
    backends!.stdout!.on("data", onData)
    backends!.stderr!.on("data", onData)
    backends!.once("exit", () => reject(new Error(`backends exited:\n${backendOutput}`)))
  })

  const bootstrap = proxylessBootstrap(ads, "sidecar~127.0.0.1~client.demo~demo.svc.cluster.local")
  const { GRPC_XDS_BOOTSTRAP: _, ...env } = process.env
  const client = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      [join(ROOT, "examples/client.mjs"), "reviews.demo.svc.cluster.local:9080", "20"],
      { env: { ...env, GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }),
    ),
  )
  expect(client.code, `${client.stdout}${client.stderr}`).toBe(0)
  const answers = client.stdout.trim().split("\n")
  expect(answers).toHaveLength(20)
  for (const answer of answers) expect(answer).toMatch(/^reviews\.demo\.svc\.cluster\.local:9080 -> reviews-v[12]$/)
}, 120_000)
