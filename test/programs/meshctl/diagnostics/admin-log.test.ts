/**
 * `meshctl admin log` (and `meshd l`) against a running mesh-discovery's ControlZ listener,
 * found through the fake orchestrator's `app=meshd` pod: read the scopes, set a level, set a
 * stack-trace level, reset, and refuse unknown levels and scopes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "../../../support/processes.js"
import { type ControlPlane, startControlPlane } from "../control-plane-fixture.js"

let cp: ControlPlane

beforeAll(async () => {
  cp = await startControlPlane([])
}, 60_000)

afterAll(async () => {
  await cp?.stop()
})

const admin = (...args: Array<string>) =>
  run("meshctl", ["admin", "log", "-c", cp.kubeconfig, "--ctrlz_port", String(cp.introspectionPort), ...args])

const scopes = async () => {
  const result = await admin("-o", "json")
  expect(result.code).toBe(0)
  return new Map(
    (JSON.parse(result.stdout) as Array<{ name: string; output_level: string; stack_trace_level: string }>).map((s) => [
      s.name,
      s,
    ]),
  )
}

describe("meshctl admin log", () => {
  it("prints the scopes as a table, JSON and YAML", async () => {
    const table = await admin()
    expect(table.code).toBe(0)
    const lines = table.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^ACTIVE SCOPE\s{3,}DESCRIPTION\s{3,}LOG LEVEL$/)
    expect(lines.find((l) => l.startsWith("ads "))).toMatch(/\sinfo$/)
    const yaml = await admin("-o", "yaml")
    expect(yaml.stdout).toContain("name: ads")
  })

  it("sets, resets and sets stack-trace levels through ControlZ", async () => {
    const set = await admin("--level", "ads:debug,model:warn")
    expect(set.code).toBe(0)
    let now = await scopes()
    expect(now.get("ads")?.output_level).toBe("debug")
    expect(now.get("model")?.output_level).toBe("warn")

    const stack = await run("meshctl", [
      "meshd",
      "l",
      "meshd-7f9c",
      "-c",
      cp.kubeconfig,
      "--ctrlz_port",
      String(cp.introspectionPort),
      "--stack-trace-level",
      "ads:error",
    ])
    expect(stack.code).toBe(0)
    now = await scopes()
    expect(now.get("ads")?.stack_trace_level).toBe("error")

    const reset = await admin("--reset")
    expect(reset.code).toBe(0)
    now = await scopes()
    expect([...now.values()].every((s) => s.output_level === "info")).toBe(true)
  })

  it("refuses an unknown level, an unknown scope and an unknown pod", async () => {
    const level = await admin("--level", "ads:loud")
    expect(level.code).toBe(1)
    expect(level.stderr).toContain('unknown level "loud"')
    const scope = await admin("--level", "nosuchscope:debug")
    expect(scope.code).toBe(1)
    expect(scope.stderr).toContain('unknown log scope \\"nosuchscope\\"')
    const pod = await admin("meshd-gone")
    expect(pod.code).toBe(1)
    expect(pod.stderr).toContain("no pod meshd-gone found in namespace mesh-system with label app=meshd")
  })
})
