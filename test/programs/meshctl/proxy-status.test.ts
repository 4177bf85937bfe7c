/**
 * `meshctl proxy-status` (and `ps`, `x proxy-status`) against a running mesh-discovery with real
 * ADS clients: the table shows each proxy's xDS types SYNCED or NOT SENT, JSON carries the same,
 * a name narrows to one proxy, and a missing control plane is an error naming where it looked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { run } from "../../support/processes.js"
import { type ControlPlane, eventually, startControlPlane } from "./control-plane-fixture.js"

let cp: ControlPlane

beforeAll(async () => {
  cp = await startControlPlane([
    { pod: "app-a", version: "1.2.3" },
    { pod: "app-b", version: "1.2.4", extraType: TypeUrl.NameTable },
  ])
}, 60_000)

afterAll(async () => {
  await cp?.stop()
})

const rowOf = (table: string, name: string) =>
  table
    .split("\n")
    .find((line) => line.startsWith(`${name} `))
    ?.split(/\s{3,}/)

describe("meshctl proxy-status", () => {
  it("prints one SYNCED row per connected proxy at --xds-address", async () => {
    const result = await eventually(
      () => run("meshctl", ["proxy-status", "--xds-address", cp.monitoring]),
      (r) => (r.stdout.match(/SYNCED/g) ?? []).length >= 4,
    )
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const lines = result.stdout.trim().split("\n")
    expect(lines[0]!.split(/\s{3,}/)).toEqual([
      "NAME",
      "CLUSTER",
      "CDS",
      "LDS",
      "EDS",
      "RDS",
      "ECDS",
      "MESHD",
      "VERSION",
    ])
    expect(lines).toHaveLength(3)
    expect(rowOf(result.stdout, "app-a.default")).toEqual([
      "app-a.default",
      "cluster-1",
      "SYNCED",
      "SYNCED",
      "NOT SENT",
      "NOT SENT",
      "NOT SENT",
      cp.monitoring,
      "1.2.3",
    ])
    expect(rowOf(result.stdout, "app-b.default")?.at(-1)).toBe("1.2.4")
  })

  it("shows every watched type with --verbosity 1, and only the standard ones without", async () => {
    const plain = await run("meshctl", ["ps", "--xds-address", cp.monitoring])
    expect(plain.stdout).not.toContain("NDS")
    const verbose = await run("meshctl", ["x", "ps", "--xds-address", cp.monitoring, "-v", "1"])
    expect(verbose.code).toBe(0)
    const header = verbose.stdout.split("\n")[0]!.split(/\s{3,}/)
    expect(header).toEqual(["NAME", "CLUSTER", "CDS", "LDS", "EDS", "RDS", "ECDS", "NDS", "MESHD", "VERSION"])
    // app-a never asked for the name table.
    expect(rowOf(verbose.stdout, "app-a.default")?.[7]).toBe("NOT SENT")
  })

  it("prints JSON with -o json and narrows to one proxy when named", async () => {
    const json = await run("meshctl", ["proxy-status", "--xds-address", cp.monitoring, "-o", "json", "app-b"])
    expect(json.code).toBe(0)
    const statuses = JSON.parse(json.stdout)
    expect(statuses).toHaveLength(1)
    expect(statuses[0]).toMatchObject({
      name: "app-b.default",
      cluster: "cluster-1",
      version: "1.2.4",
      meshd: cp.monitoring,
      xds: { CDS: "SYNCED", LDS: "SYNCED" },
    })
    expect(statuses[0].nonces.CDS.sent).toBe(statuses[0].nonces.CDS.acked)
    const missing = await run("meshctl", ["proxy-status", "--xds-address", cp.monitoring, "nobody.default"])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("proxy nobody.default is not connected")
  })

  it("finds the control plane pod through the orchestrator", async () => {
    const result = await run("meshctl", ["ps", "-c", cp.kubeconfig])
    expect(result.code).toBe(0)
    expect(rowOf(result.stdout, "app-a.default")?.at(-2)).toBe("meshd-7f9c")
  })

  it("fails when no control plane pod is found, naming namespace, label and context", async () => {
    const result = await run("meshctl", ["proxy-status", "-c", cp.kubeconfig, "-i", "default"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      "no control plane found in namespace default with label app=meshd (used context orchestrator)",
    )
    const label = await run("meshctl", ["proxy-status", "-c", cp.kubeconfig, "--xds-label", "app=other"])
    expect(label.code).toBe(1)
    expect(label.stderr).toContain("no control plane found in namespace mesh-system with label app=other")
  })

  it("reports an unreachable --xds-address", async () => {
    const result = await run("meshctl", ["proxy-status", "--xds-address", "127.0.0.1:1", "--timeout", "2s"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("127.0.0.1:1/debug/syncz")
  })
})
