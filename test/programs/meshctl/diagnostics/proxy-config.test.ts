/**
 * `meshctl proxy-config` as a process (the built binary): tables from a saved dump, filters,
 * aliases, JSON/YAML, bad input, and live mode against stand-in proxy admin servers for pods of
 * the in-process fake orchestrator (so the CLI is spawned asynchronously).
 */

import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { buildDumpFixture, type DumpFixture, MYSQL, REVIEWS } from "../../../services/proxy-config/dump-fixture.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { run } from "../../../support/processes.js"

let fixture: DumpFixture
let dir: string
let dumpFile: string

const meshctl = (...args: ReadonlyArray<string>) => run("meshctl", args)
const dataRows = (stdout: string) => stdout.trimEnd().split("\n").slice(1)

beforeAll(() => {
  fixture = buildDumpFixture()
  dir = mkdtempSync(join(tmpdir(), "pc-cli-"))
  dumpFile = join(dir, "dump.json")
  writeFileSync(dumpFile, JSON.stringify(fixture.dump))
})

describe("meshctl proxy-config --file", () => {
  it("prints the cluster table under every name of the command", async () => {
    const outputs = await Promise.all([
      meshctl("proxy-config", "cluster", "--file", dumpFile),
      meshctl("pc", "clusters", "-f", dumpFile),
      meshctl("pc", "c", "-f", dumpFile),
    ])
    for (const result of outputs) {
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe(outputs[0]!.stdout)
    }
    const lines = outputs[0]!.stdout.split("\n")
    expect(lines[0]).toMatch(/^SERVICE FQDN {5,}PORT {5,}SUBSET {5,}DIRECTION {5,}TYPE {5,}DESTINATION RULE$/)
    expect(lines).toContainEqual(
      expect.stringMatching(/^reviews\.default\.svc\.cluster\.local +9080 +v1 +outbound +EDS +reviews\.default$/),
    )
    expect(dataRows(outputs[0]!.stdout)).toHaveLength(7)
  })

  it("applies filters", async () => {
    const result = await meshctl("pc", "cluster", "-f", dumpFile, "--fqdn", "reviews", "--subset", "v3")
    expect(result.code, result.stderr).toBe(0)
    expect(dataRows(result.stdout)).toEqual([
      expect.stringMatching(/^reviews\.default\.svc\.cluster\.local +9080 +v3 /),
    ])
    const listeners = await meshctl("pc", "listeners", "-f", dumpFile, "--port", "3306")
    expect(dataRows(listeners.stdout)).toEqual([
      expect.stringMatching(new RegExp(`^10\\.0\\.0\\.9 +3306 +ALL +Cluster: ${MYSQL.replace(/\|/g, "\\|")}$`)),
    ])
    const endpoints = await meshctl("pc", "ep", "-f", dumpFile, "--cluster", MYSQL)
    expect(dataRows(endpoints.stdout)).toEqual([expect.stringMatching(/^10\.1\.0\.20:3306 +HEALTHY +OK +/)])
    const routes = await meshctl("pc", "r", "-f", dumpFile, "--name", "9080", "--verbose=false")
    expect(routes.stdout).toMatch(/^NAME {5}VIRTUAL HOSTS\n9080 {5}3\n$/)
  })

  it("prints secrets, bootstrap and all", async () => {
    const secrets = await meshctl("pc", "s", "-f", dumpFile)
    expect(secrets.code, secrets.stderr).toBe(0)
    expect(dataRows(secrets.stdout)).toEqual([
      expect.stringMatching(/^default +Cert Chain +ACTIVE +true +\d+ +\S+Z +\S+Z$/),
      expect.stringMatching(/^ROOTCA +CA +ACTIVE +true +\d+ /),
    ])
    const bootstrap = await meshctl("pc", "b", "-f", dumpFile)
    expect(bootstrap.stdout).toContain("sidecar~10.1.0.7~sleep-5d8f.default~default.svc.cluster.local")
    const all = await meshctl("pc", "all", "-f", dumpFile)
    for (const header of ["SERVICE FQDN", "ADDRESSES", "VHOST NAME", "RESOURCE NAME"])
      expect(all.stdout).toContain(header)
  })

  it("prints the selected resources as JSON and YAML", async () => {
    const json = await meshctl("pc", "cluster", "-f", dumpFile, "--port", "9080", "-o", "json")
    expect(json.code, json.stderr).toBe(0)
    const clusters = JSON.parse(json.stdout) as Array<{ name: string }>
    expect(clusters.map((c) => c.name).sort()).toEqual(
      [`outbound|9080||${REVIEWS}`, `outbound|9080|v1|${REVIEWS}`, `outbound|9080|v3|${REVIEWS}`].sort(),
    )
    const yaml = await meshctl("pc", "route", "-f", dumpFile, "-o", "yaml")
    expect((parse(yaml.stdout) as Array<{ name: string }>).map((r) => r.name)).toEqual(["9080"])
    const all = await meshctl("pc", "a", "-f", dumpFile, "-o", "json")
    expect(JSON.parse(all.stdout)).toEqual(fixture.dump)
  })

  it("fails clearly on a missing file, a file that is not a dump, and a missing pod", async () => {
    const missing = await meshctl("pc", "cluster", "-f", join(dir, "absent.json"))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain("cannot read --file")
    const notDump = join(dir, "not-dump.json")
    writeFileSync(notDump, JSON.stringify({ kind: "Pod" }))
    const wrong = await meshctl("pc", "listener", "-f", notDump)
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain("not a proxy config dump")
    const none = await meshctl("pc", "route")
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("one pod is required")
  })
})

