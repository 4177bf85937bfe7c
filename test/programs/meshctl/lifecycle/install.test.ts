/**
 * `meshctl install`/`upgrade`/`verify-install`/`uninstall` as processes against the fake
 * orchestrator. A tiny in-test controller stands in for the workload controllers: it marks each
 * Deployment and DaemonSet ready (status written for the current generation) unless its name
 * is listed as stuck.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { INSTALL_KINDS } from "../../../../src/services/install/apply-plan.js"
import { renderManifest } from "../../../../src/services/install/manifest.js"
import { OPERATOR_LABEL } from "../../../../src/services/install/names.js"
import { resolveOperator } from "../../../../src/services/install/resolve.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { binary, ROOT } from "../../../support/processes.js"

const INITIAL_NAMESPACES = ["default", "kube-system", "kube-public", "kube-node-lease"]
let orch: Orchestrator
let kubeconfig: string
let controller: NodeJS.Timeout
const stuck = new Set<string>()

/** Runs meshctl with `input` on its stdin, then closed (by default: no answer to a prompt). */
const meshctl = (args: ReadonlyArray<string>, input = "") =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [binary("meshctl"), ...args, "--orchconfig", kubeconfig],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 30_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }),
    )
    child.stdin?.end(input)
  })

const markReady = () => {
  for (const kind of ["Deployment", "DaemonSet"]) {
    for (const o of orch.list("apps/v1", kind)) {
      const generation = o.metadata.generation ?? 1
      const status = (o.status ?? {}) as { observedGeneration?: number }
      if (stuck.has(o.metadata.name!) || status.observedGeneration === generation) continue
      const replicas = ((o.spec ?? {}) as { replicas?: number }).replicas ?? 1
      orch.put({
        ...o,
        status:
          kind === "Deployment"
            ? {
                observedGeneration: generation,
                replicas,
                updatedReplicas: replicas,
                readyReplicas: replicas,
                availableReplicas: replicas,
              }
            : { observedGeneration: generation, desiredNumberScheduled: 1, numberReady: 1, updatedNumberScheduled: 1 },
      })
    }
  }
}

