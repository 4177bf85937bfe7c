/**
 * `mesh-discovery discovery --profile` as users run it (the built binary): `/debug/pprof/` on
 * both listeners of the debug interface, a CPU profile over `?seconds=1` that parses as a V8
 * `.cpuprofile` (what `node --cpu-prof` writes and DevTools opens), a heap snapshot whose
 * temporary file is gone afterwards; the bounds (seconds 1..300, one profile at a time), 403
 * to a non-loopback caller, and 404 without `--profile`.
 */
import { mkdtempSync, readdirSync } from "node:fs"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"

let profiled: Daemon
let plain: Daemon
let profiledTmp = ""
/** `host:port` of each listener: the HTTP one on every address, monitoring on loopback. */
let httpPort = ""
let monitoring = ""
let plainHttp = ""
let plainMonitoring = ""

const start = (profile: boolean) => {
  const dir = exampleMeshDir("discovery-pprof-")
  const tmp = mkdtempSync(join(tmpdir(), "discovery-pprof-tmp-"))
  const daemon = startDaemon(
    "mesh-discovery",
    discoveryArgs(join(dir, "mesh"), { "--httpAddr": ":0", ...(profile ? { "--profile": "true" } : {}) }),
    { TMPDIR: tmp },
    dir,
  )
  return { daemon, tmp }
}

const listenerOf = async (daemon: Daemon, name: string) => {
  const match = await daemon.waitFor(new RegExp(`${name} listening on (\\S+):(\\d+)\\n`), 40_000)
  return match[2]!
}

beforeAll(async () => {
  const a = start(true)
  const b = start(false)
  profiled = a.daemon
  profiledTmp = a.tmp
  plain = b.daemon
  ;[httpPort, monitoring, plainHttp, plainMonitoring] = await Promise.all([
    listenerOf(profiled, "http"),
    listenerOf(profiled, "monitoring").then((port) => `127.0.0.1:${port}`),
    listenerOf(plain, "http").then((port) => `127.0.0.1:${port}`),
    listenerOf(plain, "monitoring").then((port) => `127.0.0.1:${port}`),
  ])
})

afterAll(async () => {
  await Promise.all([profiled?.stop(), plain?.stop()])
})

interface CpuProfile {
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly callFrame: { readonly functionName: string } }>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

describe("mesh-discovery --profile", () => {
  it("serves the index on the HTTP and the monitoring listener", async () => {
    for (const base of [`http://127.0.0.1:${httpPort}`, `http://${monitoring}`]) {
      const index = await fetch(`${base}/debug/pprof/`)
      expect(index.status, base).toBe(200)
      const html = await index.text()
      expect(html).toContain('href="profile?seconds=30"')
      expect(html).toContain('href="heap"')
      const bare = await fetch(`${base}/debug/pprof`, { redirect: "manual" })
      expect(bare.status).toBe(301)
      expect(bare.headers.get("location")).toBe("/debug/pprof/")
    }
  })

  it("answers /debug/pprof/profile?seconds=1 with a V8 cpuprofile taken over about a second", async () => {
    const started = Date.now()
    const response = await fetch(`http://127.0.0.1:${httpPort}/debug/pprof/profile?seconds=1`)
    const elapsed = Date.now() - started
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.headers.get("content-disposition")).toContain('filename="profile.cpuprofile"')
    const profile = (await response.json()) as CpuProfile
    // The shape `node --cpu-prof` writes and DevTools, VS Code and speedscope read.
    expect(profile.nodes.length).toBeGreaterThan(0)
    expect(profile.nodes.some((node) => node.callFrame.functionName === "(root)")).toBe(true)
    expect(profile.samples.length).toBeGreaterThan(0)
    expect(profile.timeDeltas.length).toBe(profile.samples.length)
    const ids = new Set(profile.nodes.map((node) => node.id))
    for (const sample of profile.samples) expect(ids.has(sample)).toBe(true)
    // Microseconds: the profile covers the second asked for.
    expect(profile.endTime - profile.startTime).toBeGreaterThanOrEqual(900_000)
    expect(elapsed).toBeGreaterThanOrEqual(900)
  })

  it("takes one CPU profile at a time (409 to a second caller) and bounds ?seconds", async () => {
    const base = `http://127.0.0.1:${httpPort}/debug/pprof`
    const first = fetch(`${base}/profile?seconds=2`)
    // A round trip after the first request was sent: by then the first holds the profiler.
    await (await fetch(`${base}/`)).text()
    const second = await fetch(`${base}/profile?seconds=1`)
    expect(second.status).toBe(409)
    expect(await second.text()).toContain("already being taken")
    expect((await first).status).toBe(200)
    for (const seconds of ["0", "301", "1.5", "abc"]) {
      const response = await fetch(`${base}/profile?seconds=${seconds}`)
      expect(response.status, seconds).toBe(400)
      expect(await response.text()).toContain("seconds must be a whole number from 1 to 300")
    }
    expect((await fetch(`${base}/goroutine`)).status).toBe(404)
  })

  it("answers /debug/pprof/heap with a V8 heap snapshot and removes its temporary file", async () => {
    const response = await fetch(`http://${monitoring}/debug/pprof/heap`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-disposition")).toContain('filename="heap.heapsnapshot"')
    const snapshot = (await response.json()) as {
      snapshot: { meta: { node_fields: ReadonlyArray<string> }; node_count: number }
      nodes: ReadonlyArray<number>
      strings: ReadonlyArray<string>
    }
    expect(snapshot.snapshot.meta.node_fields).toContain("name")
    expect(snapshot.nodes.length).toBe(snapshot.snapshot.node_count * snapshot.snapshot.meta.node_fields.length)
    expect(snapshot.strings.length).toBeGreaterThan(0)
    expect(readdirSync(profiledTmp).filter((name) => name.startsWith("mesh-heap-"))).toEqual([])
  })

  it("refuses a caller that is not on loopback (403), as the debug interface does", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)
    if (external === undefined) {
      if (process.env.CI === "true") throw new Error("no non-loopback IPv4 address to call from")
      return
    }
    const response = await fetch(`http://${external.address}:${httpPort}/debug/pprof/profile?seconds=1`)
    expect(response.status).toBe(403)
    expect((await fetch(`http://${external.address}:${httpPort}/debug/pprof/`)).status).toBe(403)
  })
})

describe("mesh-discovery without --profile", () => {
  it("answers 404 under /debug/pprof/ on both listeners", async () => {
    for (const base of [`http://${plainHttp}`, `http://${plainMonitoring}`]) {
      for (const path of ["/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap"]) {
        expect((await fetch(`${base}${path}`)).status, `${base}${path}`).toBe(404)
      }
      // The debug interface itself is there.
      expect((await fetch(`${base}/debug/list`)).status).toBe(200)
    }
  })
})
