/**
 * `meshctl analyze --remote-contexts` against two real orchestrator API servers (kube-apiserver
 * and etcd, test/support/real-orchestrator.ts): one kubeconfig with a context for each, the
 * primary named by `--context` and the other by `--remote-contexts`. A Service defined alike in
 * both clusters passes; ports or headless mode that differ are reported (MSH0170) on the
 * primary's Service, with the clusters named; a context the kubeconfig lacks fails the command.
 * Without the flag, the remote secrets of the primary's mesh namespace name the remote clusters.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { run } from "../support/processes.js"
import { type RealOrchestrator, realOrchestratorPerFile } from "../support/real-orchestrator.js"

const primary = realOrchestratorPerFile({ beforeAll, afterAll })
const west = realOrchestratorPerFile({ beforeAll, afterAll })

const NS = "shop"

// biome-ignore lint/suspicious/noExplicitAny: kubeconfig YAML is walked loosely
const renamed = (orch: RealOrchestrator, name: string): any => {
  const config = parse(readFileSync(orch.kubeconfig, "utf8"))
  return {
    cluster: { name, cluster: config.clusters[0].cluster },
    user: { name, user: config.users[0].user },
    context: { name, context: { cluster: name, user: name } },
  }
}

const createService = (orch: RealOrchestrator, name: string, spec: Record<string, unknown>) =>
  orch.ok("POST", `/api/v1/namespaces/${NS}/services`, {
    body: { apiVersion: "v1", kind: "Service", metadata: { name, namespace: NS }, spec },
  })

let dir: string
let kubeconfig: string

beforeAll(async () => {
  if (primary.skip || west.skip) return
  dir = mkdtempSync(join(tmpdir(), "analyze-multicluster-"))
  const a = renamed(primary.get(), "primary")
  const b = renamed(west.get(), "west")
  kubeconfig = join(dir, "kubeconfig")
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [a.cluster, b.cluster],
      users: [a.user, b.user],
      contexts: [a.context, b.context],
      "current-context": "primary",
    }),
  )
  const http = [{ name: "http", port: 80, targetPort: 8080 }]
  for (const orch of [primary.get(), west.get()]) {
    await orch.ok("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } },
    })
    await createService(orch, "web", { selector: { app: "web" }, ports: http })
  }
  await createService(primary.get(), "api", { selector: { app: "api" }, ports: http })
  await createService(west.get(), "api", { selector: { app: "api" }, ports: [{ ...http[0], targetPort: 9090 }] })
  await createService(primary.get(), "db", { selector: { app: "db" }, ports: [{ name: "tcp", port: 5432 }] })
  await createService(west.get(), "db", {
    clusterIP: "None",
    selector: { app: "db" },
    ports: [{ name: "tcp", port: 5432 }],
  })
  await createService(west.get(), "only-west", { selector: { app: "w" }, ports: http })
}, 60_000)

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const analyze = (...args: ReadonlyArray<string>) =>
  run("meshctl", ["analyze", "--orchconfig", kubeconfig, "--context", "primary", "-n", NS, ...args])

describe.skipIf(primary.skip || west.skip)("meshctl analyze --remote-contexts on two real API servers", () => {
  it("reports the Services defined differently in the two clusters, and only those", async () => {
    const result = await analyze("--remote-contexts", "west", "-o", "json")
    expect(result.stderr).not.toContain("ignored")
    const messages = JSON.parse(result.stdout) as Array<Record<string, string>>
    const inconsistent = messages.filter((m) => m.code === "MSH0170")
    expect(inconsistent.map((m) => `${m.origin} ${m.cluster}`)).toEqual([
      `Service ${NS}/api default`,
      `Service ${NS}/db default`,
    ])
    expect(inconsistent.map((m) => m.message)).toEqual([
      `The service api in namespace "${NS}" is inconsistent across clusters ["default" "west"], which can lead to undefined behaviors. The inconsistent behaviors are: service ports are inconsistent.`,
      `The service db in namespace "${NS}" is inconsistent across clusters ["default" "west"], which can lead to undefined behaviors. The inconsistent behaviors are: service has mixed mode like headless and clusterIP.`,
    ])
    // The remote's own resources are analyzed as its own (the default analyzers see both clusters).
    expect(messages.some((m) => m.cluster === "west")).toBe(true)
    expect(result.code).toBe(0)
  }, 60_000)

  it("prints the cluster of each message; without remote clusters nothing is compared", async () => {
    const log = await analyze("--remote-contexts", "west", "--analyzer", "services.MultiClusterServiceAnalyzer")
    expect(log.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^Warning \[MSH0170\] \[cluster-default\] \(Service shop\/api\) The service api /),
      expect.stringMatching(/^Warning \[MSH0170\] \[cluster-default\] \(Service shop\/db\) The service db /),
    ])
    const alone = await analyze("--analyzer", "services.MultiClusterServiceAnalyzer")
    expect(alone.stdout).toBe("")
    expect(alone.stderr).toContain("No validation issues found")
    expect(alone.code).toBe(0)
  }, 60_000)

  it("without --remote-contexts, takes the remote clusters from the primary's remote secrets", async () => {
    const orch = primary.get()
    const meshNs = "remote-secrets"
    await orch.ok("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: meshNs } },
    })
    // The remote's admin kubeconfig, its cluster named as the remote secret of `meshctl create-remote-secret` names it.
    const remote = renamed(west.get(), "west-cluster")
    const remoteKubeconfig = stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [remote.cluster],
      users: [remote.user],
      contexts: [remote.context],
      "current-context": "west-cluster",
    })
    await orch.ok("POST", `/api/v1/namespaces/${meshNs}/secrets`, {
      body: {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "mesh-remote-secret-west", labels: { "mesh/multiCluster": "true" } },
        data: { west: Buffer.from(remoteKubeconfig).toString("base64") },
      },
    })
    const found = await analyze("-i", meshNs, "--analyzer", "services.MultiClusterServiceAnalyzer", "-o", "json")
    const messages = JSON.parse(found.stdout) as Array<Record<string, string>>
    expect(messages.map((m) => `${m.code} ${m.origin}`)).toEqual([
      `MSH0170 Service ${NS}/api`,
      `MSH0170 Service ${NS}/db`,
    ])
    expect(messages[0]?.message).toContain('across clusters ["default" "west-cluster"]')
  }, 60_000)

  it("reads no Namespace, Service, Pod or Deployment of the system namespaces, as the reference does", async () => {
    const orch = primary.get()
    // kube-system, kube-public and kube-node-lease the API server makes itself; local-path-storage is a kind cluster's.
    await orch.ok("POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "local-path-storage" } },
    })
    const unnamedPort = { selector: { app: "x" }, ports: [{ name: "web", port: 80 }] }
    for (const namespace of ["kube-system", "kube-public", "kube-node-lease", "local-path-storage", NS])
      await orch.ok("POST", `/api/v1/namespaces/${namespace}/services`, {
        body: { apiVersion: "v1", kind: "Service", metadata: { name: "unnamed-port", namespace }, spec: unnamedPort },
      })
    // A Service in kube-system of the remote cluster only, defined differently: not compared either.
    await west.get().ok("POST", "/api/v1/namespaces/kube-system/services", {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "unnamed-port", namespace: "kube-system" },
        spec: { ...unnamedPort, clusterIP: "None" },
      },
    })
    const result = await run("meshctl", [
      "analyze",
      "--orchconfig",
      kubeconfig,
      "--context",
      "primary",
      "-A",
      "--remote-contexts",
      "west",
      "--analyzer",
      "service.PortNameAnalyzer",
      "--analyzer",
      "injection.Analyzer",
      "--analyzer",
      "services.MultiClusterServiceAnalyzer",
      "-o",
      "json",
    ])
    const messages = JSON.parse(result.stdout) as Array<Record<string, string>>
    const origins = messages.filter((m) => m.cluster !== "west").map((m) => `${m.code} ${m.origin}`)
    expect(origins).toContain(`MSH0118 Service ${NS}/unnamed-port`)
    expect(origins).toContain(`MSH0102 Namespace ${NS}`)
    const system = /kube-system|kube-public|kube-node-lease|local-path-storage/
    expect(messages.filter((m) => system.test(m.origin ?? "")).map((m) => `${m.code} ${m.origin}`)).toEqual([])
  }, 60_000)

  it("fails on a context the kubeconfig does not have", async () => {
    const result = await analyze("--remote-contexts", "nowhere")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('context "nowhere" not found')
  }, 60_000)
})
