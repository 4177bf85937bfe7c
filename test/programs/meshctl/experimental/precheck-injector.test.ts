/**
 * `meshctl x precheck`, `meshctl x injector list` and `meshctl remote-clusters` as processes
 * against fake orchestrators: a clean cluster and one with findings (both injection labels, a
 * pod of a revision that is gone, a removed mesh config setting), injector webhooks, and a meshd
 * pod whose monitoring port is a stand-in serving `/debug/clusterz`.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { run } from "../../../support/processes.js"

let clean: Orchestrator
let busy: Orchestrator
let standIn: Server

const injected = (revision: string) => ({
  "sidecar.mesh.io/status": JSON.stringify({ containers: ["mesh-proxy"], revision }),
})

const meshdPod = (port: number) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "meshd-abc", namespace: "mesh-system", labels: { app: "meshd" } },
  spec: { containers: [{ name: "discovery", image: "i", ports: [{ name: "http-monitoring", containerPort: port }] }] },
  status: { phase: "Running", podIP: "127.0.0.1" },
})

beforeAll(async () => {
  standIn = createServer((req, res) => {
    if (req.url === "/debug/clusterz") {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify([{ ID: "east", SecretName: "mesh-system/mesh-remote-secret-east", SyncStatus: "synced" }]))
      return
    }
    res.writeHead(404)
    res.end()
  })
  await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
  const port = (standIn.address() as AddressInfo).port
  ;[clean, busy] = await Promise.all([
    startOrchestrator({ tls: false, namespaces: ["default", "mesh-system"] }),
    startOrchestrator({ tls: false, namespaces: ["mesh-system"] }),
  ])
  clean.put(meshdPod(port))
  busy.put(meshdPod(port))
  busy.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "default", labels: { "mesh-injection": "enabled" } },
  })
  busy.put({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "shop", labels: { "mesh-injection": "enabled", "mesh.io/rev": "canary" } },
  })
  for (const [name, namespace, revision] of [
    ["web-1", "default", "default"],
    ["web-2", "default", "default"],
    ["old-1", "shop", "1-20"],
  ] as const)
    busy.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace, annotations: injected(revision) },
      spec: { containers: [{ name: "app", image: "i" }] },
    })
  busy.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "mixerCheckServer: mixer:9091\nenableTracing: true\n" },
  })
  busy.put({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "mesh-sidecar-injector", labels: { "mesh.io/rev": "default" } },
    webhooks: [
      {
        name: "namespace.sidecar-injector.mesh.io",
        clientConfig: { service: { name: "meshd", namespace: "mesh-system", path: "/inject" } },
        namespaceSelector: { matchExpressions: [{ key: "mesh-injection", operator: "In", values: ["enabled"] }] },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
      },
    ],
  })
})

afterAll(async () => {
  await Promise.all([clean?.close(), busy?.close()])
  await new Promise<void>((resolve) => (standIn ? standIn.close(() => resolve()) : resolve()))
})

describe("meshctl x precheck, x injector list, remote-clusters", () => {
  it("reports a clean cluster, findings with exit codes, the injector tables and remote clusters", async () => {
    const cleanConfig = clean.kubeconfig()
    const busyConfig = busy.kubeconfig()
    const [ok, findings, json, injector, remote] = await Promise.all([
      run("meshctl", ["x", "precheck", "-c", cleanConfig]),
      run("meshctl", ["experimental", "precheck", "-c", busyConfig, "--from-version", "1.7"]),
      run("meshctl", ["x", "precheck", "-c", busyConfig, "-o", "json", "--output-threshold", "Info"]),
      run("meshctl", ["x", "injector", "list", "-c", busyConfig]),
      run("meshctl", ["remote-clusters", "-c", busyConfig]),
    ])

    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout.trim()).toBe("✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!")

    expect(findings.code).not.toBe(0)
    expect(findings.stderr).toContain("Issues found when checking the cluster")
    const lines = findings.stdout.trimEnd().split("\n")
    expect(lines).toContainEqual(expect.stringMatching(/^Warning \[MSH0123\] \(Namespace shop\) /))
    expect(lines).toContainEqual(expect.stringMatching(/^Warning \[MSH0806\] \(Pod shop\/old-1\) .*"1-20"/))
    expect(lines).toContainEqual(expect.stringMatching(/^Error \[MSH0807\] .*"mixerCheckServer" was removed in 1\.8/))
    expect(lines).toContainEqual(expect.stringMatching(/^Warning \[MSH0002\] .*"enableTracing"/))
    // Info findings stay below the default Warning threshold.
    expect(findings.stdout).not.toContain("Info")

    // No Error without --from-version: exit 0; Info shown with the lower threshold.
    expect(json.code, json.stderr).toBe(0)
    const messages = JSON.parse(json.stdout) as Array<{ code: string; level: string }>
    expect(messages.map((m) => m.code).sort()).toEqual(["MSH0123", "MSH0803", "MSH0804", "MSH0806"])
    expect(messages.find((m) => m.code === "MSH0803")?.level).toBe("Info")

    expect(injector.code, injector.stderr).toBe(0)
    const [namespaces, hooks] = injector.stdout.trimEnd().split("\n\n")
    expect(namespaces!.split("\n")).toEqual([
      expect.stringMatching(/^NAMESPACE +MESH-REVISION +POD-REVISIONS$/),
      expect.stringMatching(/^default +default +default: 2$/),
      expect.stringMatching(/^shop +canary +1-20: 1$/),
    ])
    expect(hooks!.split("\n")).toEqual([
      expect.stringMatching(/^MESH-REVISION +TAG +NAMESPACES$/),
      expect.stringMatching(/^default +<no tag> +default,shop$/),
    ])

    expect(remote.code, remote.stderr).toBe(0)
    expect(remote.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^NAME +SECRET +STATUS +MESHD$/),
      expect.stringMatching(/^east +mesh-system\/mesh-remote-secret-east +synced +meshd-abc$/),
    ])
  })
})
