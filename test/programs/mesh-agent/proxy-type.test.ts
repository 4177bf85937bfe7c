/** `mesh-agent proxy [sidecar|router]`: injected sidecars and gateways name their role; anything else is refused. */
import { describe, expect, it } from "vitest"
import { run } from "../../support/processes.js"

describe("mesh-agent proxy's role argument", () => {
  it("refuses a role other than sidecar or router, naming both", async () => {
    const result = await run("mesh-agent", ["proxy", "banana"])
    expect(result.code).not.toBe(0)
    expect(`${result.stdout}${result.stderr}`).toMatch(/sidecar/)
    expect(`${result.stdout}${result.stderr}`).toMatch(/router/)
  })
})
