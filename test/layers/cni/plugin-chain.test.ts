/**
 * mesh-cni in a real CNI chain: the containernetworking reference plugins (loopback, then
 * bridge with host-local IPAM) set up throw-away pod network namespaces, then the built
 * `mesh-cni` binary runs as the chained plugin against the fake orchestrator API server. The
 * captured pod's iptables show the mesh chains and real connections land on the stand-in
 * proxy listeners; a pod of an excluded namespace and a pod without sidecar get no rules; an
 * unreachable API server fails ADD with "try again later"; DEL runs through the chain.
 * Needs root, `ip netns`, iptables, nsenter and /usr/lib/cni; skipped (reason printed) otherwise.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { injectedPod } from "../../services/cni/plugin-fixtures.js"
import { type Orchestrator, startOrchestrator, writeKubeconfig } from "../../support/orchestrator/index.js"
import { freePort } from "../../support/ports.js"
import { binary } from "../../support/processes.js"
import {
  addNetworkList,
  type ConfList,
  delNetworkList,
  namespaceIptablesUnusable,
  type Sandbox,
} from "./plugin-driver.js"

const REFERENCE_PLUGINS = "/usr/lib/cni"

const which = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0

const unusableBecause = (): string | undefined => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root"
  for (const name of ["ip", "iptables", "iptables-save", "iptables-restore", "nsenter"]) {
    if (!which(name)) return `${name} is not installed`
  }
  for (const plugin of ["bridge", "host-local", "loopback"]) {
    if (!existsSync(join(REFERENCE_PLUGINS, plugin)))
      return `${REFERENCE_PLUGINS}/${plugin} is missing (containernetworking-plugins)`
  }
  return namespaceIptablesUnusable("mesh-cni-check")
}

const skipReason = unusableBecause()
if (skipReason !== undefined) console.warn(`skipping the mesh-cni chain tests: ${skipReason}`)

const id = randomBytes(3).toString("hex")
const BRIDGE = `mcni${id}`
const SUBNET_OCTET = 200 + (Number.parseInt(id.slice(0, 2), 16) % 50)
const SUBNET = `192.168.${SUBNET_OCTET}.0/24`
const APP_UID = 4242
const PROXY_UID = 1337

const sh = (...argv: Array<string>) => execFileSync(argv[0]!, argv.slice(1), { encoding: "utf8", stdio: "pipe" })
const inNs = (ns: string, ...argv: Array<string>) => sh("ip", "netns", "exec", ns, ...argv)
const meshChains = (ns: string) => [...inNs(ns, "iptables-save").matchAll(/^:(MESH_\w+)/gm)].map((m) => m[1]!)

/** TCP servers answering each connection with their name; prints "ready" once all listen. */
const SERVER = `
const net = require("net");
const specs = JSON.parse(process.argv[1]);
let left = specs.length;
for (const s of specs) {
  net.createServer((c) => { c.on("error", () => {}); c.end(s.name); })
    .listen(s.port, "0.0.0.0", () => { if (--left === 0) console.log("ready"); });
}
`

/** One TCP connection, optionally as another uid; prints what answered (or the error). */
const CLIENT = `
const net = require("net");
const c = JSON.parse(process.argv[1]);
if (c.uid !== undefined) { process.setgroups([c.uid]); process.setgid(c.uid); process.setuid(c.uid); }
const done = (text) => process.stdout.write(text + "\\n", () => process.exit(0));
const timer = setTimeout(() => done("timeout"), 5000);
const s = net.connect(c.port, c.host);
let data = "";
s.on("data", (d) => (data += d));
s.on("end", () => { clearTimeout(timer); done(data); });
s.on("error", (e) => { clearTimeout(timer); done("error:" + e.code); });
`

const helpers: Array<ChildProcess> = []

const startServer = (ns: string, specs: ReadonlyArray<{ port: number; name: string }>) =>
  new Promise<ChildProcess>((resolve, reject) => {
    const child = spawn("ip", ["netns", "exec", ns, process.execPath, "-e", SERVER, JSON.stringify(specs)], {
      stdio: ["ignore", "pipe", "pipe"],
    })
    helpers.push(child)
    let out = ""
    let err = ""
    child.stdout!.on("data", (chunk) => {
      out += chunk
      if (out.includes("ready")) resolve(child)
    })
    child.stderr!.on("data", (chunk) => (err += chunk))
    child.on("exit", (code) => reject(new Error(`server in ${ns} exited with ${code}: ${err}`)))
  })

