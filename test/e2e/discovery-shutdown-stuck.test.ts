/**
 * SIGTERM while every listener of mesh-discovery holds a client that will never finish (issue
 * 34, finding 10): ADS streams whose peer stopped reading, slowloris request heads on the HTTP,
 * monitoring, introspection and webhook listeners, request bodies that never arrive, and TLS
 * handshakes that never start on the secure gRPC and webhook ports. What cannot finish is closed
 * when `--shutdownDuration` ends: the process exits 0 within the duration plus a small margin,
 * every stuck connection closed, and no process left behind.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { openRawStream, rawSession } from "../support/raw-ads.js"
import { type StuckClient, slowloris, stalledBody, stalledHandshake } from "../support/stuck-clients.js"

/** Exit must come within the duration plus this: the force-close itself and the process exit. */
const MARGIN_MS = 1000
const NODE = (n: number) => ({
  id: `sidecar~127.0.0.1~stuck-${n}.demo~demo.svc.cluster.local`,
  metadata: { fields: {} },
})

let daemon: Daemon | undefined
let dir = ""
const cleanups: Array<() => void> = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  if (daemon?.process.exitCode === null) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

const port = async (pattern: RegExp): Promise<number> => Number((await daemon!.waitFor(pattern, 30_000))[1])

/** Starts the server (`duration` as `--shutdownDuration`, or its default) and waits until it serves. */
const start = async (duration?: string) => {
  dir = exampleMeshDir("discovery-shutdown-stuck-")
  daemon = startDaemon(
    "mesh-discovery",
    discoveryArgs(join(dir, "mesh"), duration === undefined ? {} : { "--shutdownDuration": duration }),
    // No send timeout: only the shutdown can end a stuck ADS stream.
    { PILOT_XDS_SEND_TIMEOUT: "0s" },
    dir,
  )
  const ports = {
    ads: await port(/ADS server listening on [\d.]+:(\d+)/),
    secure: await port(/secure gRPC listener on [\d.]+:(\d+)/),
    webhook: await port(/webhook HTTPS listener on [\d.]+:(\d+)/),
    http: await port(/http listening on [\d.]+:(\d+)/),
    monitoring: await port(/monitoring listening on [\d.]+:(\d+)/),
    introspection: await port(/introspection listening on [\d.]+:(\d+)/),
  }
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
  return ports
}

/** Two ADS streams on one connection whose receive window is 0, each with a response outstanding. */
const pausedAds = async (adsPort: number): Promise<StuckClient> => {
  const session = rawSession(adsPort, { reads: false })
  cleanups.push(() => session.destroy())
  const closed = new Promise<void>((resolve) => session.once("close", () => resolve()))
  for (const n of [1, 2]) {
    const raw = openRawStream(session, "StreamAggregatedResources")
    await raw.send({ node: NODE(n), type_url: TypeUrl.Cluster })
    await daemon!.waitFor(new RegExp(`new connection \\S+ node=sidecar~127\\.0\\.0\\.1~stuck-${n}\\.`))
  }
  return { name: "paused ADS streams", closed, destroy: () => session.destroy() }
}

const attach = async (client: Promise<StuckClient>): Promise<StuckClient> => {
  const attached = await client
  cleanups.push(attached.destroy)
  return attached
}

/** SIGTERM; resolves with the exit code and how long the exit took. */
const terminate = async () => {
  const started = Date.now()
  const code = await daemon!.stop("SIGTERM")
  return { code, took: Date.now() - started }
}

const processGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** Every stuck kind, on every listener it applies to. */
const attachAll = async (ports: Awaited<ReturnType<typeof start>>) => [
  await attach(pausedAds(ports.ads)),
  await attach(slowloris("slowloris http", ports.http)),
  await attach(slowloris("slowloris monitoring", ports.monitoring)),
  await attach(slowloris("slowloris introspection", ports.introspection)),
  await attach(slowloris("slowloris webhook", ports.webhook, { tls: true })),
  await attach(stalledBody("stalled body webhook", ports.webhook, { method: "POST", path: "/validate", tls: true })),
  await attach(stalledBody("stalled body introspection", ports.introspection, { method: "PUT", path: "/scopej/ads" })),
  await attach(stalledHandshake("stalled handshake secure gRPC", ports.secure)),
  await attach(stalledHandshake("stalled handshake webhook", ports.webhook)),
]

const expectCleanExit = async (
  clients: ReadonlyArray<StuckClient>,
  outcome: { code: number | null; took: number },
  durationMs: number,
) => {
  const output = daemon!.output()
  console.log(
    `shutdown with ${clients.length} stuck clients, --shutdownDuration ${durationMs}ms: ${outcome.took}ms, exit ${outcome.code}`,
  )
  expect(outcome.code, output.slice(-3000)).toBe(0)
  expect(outcome.took).toBeLessThanOrEqual(durationMs + MARGIN_MS)
  expect(output).not.toContain("shutdown did not finish")
  expect(processGone(daemon!.process.pid!)).toBe(true)
  // Every stuck connection was closed by the server, none left to the client.
  const settled = await Promise.all(
    clients.map((client) =>
      Promise.race([
        client.closed.then(() => ""),
        new Promise<string>((resolve) => setTimeout(() => resolve(client.name), 2000)),
      ]),
    ),
  )
  expect(settled.filter((name) => name !== "")).toEqual([])
}

describe("mesh-discovery shutdown with stuck clients", () => {
  it("exits 0 within the default --shutdownDuration (10s) plus a margin", async () => {
    const ports = await start()
    const clients = await attachAll(ports)
    await expectCleanExit(clients, await terminate(), 10_000)
  }, 90_000)

  it("scales with --shutdownDuration: 2s", async () => {
    const ports = await start("2s")
    const clients = await attachAll(ports)
    await expectCleanExit(clients, await terminate(), 2_000)
  }, 60_000)

  it("does not wait out the duration for clients with no request in a handler", async () => {
    const ports = await start()
    // Slowloris heads, unfinished TLS handshakes on the webhook port and paused ADS streams hold
    // no request anyone waits to answer: their connections close at once, the streams after the
    // ADS service's grace (at most 1s).
    const clients = [
      await attach(pausedAds(ports.ads)),
      await attach(slowloris("slowloris http", ports.http)),
      await attach(slowloris("slowloris monitoring", ports.monitoring)),
      await attach(slowloris("slowloris introspection", ports.introspection)),
      await attach(slowloris("slowloris webhook", ports.webhook, { tls: true })),
      await attach(stalledHandshake("stalled handshake webhook", ports.webhook)),
    ]
    const outcome = await terminate()
    await expectCleanExit(clients, outcome, 10_000)
    expect(outcome.took).toBeLessThan(5_000)
  }, 60_000)

  it("exits at once with 0 when no client is connected", async () => {
    await start()
    const outcome = await terminate()
    console.log(`shutdown with no clients: ${outcome.took}ms, exit ${outcome.code}`)
    expect(outcome.code, daemon!.output().slice(-2000)).toBe(0)
    expect(outcome.took).toBeLessThan(3000)
    expect(processGone(daemon!.process.pid!)).toBe(true)
  }, 60_000)
})
