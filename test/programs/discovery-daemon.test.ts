/**
 * mesh-discovery discovery as a daemon: monitoring /metrics (checked by promtool), the
 * introspection API changing log levels at run time, the request command, and a clean stop
 * on SIGTERM. One process serves all checks.
 */
import { spawnSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Daemon, run, startDaemon } from "../support/processes.js"

let daemon: Daemon
let monitoring = ""
let introspection = ""

beforeAll(async () => {
  daemon = startDaemon(
    "mesh-discovery",
    [
      "discovery",
      "--registries",
      "Mock",
      "--monitoringAddr",
      "127.0.0.1:0",
      "--ctrlz_address",
      "127.0.0.1",
      "--ctrlz_port",
      "0",
      "--grpcAddr",
      "127.0.0.1:0",
      "--secureGRPCAddr",
      "127.0.0.1:0",
      "--httpAddr",
      "127.0.0.1:0",
      "--httpsAddr",
      "127.0.0.1:0",
      "--log_as_json",
    ],
    { MESH_TEST_SERVICE_PASSWORD: "hunter2-must-not-leak" },
  )
  monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/))[1]!
  introspection = (await daemon.waitFor(/introspection listening on ([\d.]+:\d+)/))[1]!
})

afterAll(async () => {
  await daemon?.stop("SIGKILL")
})

const hasPromtool = spawnSync("which", ["promtool"]).status === 0

describe("mesh-discovery discovery", () => {
  it("serves Prometheus metrics with mesh_build and process metrics", async () => {
    const response = await fetch(`http://${monitoring}/metrics`)
    expect(response.status).toBe(200)
    const text = await response.text()
    expect(text).toMatch(/^mesh_build\{component="pilot-discovery",tag="[^"]+"\} 1$/m)
    expect(text).toMatch(/^process_cpu_seconds_total /m)
    expect(text).toMatch(/^meshd_uptime_seconds /m)
    if (hasPromtool) {
      const check = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
      // Exit 1 is a parse error; 3 means lint findings. Accepted findings: prom-client's own Node.js
      // gauges (a `_total` suffix), and counters whose names the spec fixes without `_total`
      // (`pilot_xds_write_timeout`, `meshca_server_*_count`).
      expect(check.status, check.stderr).not.toBe(1)
      const specNamedCounter = /counter metrics should have "_total" suffix|should not have "_count" suffix/
      const findings = `${check.stdout}${check.stderr}`
        .split("\n")
        .filter((line) => line.trim() !== "" && !line.startsWith("nodejs_") && !specNamedCounter.test(line))
      expect(findings).toEqual([])
    }
  })

  it("reads and changes log levels at run time over the introspection API", async () => {
    const scopes = (await (await fetch(`http://${introspection}/scopej/`)).json()) as Array<{ name: string }>
    expect(scopes.map((scope) => scope.name)).toContain("ads")
    expect(scopes.map((scope) => scope.name)).not.toContain("all")

    const put = await fetch(`http://${introspection}/scopej/ads`, {
      method: "PUT",
      body: JSON.stringify({ output_level: "debug", log_callers: true }),
    })
    expect(put.status).toBe(202)
    const ads = await (await fetch(`http://${introspection}/scopej/ads`)).json()
    expect(ads).toMatchObject({ name: "ads", output_level: "debug", log_callers: true })
    await daemon.waitFor(/"msg":"log scope ads changed: output debug"/)

    const bad = await fetch(`http://${introspection}/scopej/ads`, { method: "PUT", body: '{"output_level":"loud"}' })
    expect(bad.status).toBe(400)
    const unknown = await fetch(`http://${introspection}/scopej/nosuch`)
    expect(unknown.status).toBe(404)

    const proc = (await (await fetch(`http://${introspection}/procj/`)).json()) as { pid: number }
    expect(proc.pid).toBe(daemon.process.pid)
  })

  it("shows its environment to a local caller with secret-looking values redacted", async () => {
    const response = await fetch(`http://${introspection}/envj/`)
    expect(response.status).toBe(200)
    const env = (await response.json()) as Array<string>
    expect(env).toContain("MESH_TEST_SERVICE_PASSWORD=<redacted>")
    expect(JSON.stringify(env)).not.toContain("hunter2-must-not-leak")
    expect(env.some((line) => line.startsWith("PATH="))).toBe(true)
  })

  it("answers the request command on its monitoring port", async () => {
    // The request command targets the fixed local monitoring port (15014), which a parallel test
    // run cannot own; when nothing listens there, the error must name the address it tried.
    const result = await run("mesh-discovery", ["request", "GET", "/version"])
    if (result.code === 0) {
      expect(JSON.parse(result.stdout)).toHaveProperty("version")
    } else {
      expect(result.stderr).toContain("http://127.0.0.1:15014/version")
    }
    const badMethod = await run("mesh-discovery", ["request", "FETCH", "/metrics"])
    expect(badMethod.code).toBe(1)
    expect(badMethod.stderr).toContain('unsupported method "FETCH"')
  })

  it("stops cleanly on SIGTERM", async () => {
    const extra = startDaemon("mesh-discovery", [
      "discovery",
      "--registries",
      "Mock",
      "--monitoringAddr",
      "127.0.0.1:0",
      "--ctrlz_port",
      "0",
    ])
    await extra.waitFor(/introspection listening/)
    const code = await extra.stop("SIGTERM")
    expect(code).toBe(0)
    expect(extra.output()).toContain("discovery server stopped")
  })
})
