/**
 * `mesh-agent proxy --profiling`: the agent status port serves `/debug/pprof/` (the same
 * handler as mesh-discovery's, whose bounds test/e2e/discovery-pprof.test.ts runs against the
 * built binary) to loopback callers only, and nothing there without the flag.
 */
import { networkInterfaces } from "node:os"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as statusServersLayer } from "../../../../src/layers/agent/status/status-server.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { AgentReadiness } from "../../../../src/services/agent/status/status.js"
import { freePort } from "../../../support/ports.js"

const externalIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address

let scope: Scope.CloseableScope
let profiled = 0
let plain = 0

const statusLayer = (port: number, readiness: number, profiling: boolean) =>
  statusServersLayer({
    readiness: { host: "127.0.0.1", port: readiness },
    agentStatus: { host: undefined, port },
    profiling,
  }).pipe(
    Layer.provide(Layer.succeed(AgentReadiness, AgentReadiness.of({ check: Effect.succeed({ ready: true }) }))),
    Layer.provide(metricsLayer("mesh-agent")),
  )

beforeAll(async () => {
  const [a, b, c, d] = await Promise.all([freePort(), freePort(), freePort(), freePort()])
  profiled = a
  plain = c
  scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(Layer.merge(statusLayer(a, b, true), statusLayer(c, d, false)), scope))
}, 30_000)

afterAll(async () => {
  if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
})

describe("agent status port with --profiling", () => {
  it("serves the index and a V8 CPU profile over ?seconds=1", async () => {
    const index = await fetch(`http://127.0.0.1:${profiled}/debug/pprof/`)
    expect(index.status).toBe(200)
    expect(await index.text()).toContain('href="heap"')
    const response = await fetch(`http://127.0.0.1:${profiled}/debug/pprof/profile?seconds=1`)
    expect(response.status).toBe(200)
    const profile = (await response.json()) as {
      nodes: Array<unknown>
      samples: Array<number>
      timeDeltas: Array<number>
    }
    expect(profile.nodes.length).toBeGreaterThan(0)
    expect(profile.timeDeltas.length).toBe(profile.samples.length)
    expect((await fetch(`http://127.0.0.1:${profiled}/debug/pprof/profile?seconds=0`)).status).toBe(400)
  })

  it("refuses a caller that is not on loopback (403)", async () => {
    if (externalIPv4 === undefined) {
      if (process.env.CI === "true") throw new Error("no non-loopback IPv4 address to call from")
      return
    }
    expect((await fetch(`http://${externalIPv4}:${profiled}/debug/pprof/`)).status).toBe(403)
    // The rest of the status port still answers there.
    expect((await fetch(`http://${externalIPv4}:${profiled}/healthz/ready`)).status).toBe(200)
  })

  it("serves no /debug/pprof/ without the flag", async () => {
    expect((await fetch(`http://127.0.0.1:${plain}/debug/pprof/`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${plain}/debug/pprof/profile?seconds=1`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${plain}/healthz/ready`)).status).toBe(200)
  })
})
