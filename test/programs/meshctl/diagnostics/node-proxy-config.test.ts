/**
 * `meshctl node-proxy-config` as a process (the built binary): the tables and JSON/YAML of a
 * saved node proxy dump (ours, in the reference's shape) under every command name, bad input,
 * and live mode: stand-in node proxy admin servers for node proxy pods of the in-process
 * orchestrator, chosen by name, by `--node`, or through a workload pod on their node.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { NODE_A, NODE_B, nodeProxyDump } from "../../../services/proxy-config/node-proxy-dump-fixture.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { run } from "../../../support/processes.js"

let dir: string
let dumpFile: string
const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", args)
const dataRows = (table: string) => table.trimEnd().split("\n").slice(1)

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "npc-cli-"))
  dumpFile = join(dir, "dump.json")
  writeFileSync(dumpFile, JSON.stringify(nodeProxyDump()))
})

// Each case starts meshctl several times: minutes on a loaded machine.
describe("meshctl node-proxy-config --file", { timeout: 180_000 }, () => {
  it("prints every table for all, and --node narrows the workloads", async () => {
    const all = await meshctl("node-proxy-config", "all", "-f", dumpFile)
    expect(all.code, all.stderr).toBe(0)
    for (const header of [
      "NAMESPACE POD NAME",
      "NAMESPACE SERVICE NAME",
      "NAMESPACE POLICY NAME",
      "CERTIFICATE NAME",
      "WORKLOAD ",
    ])
      expect(all.stdout).toContain(`\n${header}`)
    expect(all.stdout).toMatch(/^demo +web-7d9f +10\.1\.0\.11 +node-a +waypoint +HBONE$/m)
    const onNode = await meshctl("node-proxy-config", "all", "--file", dumpFile, "--node", NODE_B)
    // The file names the source, so --node cannot also choose a node proxy (as the reference).
    expect(onNode.code).toBe(1)
    expect(onNode.stderr).toContain("at most one of --file, --node, or pod name")
  })

  it("prints certificates under every name of the command", async () => {
    const outputs = await Promise.all(
      ["certificate", "certificates", "certs", "cert"].map((name) =>
        meshctl("node-proxy-config", name, "-f", dumpFile),
      ),
    )
    for (const result of outputs) {
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe(outputs[0]!.stdout)
    }
    expect(dataRows(outputs[0]!.stdout)).toEqual([
      expect.stringMatching(/^spiffe:\/\/cluster\.local\/ns\/demo\/sa\/web +Leaf +Available +true +ff /),
      expect.stringMatching(/^spiffe:\/\/cluster\.local\/ns\/demo\/sa\/web +Root +Available +false +1000 /),
      expect.stringMatching(/^spiffe:\/\/cluster\.local\/ns\/demo\/sa\/sleep +NA +Initializing +false +NA/),
    ])
  })

  it("prints connections with their filters, under connections and cons", async () => {
    // One batch: each run is a process start, slow on a loaded machine.
    const [long, short, raw, none, bad] = await Promise.all([
      meshctl("node-proxy-config", "connections", "-f", dumpFile),
      meshctl("node-proxy-config", "cons", "-f", dumpFile),
      meshctl("node-proxy-config", "cons", "-f", dumpFile, "--raw", "--direction", "outbound"),
      meshctl("node-proxy-config", "cons", "-f", dumpFile, "--workload-namespace", "other"),
      meshctl("node-proxy-config", "cons", "-f", dumpFile, "--direction", "sideways"),
    ])
    expect(long.code, long.stderr).toBe(0)
    expect(short.stdout).toBe(long.stdout)
    expect(dataRows(long.stdout)).toEqual([
      expect.stringMatching(
        /^sleep-5b6c\.demo +Outbound +sleep-5b6c\.demo:41000 +waypoint-6f7d\.demo:15008 +web\.demo\.svc\.cluster\.local:80 +HBONE$/,
      ),
      expect.stringMatching(/^web-7d9f\.demo +Inbound +web-7d9f\.demo:8080 +sleep-5b6c\.demo:41000 /),
    ])
    expect(dataRows(raw.stdout)).toEqual([
      expect.stringMatching(/^sleep-5b6c\.demo +Outbound +10\.1\.0\.20:41000 +10\.1\.0\.30:15008 +10\.96\.0\.10:80 /),
    ])
    expect(dataRows(none.stdout)).toEqual([])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("--direction must be inbound or outbound")
  })

  it("prints the selected parts as JSON (4-space indent) and YAML", async () => {
    const json = await meshctl("node-proxy-config", "cert", "-f", dumpFile, "-o", "json")
    expect(json.code, json.stderr).toBe(0)
    expect(json.stdout).toContain('\n    {\n        "identity": "spiffe://cluster.local/ns/demo/sa/web"')
    expect((JSON.parse(json.stdout) as Array<{ identity: string }>).map((c) => c.identity)).toHaveLength(2)
    const yaml = await meshctl("node-proxy-config", "all", "-f", dumpFile, "-o", "yaml")
    expect(Object.keys(parse(yaml.stdout) as object)).toEqual([
      "workloads",
      "services",
      "policies",
      "certificates",
      "workloadState",
    ])
    const cons = await meshctl("node-proxy-config", "cons", "-f", dumpFile, "-o", "json", "--direction", "inbound")
    expect((JSON.parse(cons.stdout) as Array<{ info: { name: string } }>).map((s) => s.info.name)).toEqual([
      "sleep-5b6c",
      "web-7d9f",
    ])
  })

  it("fails clearly on a missing file, a sidecar dump, and no cluster", async () => {
    const missing = await meshctl("node-proxy-config", "all", "-f", join(dir, "absent.json"))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("cannot read --file")
    const sidecar = join(dir, "sidecar.json")
    writeFileSync(sidecar, JSON.stringify({ configs: [] }))
    const wrong = await meshctl("node-proxy-config", "all", "-f", sidecar)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain("not a node proxy config dump")
    const noCluster = await run("meshctl", ["node-proxy-config", "all", "-c", join(dir, "absent-kubeconfig")])
    expect(noCluster.code).toBe(1)
    expect(noCluster.stderr).toContain("does not exist")
  })
})

describe("meshctl node-proxy-config against running node proxies", { timeout: 180_000 }, () => {
  let orchestrator: Orchestrator
  let kubeconfig: string
  const servers: Array<Server> = []
  const requests: Array<string> = []
  let port = 0

  /** A stand-in node proxy admin server on `host` whose dump names its node in an extra workload. */
  const adminServer = (host: string, listenPort: number, node: string) =>
    new Promise<Server>((resolve) => {
      const dump = nodeProxyDump()
      const marker = { ...dump.workloads["10.1.0.20"], name: `served-by-${node}`, workloadIps: ["10.9.9.9"], node }
      const body = JSON.stringify({ ...dump, workloads: { ...dump.workloads, "10.9.9.9": marker } })
      const server = createServer((req, res) => {
        requests.push(`${host} ${req.method} ${req.url}`)
        if (req.url === "/config_dump") return res.end(body)
        res.statusCode = 404
        res.end("not found")
      })
      server.listen(listenPort, host, () => resolve(server))
    })

  beforeAll(async () => {
    orchestrator = await startOrchestrator({ namespaces: ["mesh-system", "demo"] })
    kubeconfig = orchestrator.kubeconfig()
    servers.push(await adminServer("127.0.0.1", 0, NODE_A))
    port = (servers[0]!.address() as AddressInfo).port
    servers.push(await adminServer("127.0.0.2", port, NODE_B))
    const pod = (name: string, namespace: string, node: string, ip: string, labels: Record<string, string>) =>
      orchestrator.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace, labels },
        spec: { nodeName: node, containers: [{ name: "app" }] },
        status: { phase: "Running", podIP: ip },
      })
    pod("node-proxy-aaaaa", "mesh-system", NODE_A, "127.0.0.1", { app: "node-proxy" })
    pod("node-proxy-bbbbb", "mesh-system", NODE_B, "127.0.0.2", { app: "node-proxy" })
    pod("web-7d9f", "demo", NODE_A, "10.1.0.11", { app: "web" })
    pod("sleep-5b6c", "demo", NODE_A, "10.1.0.20", { app: "sleep" })
  })

  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
    await orchestrator?.close()
  })

  const live = (...args: ReadonlyArray<string>) =>
    meshctl("node-proxy-config", ...args, "-c", kubeconfig, "--proxy-admin-port", String(port))

  it("reads the node proxy a pod argument names, or the one on --node", async () => {
    const named = await live("all", "node-proxy-bbbbb.mesh-system")
    expect(named.code, named.stderr).toBe(0)
    expect(named.stdout).toContain(`served-by-${NODE_B}`)
    const onNode = await live("all", "--node", NODE_B)
    expect(onNode.code, onNode.stderr).toBe(0)
    expect(onNode.stdout).toContain(`served-by-${NODE_B}`)
    // --node also narrows the workload table to that node's workloads.
    expect(onNode.stdout).not.toMatch(/^demo +web-7d9f /m)
    const first = await live("cert")
    expect(first.code, first.stderr).toBe(0)
    expect(requests).toContain(`127.0.0.1 GET /config_dump`)
  })

  it("reads a workload pod's node proxy and narrows connections to that workload", async () => {
    requests.length = 0
    const result = await live("cons", "web-7d9f.demo")
    expect(result.code, result.stderr).toBe(0)
    expect(requests).toEqual(["127.0.0.1 GET /config_dump"])
    expect(dataRows(result.stdout)).toEqual([expect.stringMatching(/^web-7d9f\.demo +Inbound /)])
  })

  it("refuses to pick among several node proxies for connections, and names unknown pods and nodes", async () => {
    const several = await live("cons")
    expect(several.code).toBe(1)
    expect(several.stderr).toContain("2 node proxies run (node-proxy-aaaaa, node-proxy-bbbbb)")
    const unknown = await live("all", "nope.demo")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("pod nope.demo not found")
    const nowhere = await live("all", "--node", "node-z")
    expect(nowhere.code).toBe(1)
    expect(nowhere.stderr).toContain("no running node proxy (app=node-proxy) in mesh-system on node node-z")
  })
})