const connect = (ns: string, target: { host: string; port: number; uid?: number }) =>
  inNs(ns, process.execPath, "-e", CLIENT, JSON.stringify(target)).trim()

interface PodSandbox extends Sandbox {
  readonly name: string
  address?: string
  cached?: Record<string, unknown> | undefined
}

const sandbox = (name: string, namespace: string, pod: string): PodSandbox => ({
  name,
  containerId: `${name}-sandbox`,
  netns: `/var/run/netns/${name}`,
  ifName: "eth0",
  args: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=${pod};K8S_POD_INFRA_CONTAINER_ID=${name}-sandbox`,
})

describe.skipIf(skipReason !== undefined)("mesh-cni chained after bridge", () => {
  let orchestrator: Orchestrator
  let cniPath = ""
  let workDir = ""
  let podNetwork: ConfList
  const loopback: ConfList = { cniVersion: "1.0.0", name: "cni-loopback", plugins: [{ type: "loopback" }] }
  const APP = sandbox(`mesh-cni-${id}-app`, "shop", "app-1")
  const PEER = sandbox(`mesh-cni-${id}-peer`, "mesh-system", "meshd-1")
  const PLAIN = sandbox(`mesh-cni-${id}-plain`, "shop", "plain-1")
  const DOWN = sandbox(`mesh-cni-${id}-down`, "shop", "app-1")
  const all = [APP, PEER, PLAIN, DOWN]

  const meshCni = (kubeconfig: string) => ({
    type: "mesh-cni",
    log_level: "info",
    kubernetes: { kubeconfig, exclude_namespaces: ["mesh-system", "kube-system"] },
  })
  const withMeshCni = (kubeconfig: string): ConfList => ({
    cniVersion: "1.0.0",
    name: `mesh-test-${id}`,
    plugins: [
      {
        type: "bridge",
        bridge: BRIDGE,
        isGateway: false,
        ipMasq: false,
        ipam: { type: "host-local", dataDir: join(workDir, "ipam"), ranges: [[{ subnet: SUBNET }]] },
      },
      meshCni(kubeconfig),
    ],
  })

  const add = async (pod: PodSandbox, list: ConfList) => {
    sh("ip", "netns", "add", pod.name)
    const lo = await addNetworkList(cniPath, loopback, pod)
    expect(lo.ok).toBe(true)
    const result = await addNetworkList(cniPath, list, pod)
    if (result.ok) {
      pod.cached = result.output
      const ips = (result.output?.ips ?? []) as Array<{ address: string }>
      pod.address = ips[0]?.address.split("/")[0]
    }
    return result
  }

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), "mesh-cni-chain-"))
    cniPath = join(workDir, "bin")
    sh("mkdir", "-p", cniPath)
    for (const plugin of ["bridge", "host-local", "loopback"])
      symlinkSync(join(REFERENCE_PLUGINS, plugin), join(cniPath, plugin))
    // The runtime finds the plugin by its type in CNI_PATH, as install-cni would have copied it there.
    symlinkSync(binary("mesh-cni"), join(cniPath, "mesh-cni"))
    orchestrator = await startOrchestrator({ token: "mesh-cni-token" })
    for (const name of ["shop", "mesh-system"])
      orchestrator.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
    orchestrator.put(injectedPod({ name: "app-1", namespace: "shop" }))
    orchestrator.put(injectedPod({ name: "meshd-1", namespace: "mesh-system" }))
    orchestrator.put(injectedPod({ name: "plain-1", namespace: "shop", containers: [{ name: "app" }] }))
    podNetwork = withMeshCni(orchestrator.kubeconfig({ path: join(workDir, "mesh-cni-kubeconfig") }))
  })

  afterAll(async () => {
    for (const child of helpers) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    for (const pod of all) spawnSync("ip", ["netns", "del", pod.name])
    spawnSync("ip", ["link", "del", BRIDGE])
    await orchestrator?.close()
    if (workDir !== "") rmSync(workDir, { recursive: true, force: true })
  })

  it("ADD on an injected pod: the bridge's result passes through and the mesh chains are in the pod", async () => {
    const result = await add(APP, podNetwork)
    const [bridge, plugin] = result.runs
    expect(plugin?.stderr).not.toContain('"level":"error"')
    expect(result.ok).toBe(true)
    expect(result.output).toEqual(JSON.parse(bridge!.stdout))
    expect(APP.address).toMatch(/^192\.168\./)
    console.info(`mesh-cni ADD (captured pod) took ${plugin!.millis} ms; bridge took ${bridge!.millis} ms`)
    expect(meshChains(APP.name)).toEqual(
      expect.arrayContaining(["MESH_INBOUND", "MESH_REDIRECT", "MESH_IN_REDIRECT", "MESH_OUTPUT"]),
    )
    const saved = inNs(APP.name, "iptables-save")
    expect(saved).toContain("-A OUTPUT -j MESH_OUTPUT")
    expect(saved).toContain("-A PREROUTING -p tcp -j MESH_INBOUND")
    expect(saved).toContain("-A MESH_INBOUND -p tcp -m tcp --dport 15090 -j RETURN")
    expect(saved).toContain(`-A MESH_OUTPUT -m owner --uid-owner ${PROXY_UID} -j RETURN`)
    // The pod's lookup reached the API server with the kubeconfig's token.
    expect(orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/shop/pods/app-1" })).toBeGreaterThan(0)
  })

  it("a pod of an excluded namespace: no lookup, no rules", async () => {
    const before = orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/mesh-system/pods/meshd-1" })
    const result = await add(PEER, podNetwork)
    expect(result.ok).toBe(true)
    expect(meshChains(PEER.name)).toEqual([])
    expect(orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/mesh-system/pods/meshd-1" })).toBe(before)
  })

  it("a pod without the sidecar: looked up, no rules", async () => {
    const result = await add(PLAIN, podNetwork)
    expect(result.ok).toBe(true)
    expect(meshChains(PLAIN.name)).toEqual([])
    expect(orchestrator.requestCount({ verb: "get", path: "/api/v1/namespaces/shop/pods/plain-1" })).toBeGreaterThan(0)
  })

  it("connections land where the capture says", async () => {
    await startServer(APP.name, [
      { port: 15001, name: "outbound-capture" },
      { port: 15006, name: "inbound-capture" },
      { port: 8080, name: "app" },
    ])
    await startServer(PEER.name, [{ port: 8080, name: "peer-app" }])
    // The application's outbound call is redirected to the proxy's outbound listener.
    expect(connect(APP.name, { host: PEER.address!, port: 8080, uid: APP_UID })).toBe("outbound-capture")
    // The proxy's own traffic (its uid) is not captured.
    expect(connect(APP.name, { host: PEER.address!, port: 8080, uid: PROXY_UID })).toBe("peer-app")
    // Inbound from another pod is redirected to the inbound listener.
    expect(connect(PEER.name, { host: APP.address!, port: 8080 })).toBe("inbound-capture")
    // The pod without sidecar has no capture: its call reaches the peer's application.
    expect(connect(PLAIN.name, { host: PEER.address!, port: 8080 })).toBe("peer-app")
  })

  it("an unreachable API server: ADD fails with the CNI error object, code 11", async () => {
    const port = await freePort()
    const kubeconfig = writeKubeconfig(join(workDir, "unreachable-kubeconfig"), {
      server: `https://127.0.0.1:${port}`,
      token: "x",
    })
    const result = await add(DOWN, withMeshCni(kubeconfig))
    expect(result.ok).toBe(false)
    expect(result.runs.map((run) => [run.type, run.exitCode])).toEqual([
      ["bridge", 0],
      ["mesh-cni", 1],
    ])
    expect(result.output).toMatchObject({ cniVersion: "1.0.0", code: 11 })
    expect(String(result.output?.details)).toContain("ECONNREFUSED")
    expect(meshChains(DOWN.name)).toEqual([])
    // The runtime then deletes what the failed ADD set up: DEL needs no API server.
    const del = await delNetworkList(cniPath, withMeshCni(kubeconfig), DOWN, undefined)
    expect(del.ok).toBe(true)
  })

  it("DEL through the chain succeeds for every pod; mesh-cni prints nothing", async () => {
    for (const pod of [APP, PEER, PLAIN]) {
      const result = await delNetworkList(cniPath, podNetwork, pod, pod.cached)
      expect(result.ok).toBe(true)
      expect(result.runs.map((run) => run.type)).toEqual(["mesh-cni", "bridge"])
      expect(result.runs[0]!.stdout).toBe("")
    }
    // The bridge released the addresses: the interface is gone from the pod.
    expect(inNs(APP.name, "ip", "-br", "link")).not.toContain("eth0")
  })
})