describe("meshctl proxy-config against a pod's proxy", () => {
  let orchestrator: Orchestrator
  let kubeconfig: string
  const servers: Array<Server> = []
  const requests: Array<string> = []
  let port = 0

  /** A stand-in proxy admin server on `host`; its dump's root CA is replaced when `root` is given. */
  const adminServer = (host: string, listenPort: number, root?: string) =>
    new Promise<Server>((resolve) => {
      const dump =
        root === undefined
          ? fixture.dump
          : JSON.parse(JSON.stringify(fixture.dump).replace(Buffer.from(fixture.caPem).toString("base64"), root))
      const server = createServer((req: IncomingMessage, res) => {
        requests.push(`${host} ${req.method} ${req.url}`)
        if (req.url === "/config_dump") return res.end(JSON.stringify(dump))
        if (req.url?.startsWith("/logging")) return res.end("active loggers:\n  admin: warning\n  http: debug\n")
        res.statusCode = 404
        res.end("not found")
      })
      server.listen(listenPort, host, () => resolve(server))
    })

  beforeAll(async () => {
    orchestrator = await startOrchestrator({ namespaces: ["default", "demo"] })
    kubeconfig = orchestrator.kubeconfig()
    servers.push(await adminServer("127.0.0.1", 0))
    port = (servers[0]!.address() as AddressInfo).port
    servers.push(await adminServer("127.0.0.2", port, Buffer.from("another root").toString("base64")))
    const pod = (name: string, namespace: string, ip: string, labels: Record<string, string> = {}) =>
      orchestrator.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace, labels },
        spec: { containers: [{ name: "app" }] },
        status: { phase: "Running", podIP: ip },
      })
    pod("sleep-1", "demo", "127.0.0.1", { app: "sleep" })
    pod("sleep-2", "demo", "127.0.0.1", { app: "sleep" })
    pod("other", "demo", "127.0.0.2")
  })

  afterAll(async () => {
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
    await orchestrator?.close()
  })

  const live = (...args: ReadonlyArray<string>) =>
    meshctl(...args, "-c", kubeconfig, "--proxy-admin-port", String(port))

  it("reads the dump from the pod's proxy admin port", async () => {
    const result = await live("pc", "cluster", "sleep-1.demo", "--fqdn", "mysql")
    expect(result.code, result.stderr).toBe(0)
    expect(dataRows(result.stdout)).toEqual([expect.stringMatching(/^mysql\.default\.svc\.cluster\.local +3306 /)])
    const namespaced = await live("pc", "secret", "pod/sleep-1", "-n", "demo")
    expect(namespaced.code, namespaced.stderr).toBe(0)
    expect(dataRows(namespaced.stdout)).toHaveLength(2)
  })

  it("fails clearly for an unknown pod", async () => {
    const result = await live("pc", "listener", "nope.demo")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("pod nope.demo not found")
  })

  it("sets and shows logging levels, per pod with a selector", async () => {
    requests.length = 0
    const result = await live("pc", "log", "sleep-1.demo", "--level", "http:debug", "--reset")
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("active loggers:")
    expect(requests).toEqual(["127.0.0.1 POST /logging?level=warning", "127.0.0.1 POST /logging?http=debug"])
    const selected = await live("pc", "o", "-l", "app=sleep", "-n", "demo")
    expect(selected.code, selected.stderr).toBe(0)
    expect(selected.stdout).toContain("sleep-1.demo:\nactive loggers:")
    expect(selected.stdout).toContain("sleep-2.demo:\n")
    const bad = await live("pc", "log", "sleep-1.demo", "--level", "loud")
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain("unrecognized logging level: loud")
  })

  it("compares root CAs of two pods", async () => {
    const same = await live("pc", "rootca-compare", "sleep-1.demo", "pod/sleep-2.demo")
    expect(same.code, same.stderr).toBe(0)
    expect(same.stdout).toContain("have the identical ROOTCA")
    const different = await live("pc", "rc", "sleep-1.demo", "other.demo")
    expect(different.code).toBe(1)
    expect(different.stderr).toContain("have the non identical ROOTCA")
  })
})
