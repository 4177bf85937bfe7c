/** `meshctl manifest generate` as a process: the built binary, its stdout and exit code. */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { binary, ROOT } from "../../../support/processes.js"

const dir = mkdtempSync(join(tmpdir(), "meshctl-manifest-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [binary("meshctl"), ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }),
    )
  })

const kindsOf = (yaml: string) =>
  parseAllDocuments(yaml).map((d) => {
    const o = d.toJS() as { kind: string; metadata: { name: string } }
    return `${o.kind}/${o.metadata.name}`
  })

describe.concurrent("meshctl manifest generate (process)", () => {
  it("--set profile=demo writes the demo install as multi-document YAML", async () => {
    const result = await run(["manifest", "generate", "--set", "profile=demo"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const ids = kindsOf(result.stdout)
    expect(ids).toContain("Deployment/meshd")
    expect(ids).toContain("Deployment/mesh-egressgateway")
    expect(ids).toContain("CustomResourceDefinition/virtualservices.networking.mesh.io")
  })

  it("-f files overlay left to right, --revision suffixes names", async () => {
    const a = join(dir, "a.yaml")
    const b = join(dir, "b.yaml")
    writeFileSync(
      a,
      "apiVersion: install.mesh.io/v1alpha1\nkind: IstioOperator\nspec:\n  profile: minimal\n  hub: one\n",
    )
    writeFileSync(b, "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  hub: two\n")
    const result = await run(["manifest", "generate", "-f", a, "-f", b, "-r", "canary"])
    expect(result.code).toBe(0)
    expect(kindsOf(result.stdout)).toContain("Deployment/meshd-canary")
    expect(result.stdout).toContain("image: two/pilot:latest")
    expect(result.stdout).not.toContain("ingressgateway")
  })

  it("a bad --set exits 1 naming the field", async () => {
    const result = await run(["manifest", "generate", "--set", "components.cni.enabled=sometimes"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("spec.components.cni.enabled")
    expect(result.stdout).toBe("")
  })

  it("a bad -f file exits 1 naming the file and field", async () => {
    const bad = join(dir, "bad.yaml")
    writeFileSync(
      bad,
      "apiVersion: install.mesh.io/v1alpha1\nkind: IstioOperator\nspec:\n  components:\n    pilot:\n      k8s:\n        replicas: 2\n",
    )
    const result = await run(["manifest", "generate", "-f", bad])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("spec.components.pilot.k8s.replicas")
  })

  it("a missing -f file exits 1 naming it", async () => {
    const result = await run(["manifest", "generate", "-f", join(dir, "absent.yaml")])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("absent.yaml")
  })
})