const names = (apiVersion: string, kind: string): Array<string> =>
  orch.list(apiVersion, kind).map((o: KubeObject) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`)

beforeAll(async () => {
  orch = await startOrchestrator()
  kubeconfig = orch.kubeconfig()
  controller = setInterval(markReady, 20)
})
afterAll(async () => {
  clearInterval(controller)
  await orch.close()
})

describe("meshctl install (process)", () => {
  it("changes nothing without confirmation or with --dry-run; translate writes the resolved operator", async () => {
    const output = mkdtempSync(join(tmpdir(), "meshctl-translate-"))
    const [unanswered, dryRun, translate] = await Promise.all([
      meshctl(["install"]),
      meshctl(["install", "--dry-run"]),
      meshctl(["manifest", "translate", "--set", "profile=demo", "-r", "canary", "-o", output]),
    ])
    const translated = parse(readFileSync(join(output, "operator.yaml"), "utf8")) as {
      kind: string
      spec: { profile: string; revision: string }
    }
    rmSync(output, { recursive: true, force: true })
    expect(translate.code).toBe(0)
    expect(translated.kind).toBe("IstioOperator")
    expect(translated.spec).toMatchObject({ profile: "demo", revision: "canary" })
    expect(unanswered.stdout).toContain('This will install the mesh "default" profile')
    expect(unanswered.stdout).toContain("Proceed? (y/N)")
    expect(unanswered.code).not.toBe(0)
    expect(dryRun.stderr).toBe("")
    expect(dryRun.code).toBe(0)
    expect(dryRun.stdout).toContain("Would create namespace mesh-system")
    expect(dryRun.stdout).toContain("Would apply Deployment mesh-system/meshd")
    expect(dryRun.stdout).toContain("Would apply CustomResourceDefinition virtualservices.networking.mesh.io")
    expect(names("v1", "Namespace")).toEqual(INITIAL_NAMESPACES.map((n) => `/${n}`).sort())
    expect(names("apiextensions.k8s.io/v1", "CustomResourceDefinition")).toEqual([])
  })

  it("manifest install -y installs, waits for readiness and verifies with --verify", async () => {
    const result = await meshctl(["manifest", "install", "-y", "--verify"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const lines = result.stdout.split("\n")
    const order = [
      "✔ Mesh core installed",
      "✔ Meshd installed",
      "✔ Ingress gateways installed",
      "✔ Installation complete",
    ]
    expect(order.map((l) => lines.indexOf(l))).toEqual(order.map((l) => lines.indexOf(l)).sort((a, b) => a - b))
    for (const l of order) expect(lines).toContain(l)
    expect(result.stdout).toContain("✔ Mesh is installed and verified successfully")
    // What the cluster holds is what was rendered (the client passes every field through).
    const op = resolveOperator({ files: [], sets: [] })
    if (Either.isLeft(op)) throw new Error(op.left.join())
    for (const rendered of renderManifest(op.right)) {
      const { metadata, ...content } = rendered as KubeObject
      const stored = orch.get(String(content.apiVersion), String(content.kind), metadata.namespace, metadata.name!)
      expect(stored).toMatchObject({ ...content, metadata: { labels: metadata.labels ?? {} } })
    }
    const meshd = orch.get("apps/v1", "Deployment", "mesh-system", "meshd")
    expect(meshd?.metadata.labels?.[OPERATOR_LABEL]).toBe("installed-state")
    expect(names("apiextensions.k8s.io/v1", "CustomResourceDefinition")).toContain(
      "/virtualservices.networking.mesh.io",
    )
  })

  it("upgrade prunes a component the new configuration drops; verify-install of the old shape fails naming it", async () => {
    const drop = ["--set", "components.ingressGateways[0].enabled=false"]
    // Answered on stdin rather than with -y; acting as another user (the fake server allows it).
    const before = orch.requests().length
    const upgrade = await meshctl(["upgrade", ...drop, "--as", "jane", "--as-group", "ops"], "y\n")
    expect(upgrade.stdout).toContain("Proceed? (y/N)")
    expect(upgrade.code).toBe(0)
    const sent = orch.requests().slice(before)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.filter((r) => r.impersonateUser !== "jane" || r.impersonateGroups?.[0] !== "ops")).toEqual([])
    expect(upgrade.stdout).toContain("Pruned Deployment mesh-system/mesh-ingressgateway")
    expect(orch.get("apps/v1", "Deployment", "mesh-system", "mesh-ingressgateway")).toBeUndefined()
    expect(orch.get("v1", "Service", "mesh-system", "mesh-ingressgateway")).toBeUndefined()
    expect(orch.get("apps/v1", "Deployment", "mesh-system", "meshd")).toBeDefined()

    // The default configuration still has the gateway the cluster no longer has.
    const full = await meshctl(["verify-install"])
    expect(full.code).toBe(1)
    expect(full.stdout).toContain("Deployment mesh-system/mesh-ingressgateway: not found")
    expect(full.stderr).toContain("Mesh verification failed")
  })

  it("fails naming the workload that does not become ready within --readiness-timeout", async () => {
    stuck.add("meshd-canary")
    const result = await meshctl([
      "install",
      "-y",
      "-r",
      "canary",
      "--set",
      "profile=minimal",
      "--readiness-timeout",
      "300ms",
    ])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("Deployment mesh-system/meshd-canary: generation 1 not yet observed")
    expect(result.stdout).not.toContain("✔ Installation complete")
  })

  it("uninstall -r removes one revision; --purge then leaves nothing an install created", async () => {
    const canary = await meshctl(["uninstall", "-r", "canary", "-y", "-v"])
    expect(canary.code).toBe(0)
    expect(canary.stdout).toContain("Removed Deployment mesh-system/meshd-canary")
    expect(orch.get("apps/v1", "Deployment", "mesh-system", "meshd-canary")).toBeUndefined()
    expect(orch.get("apps/v1", "Deployment", "mesh-system", "meshd")).toBeDefined()
    expect(names("apiextensions.k8s.io/v1", "CustomResourceDefinition").length).toBeGreaterThan(0)

    const result = await meshctl(["uninstall", "--purge", "-y", "-v"])
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(result.stdout.split("\n")).toContain("Removed Deployment mesh-system/meshd")
    expect(result.stdout).toContain("Removed CustomResourceDefinition virtualservices.networking.mesh.io")
    for (const kind of INSTALL_KINDS) {
      const left = names(kind.apiVersion, kind.kind)
      expect({ kind: kind.kind, left }).toEqual({
        kind: kind.kind,
        left: kind.kind === "Namespace" ? INITIAL_NAMESPACES.map((n) => `/${n}`).sort() : [],
      })
    }
  })
})
