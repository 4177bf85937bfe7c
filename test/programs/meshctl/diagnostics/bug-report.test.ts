/**
 * `meshctl bug-report` as a process against the fake orchestrator (pods, logs set with
 * `setPodLog`, a Secret, a mesh resource) and one stand-in HTTP server playing both the sidecar
 * admin port (MESHCTL_PROXY_ADMIN_PORT) and the control plane's monitoring port (declared as the
 * meshd pod's `http-monitoring` port). The archive is unpacked with tar-stream.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { extract } from "tar-stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { meshCustomResources } from "../../../support/orchestrator/mesh-crds.js"
import { run } from "../../../support/processes.js"

let orchestrator: Orchestrator
let kubeconfig: string
let standIn: Server
let port = 0
const requested: Array<string> = []

const SIDECAR_ID = "sidecar~127.0.0.1~web-1.shop~shop.svc.cluster.local"

const untar = async (file: string): Promise<Map<string, string>> => {
  const files = new Map<string, string>()
  const entries = extract()
  entries.end(gunzipSync(readFileSync(file)))
  for await (const entry of entries) {
    const chunks: Array<Buffer> = []
    for await (const chunk of entry) chunks.push(Buffer.from(chunk as Uint8Array))
    files.set(entry.header.name, Buffer.concat(chunks).toString("utf8"))
  }
  return files
}

const pod = (
  namespace: string,
  name: string,
  containers: ReadonlyArray<{ name: string; ports?: Array<{ name: string; containerPort: number }> }>,
  labels: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace, name, labels, ...extra },
  spec: { containers: containers.map((c) => ({ image: "img", ...c })) },
  status: { phase: "Running", podIP: "127.0.0.1" },
})

beforeAll(async () => {
  standIn = createServer((req, res) => {
    const url = req.url ?? "/"
    requested.push(url)
    const body =
      url === "/version"
        ? JSON.stringify({ version: "9.9.9-standin" })
        : url === "/debug/syncz"
          ? JSON.stringify([
              { proxy: SIDECAR_ID, typeUrl: "cds" },
              { proxy: "sidecar~1.1.1.1~coredns-1.kube-system~x" },
            ])
          : url === "/debug/configz"
            ? JSON.stringify([{ kind: "PeerAuthentication" }])
            : url.startsWith("/debug/config_dump?proxyID=")
              ? JSON.stringify({ proxy: decodeURIComponent(url.split("=")[1] ?? "") })
              : url.startsWith("/config_dump")
                ? JSON.stringify({ configs: ["web dump"] })
                : url === "/stats"
                  ? "cluster.outbound.upstream_cx_total: 7\n"
                  : undefined
    res.writeHead(body === undefined ? 404 : 200)
    res.end(body ?? "not found")
  })
  await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
  port = (standIn.address() as AddressInfo).port

  orchestrator = await startOrchestrator({
    tls: false,
    namespaces: ["default", "kube-system", "mesh-system", "shop"],
    customResources: meshCustomResources(),
  })
  kubeconfig = orchestrator.kubeconfig()
  orchestrator.put({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1" } })
  orchestrator.put(
    pod(
      "shop",
      "web-1",
      [{ name: "app" }, { name: "mesh-proxy" }],
      { app: "web", "pod-template-hash": "5f6d" },
      { ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-5f6d", uid: "u1" }] },
    ),
  )
  orchestrator.put(pod("shop", "db-0", [{ name: "db" }], { app: "db" }))
  orchestrator.put(pod("kube-system", "coredns-1", [{ name: "coredns" }]))
  orchestrator.put(
    pod("mesh-system", "meshd-1", [{ name: "discovery", ports: [{ name: "http-monitoring", containerPort: port }] }], {
      app: "meshd",
    }),
  )
  orchestrator.setPodLog(
    "shop",
    "web-1",
    "app",
    "2026-01-01T00:00:00Z starting\n2026-01-01T01:00:00Z error: upstream reset\n2026-01-01T02:00:00Z error: again\n",
  )
  orchestrator.setPodLog("shop", "web-1", "mesh-proxy", "2026-01-01T00:30:00Z rpc failed: context deadline exceeded\n")
  orchestrator.setPodLog("shop", "db-0", "db", "2026-01-01T00:00:00Z panic: disk full\n")
  orchestrator.setPodLog("kube-system", "coredns-1", "coredns", "2026-01-01T00:00:00Z error: must not be collected\n")
  orchestrator.setPodLog("mesh-system", "meshd-1", "discovery", "2026-01-01T00:00:00Z info ready\n")
  orchestrator.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: "mesh-system", name: "cacerts" },
    type: "Opaque",
    data: { "ca-key.pem": Buffer.from("top-secret-key").toString("base64") },
  })
  orchestrator.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { namespace: "mesh-system", name: "mesh" },
    data: { mesh: "trustDomain: cluster.local\n" },
  })
  orchestrator.put({
    apiVersion: "security.mesh.io/v1",
    kind: "PeerAuthentication",
    metadata: { namespace: "mesh-system", name: "default" },
    spec: { mtls: { mode: "STRICT" } },
  })
})

afterAll(async () => {
  await orchestrator?.close()
  await new Promise<void>((resolve) => (standIn ? standIn.close(() => resolve()) : resolve()))
})

const meshctl = (...args: ReadonlyArray<string>) =>
  run("meshctl", ["bug-report", "-c", kubeconfig, ...args], { MESHCTL_PROXY_ADMIN_PORT: String(port) })

describe("meshctl bug-report", () => {
  it("collects the cluster, the mesh config, pods, logs and proxy/control-plane state; dry-run writes nothing; bad flags fail", async () => {
    const full = mkdtempSync(join(tmpdir(), "br-full-"))
    const narrow = mkdtempSync(join(tmpdir(), "br-narrow-"))
    const dry = mkdtempSync(join(tmpdir(), "br-dry-"))
    const late = mkdtempSync(join(tmpdir(), "br-late-"))
    const kept = join(late, "temp")
    const config = join(narrow, "config.yaml")
    // The file's include list replaces the flag's.
    writeFileSync(config, "include:\n  - shop/web\nfullSecrets: true\n")
    const [first, second, dryRun, bad, timedOut] = await Promise.all([
      meshctl("--output-dir", full, "--critical-errs", "*deadline exceeded*", "--rq-concurrency", "2"),
      meshctl(
        "--output-dir",
        narrow,
        "-f",
        config,
        "--include",
        "shop",
        "--exclude",
        "shop/*/*/*/*/mesh-proxy",
        "--start-time",
        "2026-01-01T00:30:00Z",
      ),
      meshctl("--output-dir", dry, "--dry-run", "--include", "shop/*/db-*"),
      meshctl("--output-dir", dry, "--duration", "1h", "--start-time", "2026-01-01T00:00:00Z"),
      meshctl("--output-dir", late, "--timeout", "1ms", "--dir", kept),
    ])

    expect(first.code, first.stderr).toBe(0)
    const archive = join(full, "bug-report.tar.gz")
    expect(first.stdout).toContain(archive)
    const files = await untar(archive)
    for (const path of [
      "bug-report/cluster/version.json",
      "bug-report/cluster/nodes.yaml",
      "bug-report/cluster/namespaces.yaml",
      "bug-report/versions.json",
      "bug-report/pods/shop/web-1/pod.yaml",
      "bug-report/pods/shop/db-0/pod.yaml",
      "bug-report/pods/mesh-system/meshd-1/discovery.log",
      "bug-report/meshd/mesh-system/meshd-1/syncz.json",
      "bug-report/meshd/mesh-system/meshd-1/configz.json",
    ])
      expect(files.has(path), path).toBe(true)
    expect(files.get("bug-report/cluster/nodes.yaml")).toContain("node-1")
    expect(files.get("bug-report/versions.json")).toContain("9.9.9-standin")
    expect(files.get("bug-report/mesh/resources.yaml")).toMatch(/kind: PeerAuthentication[\s\S]*mode: STRICT/)
    expect(files.get("bug-report/mesh/configmaps.yaml")).toContain("trustDomain: cluster.local")
    expect(files.get("bug-report/pods/shop/web-1/app.log")).toContain("error: upstream reset")
    expect(files.get("bug-report/pods/shop/db-0/db.log")).toContain("panic: disk full")
    expect(files.get("bug-report/pods/shop/web-1/proxy/config_dump.json")).toContain("web dump")
    expect(files.get("bug-report/pods/shop/web-1/proxy/stats")).toContain("upstream_cx_total: 7")
    // Only the selected pod's proxy gets its control-plane config dump.
    const dumps = [...files.keys()].filter((k) => k.includes("/config_dump/"))
    expect(dumps).toEqual([
      "bug-report/meshd/mesh-system/meshd-1/config_dump/sidecar_127.0.0.1_web-1.shop_shop.svc.cluster.local.json",
    ])
    // The default exclude leaves the orchestrator's system namespace out; db-0 has no sidecar.
    expect([...files.keys()].some((k) => k.includes("kube-system"))).toBe(false)
    expect(files.has("bug-report/pods/shop/db-0/proxy/stats")).toBe(false)
    // Secrets: keys listed, values redacted.
    const secrets = files.get("bug-report/mesh/secrets.yaml") ?? ""
    expect(secrets).toContain("ca-key.pem")
    expect(secrets).toContain("<REDACTED>")
    expect(secrets).not.toContain(Buffer.from("top-secret-key").toString("base64"))
    // Ranking: the critical error first, then the panic, then the errors.
    const summary = files.get("bug-report/important-logs.txt") ?? ""
    const order = ["web-1/mesh-proxy.log", "db-0/db.log", "web-1/app.log"].map((p) => summary.indexOf(p))
    expect(order.every((i) => i > 0)).toBe(true)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(first.stdout).toContain("1. bug-report/pods/shop/web-1/mesh-proxy.log: 1 critical")

    expect(second.code, second.stderr).toBe(0)
    const narrowFiles = await untar(join(narrow, "bug-report.tar.gz"))
    const logs = [...narrowFiles.keys()].filter((k) => k.endsWith(".log")).sort()
    expect(logs).toEqual(["bug-report/pods/shop/web-1/app.log"])
    expect(narrowFiles.get("bug-report/pods/shop/web-1/app.log")).not.toContain("starting")
    expect(narrowFiles.get("bug-report/pods/shop/web-1/app.log")).toContain("error: again")
    expect(narrowFiles.get("bug-report/mesh/secrets.yaml")).toContain(Buffer.from("top-secret-key").toString("base64"))

    expect(dryRun.code, dryRun.stderr).toBe(0)
    expect(dryRun.stdout).toContain("pod shop/db-0")
    expect(dryRun.stdout).toContain("logs of container db")
    expect(dryRun.stdout).not.toContain("web-1")
    expect(existsSync(join(dry, "bug-report.tar.gz"))).toBe(false)

    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/--duration and --start-time/)

    // On --timeout what was captured is archived; --dir keeps the artifacts.
    expect(timedOut.code, timedOut.stderr).toBe(0)
    expect(timedOut.stderr).toMatch(/Timeout of .* reached/)
    const lateFiles = await untar(join(late, "bug-report.tar.gz"))
    expect(lateFiles.has("bug-report/important-logs.txt")).toBe(true)
    expect(lateFiles.size).toBeLessThan(files.size)
    expect(existsSync(join(kept, "bug-report", "important-logs.txt"))).toBe(true)
  })
})
