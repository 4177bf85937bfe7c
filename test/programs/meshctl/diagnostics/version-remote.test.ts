/**
 * `meshctl version` with `--remote` (the default) against a running mesh-discovery with real
 * ADS clients: the client, control plane and data plane versions, found through the
 * orchestrator or at `x version --xds-address`; an unreachable control plane is reported on
 * stderr without failing the command.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "../../../support/processes.js"
import { type ControlPlane, eventually, startControlPlane } from "../control-plane-fixture.js"

let cp: ControlPlane
let clientVersion = ""

beforeAll(async () => {
  cp = await startControlPlane([
    { pod: "app-a", version: "1.2.3" },
    { pod: "app-b", version: "1.2.3" },
    { pod: "app-c", version: "1.2.4" },
  ])
  clientVersion = (await run("meshctl", ["version", "--remote=false"])).stdout.trim()
}, 60_000)

afterAll(async () => {
  await cp?.stop()
})

describe("meshctl version --remote", () => {
  it("prints client, control plane and data plane versions found through the orchestrator", async () => {
    const result = await eventually(
      () => run("meshctl", ["x", "version", "-c", cp.kubeconfig, "--plaintext"]),
      (r) => r.stdout.includes("(2 proxies)") && r.stdout.includes("(1 proxies)"),
    )
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    expect(result.stdout.trim().split("\n")).toEqual([
      `client version: ${clientVersion}`,
      // The control plane is the same build as the client here.
      `control plane version: ${clientVersion}`,
      "data plane version: 1.2.3 (2 proxies), 1.2.4 (1 proxies)",
    ])
  })

  it("prints the same as JSON, and answers at x version --xds-address", async () => {
    const json = await run("meshctl", ["x", "version", "--xds-address", `http://${cp.monitoring}`, "-o", "json"])
    expect(json.code).toBe(0)
    const document = JSON.parse(json.stdout)
    expect(document.clientVersion).toEqual({ version: clientVersion })
    expect(document.meshVersion).toEqual([
      { component: "meshd", name: cp.monitoring, info: { version: clientVersion } },
    ])
    expect(document.dataPlaneVersion.map((p: { meshVersion: string }) => p.meshVersion).sort()).toEqual([
      "1.2.3",
      "1.2.3",
      "1.2.4",
    ])
  })

  it("reports an unreachable control plane on stderr and still prints the client version", async () => {
    const result = await run("meshctl", ["version", "-c", cp.kubeconfig, "-i", "default"])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(`client version: ${clientVersion}`)
    expect(result.stderr).toContain(
      "control plane version: unavailable (no control plane found in namespace default with label app=meshd",
    )
  })
})
