/**
 * meshctl's pod-facing commands as processes: `dashboard` forwarding to a stand-in pod until
 * SIGTERM, `x proxy-stats` in every output mode against a stand-in proxy admin server,
 * `x metrics` against a stand-in Prometheus (the queries it receives are checked), and against
 * the shared control-plane fixture `x internal-debug` and `proxy-status <pod>`'s comparison.
 * Every stand-in is a pod of the fake orchestrator at 127.0.0.1.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { run, startDaemon } from "../../../support/processes.js"
import { type ControlPlane, eventually, proxyId, startControlPlane } from "../control-plane-fixture.js"

let cp: ControlPlane
let dir: string
const servers: Array<Server> = []
const adminRequests: Array<string> = []
const promQueries: Array<string> = []
let adminPort = 0

const STATS_TEXT = "cluster_manager.active_clusters: 7\nserver.live: 1\n"
const STATS_JSON = { stats: [{ name: "server.live", value: 1 }] }
const PROM_TEXT = "# TYPE envoy_server_live gauge\nenvoy_server_live{} 1\n"
const CLUSTERS_TEXT = "outbound|9080||reviews::10.1.0.9:9080::health_flags::healthy\n"
const CLUSTERS_JSON = { cluster_statuses: [{ name: "outbound|9080||reviews" }] }

const listen = (handler: Parameters<typeof createServer>[1], port = 0) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer(handler)
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      servers.push(server)
      resolve(server)
    })
  })

const portOf = (server: Server) => (server.address() as AddressInfo).port

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "meshctl-dash-"))
  cp = await startControlPlane([{ pod: "app-a", version: "1.2.3" }])
  const admin = await listen((req, res) => {
    adminRequests.push(req.url ?? "")
    const answers: Record<string, string> = {
      "/": "<html>admin</html>",
      "/stats": STATS_TEXT,
      "/stats?format=json": JSON.stringify(STATS_JSON),
      "/stats/prometheus": PROM_TEXT,
      "/clusters": CLUSTERS_TEXT,
      "/clusters?format=json": JSON.stringify(CLUSTERS_JSON),
    }
    const answer = answers[req.url ?? ""]
    res.statusCode = answer === undefined ? 404 : 200
    res.end(answer ?? "not found")
  })
  adminPort = portOf(admin)
  const prometheus = await listen((req, res) => {
    const query = new URL(req.url ?? "", "http://x").searchParams.get("query") ?? ""
    promQueries.push(query)
    const value = query.startsWith("histogram_quantile(0.5,")
      ? "12.5"
      : query.startsWith("histogram_quantile(0.9,")
        ? "40"
        : query.startsWith("histogram_quantile(0.99,")
          ? "250"
          : query.includes("response_code")
            ? "0.5"
            : "10"
    res.setHeader("content-type", "application/json")
    res.end(
      JSON.stringify({
        status: "success",
        data: { resultType: "vector", result: [{ metric: {}, value: [1, value] }] },
      }),
    )
  })
  const pod = (
    name: string,
    namespace: string,
    labels: Record<string, string>,
    ports: Array<{ name: string; containerPort: number }> = [],
  ) =>
    cp.orchestrator.put({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace, labels },
      spec: { containers: [{ name: "main", ports }] },
      status: { phase: "Running", podIP: "127.0.0.1" },
    })
  pod("web-1", "default", { app: "web" })
  pod("prometheus-0", "mesh-system", { app: "prometheus" }, [{ name: "http", containerPort: portOf(prometheus) }])
}, 60_000)

afterAll(async () => {
  for (const server of servers) server.close()
  await cp?.stop()
})

const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", [...args, "-c", cp.kubeconfig])

describe("meshctl dashboard", () => {
  it("forwards a local port to the pod until SIGTERM", async () => {
    const proxy = startDaemon("meshctl", [
      "dash",
      "proxy",
      "web-1",
      "-c",
      cp.kubeconfig,
      "--ui-port",
      String(adminPort),
      "--browser=false",
    ])
    try {
      const url = (await proxy.waitFor(/http:\/\/localhost:\d+\/\n/))[0].trim()
      expect(await (await fetch(url)).text()).toBe("<html>admin</html>")
      expect(adminRequests).toContain("/")
    } finally {
      expect(await proxy.stop("SIGTERM")).toBe(0)
    }
  })

  it("fails without a matching pod, on a bad --address, and warns on the envoy name", async () => {
    const [none, address] = await Promise.all([
      meshctl("dashboard", "grafana", "--browser=false"),
      meshctl("d", "envoy", "web-1", "--address", "example.com"),
    ])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("no pods found with selector app=grafana in namespace mesh-system")
    expect(address.code).toBe(1)
    expect(address.stderr).toContain('"dashboard envoy" is deprecated')
    expect(address.stderr).toContain("--address example.com: only an IP address or localhost is allowed")
  })
})

describe("meshctl x proxy-stats", () => {
  // The path per output mode (prom, prom-merged, clusters short) is unit-tested in stats.test.ts.
  it("prints the proxy's stats as text, JSON and YAML, by name or selector, and names an unreachable port", async () => {
    const port = String(adminPort)
    const [short, json, yaml, clustersJson, closed] = await Promise.all([
      meshctl("x", "proxy-stats", "web-1", "--proxy-admin-port", port),
      meshctl("x", "es", "pod/web-1.default", "--proxy-admin-port", port, "-o", "json"),
      meshctl("x", "es", "-l", "app=web", "--proxy-admin-port", port, "-o", "yaml"),
      meshctl("x", "es", "web-1", "--proxy-admin-port", port, "--type", "clusters", "-o", "json"),
      meshctl("x", "es", "web-1", "--proxy-admin-port", "1"),
    ])
    for (const result of [short, json, yaml, clustersJson]) expect(result.code, result.stderr).toBe(0)
    expect(short.stdout).toBe(STATS_TEXT)
    expect(JSON.parse(json.stdout)).toEqual(STATS_JSON)
    expect(parse(yaml.stdout)).toEqual(STATS_JSON)
    expect(JSON.parse(clustersJson.stdout)).toEqual(CLUSTERS_JSON)
    expect(adminRequests).toEqual(expect.arrayContaining(["/stats", "/stats?format=json", "/clusters?format=json"]))
    expect(closed.code).toBe(1)
    expect(closed.stderr).toContain("GET http://127.0.0.1:1/stats")
  })
})

describe("meshctl x metrics", () => {
  it("queries Prometheus for each workload and prints the table", async () => {
    const result = await meshctl("x", "m", "reviews.bookinfo", "ratings", "-d", "5m")
    expect(result.code, result.stderr).toBe(0)
    const [header, reviews, ratings] = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => l.trim().split(/\s{2,}|\s(?=\S)/))
    expect(header!.join(" ")).toBe("WORKLOAD TOTAL RPS ERROR RPS P50 LATENCY P90 LATENCY P99 LATENCY")
    expect(reviews).toEqual(["reviews.bookinfo", "10.000", "0.500", "12.5ms", "40ms", "250ms"])
    expect(ratings![0]).toBe("ratings")
    expect(promQueries).toHaveLength(10)
    expect(promQueries).toContain(
      'sum(rate(mesh_requests_total{destination_workload=~"reviews.*", destination_workload_namespace=~"bookinfo.*", reporter="destination"}[5m0s]))',
    )
    expect(promQueries.filter((q) => q.includes('response_code=~"5.."'))).toHaveLength(2)
  })
})

describe("meshctl against the control plane", () => {
  it("x internal-debug fetches a proxy's config dump, and proxy-status <pod> compares it with a changed copy", async () => {
    const debug = await eventually(
      () =>
        meshctl("x", "internal-debug", "--plaintext", `config_dump?proxyID=${encodeURIComponent(proxyId("app-a"))}`),
      (r) => r.stdout.includes("dynamic_active_clusters"),
    )
    expect(debug.code, debug.stderr).toBe(0)
    const dump = JSON.parse(debug.stdout) as { configs: Array<Record<string, unknown>> }
    const clusters = dump.configs[0] as { dynamic_active_clusters: Array<{ cluster: Record<string, unknown> }> }
    expect(clusters.dynamic_active_clusters.length).toBeGreaterThan(0)
    clusters.dynamic_active_clusters[0]!.cluster.connect_timeout = "99s"
    const changed = join(dir, "changed.json")
    writeFileSync(changed, JSON.stringify(dump))
    const differ = await run("meshctl", [
      "ps",
      "app-a.default",
      "--xds-address",
      `http://${cp.monitoring}`,
      "--file",
      changed,
    ])
    expect(differ.code, differ.stderr).toBe(0)
    expect(differ.stdout).toMatch(/^Clusters Don't Match\n--- Meshd Clusters\n\+\+\+ Proxy Clusters\n@@ /)
    expect(differ.stdout).toContain('+    "connect_timeout": "99s"')
    expect(differ.stdout).toMatch(/\nListeners Match\nRoutes Match \(RDS last loaded at <none>\)\n$/)
  })
})
