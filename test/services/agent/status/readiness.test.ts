/** The agent's readiness rule: sidecar needs a first xDS response, proxyless must not. */
import { describe, expect, it } from "vitest"
import { type AgentReadinessInputs, agentReadiness } from "../../../../src/services/agent/status/status.js"

const all: AgentReadinessInputs = {
  proxyless: false,
  certificateValid: true,
  bootstrapWritten: true,
  xdsResponseReceived: true,
  proxyReady: true,
}

describe("agentReadiness", () => {
  it("proxyless: ready with certificates and the bootstrap, before any xDS response", () => {
    expect(agentReadiness({ ...all, proxyless: true, xdsResponseReceived: false })).toEqual({ ready: true })
    expect(agentReadiness({ ...all, proxyless: true, bootstrapWritten: false })).toEqual({
      ready: false,
      reason: "gRPC bootstrap not written yet",
    })
    expect(agentReadiness({ ...all, proxyless: true, certificateValid: false })).toEqual({
      ready: false,
      reason: "workload certificate expired",
    })
  })

  it("sidecar: waits for the first xDS response and the proxy", () => {
    expect(agentReadiness(all)).toEqual({ ready: true })
    expect(agentReadiness({ ...all, xdsResponseReceived: false })).toEqual({
      ready: false,
      reason: "no xDS response received yet",
    })
    expect(agentReadiness({ ...all, proxyReady: false })).toEqual({ ready: false, reason: "proxy not ready" })
  })
})
