/**
 * install-cni in ambient mode for real: the built install-cni (AMBIENT_ENABLED) installs the
 * built mesh-cni plugin against the in-process orchestrator; the plugin runs on throw-away
 * network namespaces ("pods") and hands the ambient ones to install-cni's node agent, which
 * programs the in-pod redirection inside each and passes its namespace to the node proxy. The
 * node proxy is a stand-in written independently in Python (its own SOCK_SEQPACKET socket,
 * `socket.recv_fds` for the SCM_RIGHTS descriptor, a hand-written protobuf reader using the
 * reference's field numbers): for every namespace it receives it checks the descriptor is the
 * pod's namespace (same inode) and reads the rules inside it through the descriptor
 * (`nsenter --net=/proc/self/fd/N iptables-save`). Covered: a pod added before the node proxy
 * connects arrives in the snapshot; a pod added while connected arrives at once; a pod of a
 * non-ambient namespace gets nothing; DEL tells the node proxy and lets the namespace go; a
 * reconnecting node proxy gets the snapshot again; a node proxy sending unasked messages is
 * disconnected while the agent keeps serving; an oversized plugin event is refused (413).
 * Needs root, `ip netns`, iptables, nsenter and python3; under CI=true a missing piece fails.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { namespaceIptablesUnusable, runPlugin, type Sandbox } from "../layers/cni/plugin-driver.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { freePorts } from "../support/ports.js"
import { binary, type Daemon, startDaemon } from "../support/processes.js"

const which = (name: string) => spawnSync("sh", ["-c", `command -v ${name}`]).status === 0

const unusableBecause = (): string | undefined => {
  if (process.platform !== "linux") return "not Linux"
  if (process.getuid?.() !== 0) return "not root"
  for (const name of ["ip", "iptables", "iptables-save", "iptables-restore", "ip6tables-restore", "nsenter", "python3"])
    if (!which(name)) return `${name} is not installed`
  return namespaceIptablesUnusable("mesh-amb-check")
}

const skipReason = unusableBecause()
if (skipReason !== undefined) {
  if (process.env.CI === "true") {
    describe("install-cni ambient mode", () => {
      it("needs root, ip netns, iptables, nsenter and python3", () => {
        throw new Error(`cannot run: ${skipReason}`)
      })
    })
  } else console.warn(`skipping the install-cni ambient tests: ${skipReason}`)
}

/**
 * The stand-in node proxy: connects, says hello (version V1), acknowledges every request and
 * prints one JSON line per request (with, for an add, the descriptor's namespace inode and the
 * iptables-save output read through it). With "rude" it sends an unasked message after the
 * snapshot and reports whether the agent hung up.
 */
const NODE_PROXY = String.raw`
import json, os, select, socket, subprocess, sys, time
path, mode = sys.argv[1], sys.argv[2]
def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def varint(b, i):
    n = s = 0
    while True:
        c = b[i]; i += 1; n |= (c & 0x7f) << s; s += 7
        if c < 0x80: return n, i
def fields(b):
    i, f = 0, {}
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            ln, i = varint(b, i); v = b[i:i+ln]; i += ln
        else:
            raise ValueError("wire type %d" % wt)
        f[num] = v
    return f
def eof_within(sock, seconds):
    sock.settimeout(seconds)
    try:
        return sock.recv(4096) == b""
    except (socket.timeout, BlockingIOError):
        return False
    except OSError:
        return True
if mode == "big":  # a hello over the agent's 1,024-byte message bound
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(path)
    s.send(b"\x08\x01" + b"\x00" * 2046)
    out({"type": "after-big", "eof": eof_within(s, 10)}); sys.exit(0)
if mode == "mute":  # says hello, never acknowledges
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(path)
    s.send(bytes([0x08, 0x01]))
    socket.recv_fds(s, 1024, 4)
    start = time.time()
    out({"type": "after-mute", "eof": eof_within(s, 15), "seconds": time.time() - start}); sys.exit(0)
if mode == "flood":  # more connections than the agent serves, none saying hello
    socks = []
    for i in range(10):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); c.connect(path); socks.append(c)
    start = time.time()
    closed_at = {}
    while len(closed_at) < len(socks) and time.time() - start < 15:
        ready, _, _ = select.select([c for c in socks if c not in closed_at], [], [], 0.1)
        for c in ready:
            if eof_within(c, 0.1):
                closed_at[c] = time.time() - start
    at_once = sum(1 for t in closed_at.values() if t < 1)
    out({"type": "flood", "closedAtOnce": at_once, "allClosedAfter": max(closed_at.values()) if len(closed_at) == len(socks) else -1})
    sys.exit(0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
out({"type": "connected", "sotype": s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE)})
s.send(bytes([0x08, 0x01]))  # ZdsHello{version: V1}
while True:
    msg, fds, flags, _ = socket.recv_fds(s, 1024, 4)
    if not msg and not fds:
        out({"type": "eof"}); break
    req = fields(msg)
    if 1 in req:  # add
        add = fields(req[1]); info = fields(add.get(2, b""))
        fd = fds[0] if fds else None
        rules = ""
        inode = None
        if fd is not None:
            inode = os.fstat(fd).st_ino
            rules = subprocess.run(["nsenter", "--net=/proc/self/fd/%d" % fd, "iptables-save"], pass_fds=[fd],
                                   capture_output=True, text=True).stdout
            os.close(fd)
        out({"type": "add", "uid": add.get(1, b"").decode(), "name": info.get(1, b"").decode(),
             "namespace": info.get(2, b"").decode(), "serviceAccount": info.get(3, b"").decode(),
             "fds": len(fds), "inode": inode, "rules": rules})
    elif 5 in req:
        out({"type": "keep", "uid": fields(req[5]).get(1, b"").decode()})
    elif 2 in req:
        out({"type": "del", "uid": fields(req[2]).get(2, b"").decode(), "fds": len(fds)})
    elif 3 in req:
        out({"type": "snapshot_sent"})
    else:
        out({"type": "unknown", "hex": msg.hex()})
    s.send(bytes([0x0a, 0x00]))  # WorkloadResponse{ack: {}}
    if mode == "rude" and 3 in req:
        s.send(bytes([0x0a, 0x00]))  # unasked
        s.settimeout(10)
        try:
            data = s.recv(1024)
            out({"type": "after-rude", "eof": data == b""})
        except socket.timeout:
            out({"type": "after-rude", "eof": False})
        break
`

interface NodeProxyLine {
  readonly type: string
  readonly uid?: string
  readonly name?: string
  readonly namespace?: string
  readonly serviceAccount?: string
  readonly fds?: number
  readonly inode?: number
  readonly rules?: string
  readonly sotype?: number
  readonly eof?: boolean
  readonly seconds?: number
  readonly closedAtOnce?: number
  readonly allClosedAfter?: number
}

interface StandIn {
  readonly child: ChildProcess
  readonly lines: Array<NodeProxyLine>
  readonly next: (type: string, within?: number) => Promise<NodeProxyLine>
  readonly stderr: () => string
}

const startNodeProxy = (socketPath: string, mode: "polite" | "rude" | "big" | "mute" | "flood" = "polite"): StandIn => {
  const child = spawn("python3", ["-c", NODE_PROXY, socketPath, mode], { stdio: ["ignore", "pipe", "pipe"] })
  const lines: Array<NodeProxyLine> = []
  let taken = 0
  let buffer = ""
  let err = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as NodeProxyLine)
      buffer = buffer.slice(nl + 1)
    }
  })
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
  const next = async (type: string, within = 15_000) => {
    const deadline = Date.now() + within
    for (;;) {
      const line = lines[taken]
      if (line !== undefined) {
        taken++
        if (line.type !== type) throw new Error(`stand-in node proxy: expected ${type}, got ${JSON.stringify(line)}`)
        return line
      }
      if (Date.now() > deadline) throw new Error(`stand-in node proxy: no ${type} in time; stderr: ${err}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  return { child, lines, next, stderr: () => err }
}

const sh = (...argv: Array<string>) => execFileSync(argv[0]!, argv.slice(1), { encoding: "utf8", stdio: "pipe" })

const id = randomBytes(3).toString("hex")

/** The network namespaces install-cni holds open (inodes of its descriptors on nsfs). */
const heldNamespaces = (pid: number): ReadonlyArray<number> =>
  readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const path = `/proc/${pid}/fd/${fd}`
      // A namespace opened by its bind mount shows that path; one opened in /proc shows net:[inode].
      const target = readlinkSync(path)
      if (!target.startsWith("net:[") && !target.includes("/netns/")) return []
      return [statSync(path).ino]
    } catch {
      return []
    }
  })

const postEvent = (socketPath: string, path: string, body: string) =>
  new Promise<number>((resolve, reject) => {
    const call = request(
      { socketPath, path, method: "POST", headers: { "content-length": Buffer.byteLength(body) } },
      (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
      },
    )
    call.on("error", reject)
    call.end(body)
  })

describe.skipIf(skipReason !== undefined)("install-cni ambient mode", () => {
  let server: Orchestrator
  let daemon: Daemon
  let root = ""
  let binDir = ""
  let runDir = ""
  let nodeProxySocket = ""
  let pluginConfig: Record<string, unknown> = {}
  const standIns: Array<StandIn> = []
  const netns = (pod: string) => `mesh-amb-${id}-${pod}`
  const sandbox = (pod: string, namespace: string): Sandbox => ({
    containerId: `${netns(pod)}-sandbox`,
    netns: `/var/run/netns/${netns(pod)}`,
    ifName: "eth0",
    args: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=${pod}`,
  })
  const inode = (pod: string) => statSync(`/var/run/netns/${netns(pod)}`).ino
  const meshChainsIn = (pod: string) => sh("ip", "netns", "exec", netns(pod), "iptables-save")

  const addPod = async (pod: string, namespace: string) => {
    sh("ip", "netns", "add", netns(pod))
    // What the runtime's loopback plugin does first in every pod.
    sh("ip", "netns", "exec", netns(pod), "ip", "link", "set", "lo", "up")
    return runPlugin(binDir, "mesh-cni", "ADD", sandbox(pod, namespace), pluginConfig)
  }

  beforeAll(async () => {
    server = await startOrchestrator({ token: "sa-token" })
    server.put({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "amb", labels: { "mesh.io/dataplane-mode": "ambient" } },
    })
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "plain" } })
    const pod = (name: string, namespace: string, serviceAccountName: string) =>
      server.put({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace, uid: `uid-${name}` },
        spec: { nodeName: "node-1", serviceAccountName, containers: [{ name: "app", image: "app" }] },
      })
    pod("early-1", "amb", "early-sa")
    pod("app-1", "amb", "app-sa")
    pod("plain-1", "plain", "default")

    root = mkdtempSync(join(tmpdir(), "cni-ambient-e2e-"))
    const netDir = join(root, "net.d")
    binDir = join(root, "bin")
    const saDir = join(root, "sa")
    runDir = join(root, "run")
    nodeProxySocket = join(root, "node-proxy", "node-proxy.sock")
    for (const dir of [netDir, binDir, saDir]) mkdirSync(dir)
    writeFileSync(join(saDir, "token"), "sa-token")
    writeFileSync(join(saDir, "ca.crt"), server.caPem ?? "")
    const primary = join(netDir, "10-pods.conflist")
    writeFileSync(primary, JSON.stringify({ name: "pods", cniVersion: "1.0.0", plugins: [{ type: "loopback" }] }))
    const [readiness, monitoring, ctrlz] = await freePorts(3)
    daemon = startDaemon("install-cni", ["--ctrlz_port", String(ctrlz), "--log_output_level", "cni-agent:debug"], {
      AMBIENT_ENABLED: "true",
      CNI_AGENT_RUN_DIR: runDir,
      NODE_PROXY_UDS_ADDRESS: nodeProxySocket,
      REPAIR_ENABLED: "false",
      MOUNTED_CNI_NET_DIR: netDir,
      CNI_BIN_DIR: binDir,
      CNI_SERVICE_ACCOUNT_DIR: saDir,
      CNI_PLUGIN_SOURCE: binary("mesh-cni"),
      CNI_READINESS_PORT: String(readiness),
      MONITORING_PORT: String(monitoring),
      ORCHESTRATOR_SERVICE_HOST: "127.0.0.1",
      ORCHESTRATOR_SERVICE_PORT: String(server.port),
      NODE_NAME: "node-1",
    })
    await daemon.waitFor(/serving node proxies on/, 30_000)
    const deadline = Date.now() + 30_000
    for (;;) {
      const list = JSON.parse(readFileSync(primary, "utf8")) as { plugins: Array<Record<string, unknown>> }
      const entry = list.plugins.find((p) => p.type === "mesh-cni")
      if (entry !== undefined) {
        pluginConfig = { ...entry, name: "pods", cniVersion: "1.0.0" }
        break
      }
      if (Date.now() > deadline) throw new Error(`plugin not installed; output:\n${daemon.output()}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }, 60_000)

  afterAll(async () => {
    for (const standIn of standIns) if (standIn.child.exitCode === null) standIn.child.kill("SIGKILL")
    if (daemon !== undefined && daemon.process.exitCode === null) await daemon.stop("SIGKILL")
    for (const pod of ["early-1", "app-1", "plain-1"]) spawnSync("ip", ["netns", "del", netns(pod)])
    await server?.close()
    if (root !== "") rmSync(root, { recursive: true, force: true })
  })

  it("install-cni names ambient mode and the node agent's run directory in the plugin's entry", () => {
    expect(pluginConfig.ambient_enabled).toBe(true)
    expect(pluginConfig.cni_agent_run_dir).toBe(runDir)
  })

  it("a pod added before any node proxy connects: ADD succeeds, the rules are in its namespace", async () => {
    const result = await addPod("early-1", "amb")
    expect(result.exitCode, `${result.stdout}\n${result.stderr}\n${daemon.output()}`).toBe(0)
    const rules = meshChainsIn("early-1")
    expect(rules).toContain(
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001",
    )
    expect(rules).toContain(
      "-A MESH_PRERT ! -d 127.0.0.1/32 -p tcp -m tcp ! --dport 15008 -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15006",
    )
    // The policy routing for connections the node proxy marked.
    expect(sh("ip", "netns", "exec", netns("early-1"), "ip", "rule")).toMatch(/32764:.*fwmark 0x111\/0xfff lookup 100/)
    expect(heldNamespaces(daemon.process.pid!)).toContain(inode("early-1"))
  })

  it("the node proxy connects: the snapshot carries the early pod's namespace descriptor", async () => {
    const standIn = startNodeProxy(nodeProxySocket)
    standIns.push(standIn)
    const connected = await standIn.next("connected")
    expect(connected.sotype).toBe(5) // SOCK_SEQPACKET
    const add = await standIn.next("add")
    expect(add).toMatchObject({ uid: "uid-early-1", name: "early-1", namespace: "amb", serviceAccount: "early-sa" })
    expect(add.fds).toBe(1)
    expect(add.inode).toBe(inode("early-1"))
    expect(add.rules).toContain(
      "-A MESH_OUTPUT ! -d 127.0.0.1/32 -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001",
    )
    await standIn.next("snapshot_sent")
  })

  it("a pod added while the node proxy is connected arrives at once, rules in place", async () => {
    const standIn = standIns[0]!
    const result = await addPod("app-1", "amb")
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0)
    const add = await standIn.next("add")
    expect(add).toMatchObject({ uid: "uid-app-1", name: "app-1", namespace: "amb", serviceAccount: "app-sa", fds: 1 })
    expect(add.inode).toBe(inode("app-1"))
    expect(add.rules).toContain("-A OUTPUT -j MESH_OUTPUT")
    expect(add.rules).toContain(
      "-A MESH_OUTPUT ! -o lo -p udp -m mark ! --mark 0x539/0xfff -m udp --dport 53 -j REDIRECT --to-ports 15053",
    )
  })

  it("a pod of a namespace without the ambient label: no rules, nothing sent", async () => {
    const result = await addPod("plain-1", "plain")
    expect(result.exitCode, result.stdout).toBe(0)
    expect(meshChainsIn("plain-1")).not.toContain("MESH_")
    expect(heldNamespaces(daemon.process.pid!)).not.toContain(inode("plain-1"))
  })

  it("DEL tells the node proxy and lets the namespace go", async () => {
    const standIn = standIns[0]!
    const appInode = inode("app-1")
    const result = await runPlugin(binDir, "mesh-cni", "DEL", sandbox("app-1", "amb"), pluginConfig)
    expect(result.exitCode, result.stdout).toBe(0)
    const del = await standIn.next("del")
    expect(del).toMatchObject({ uid: "uid-app-1", fds: 0 })
    expect(heldNamespaces(daemon.process.pid!)).not.toContain(appInode)
    expect(heldNamespaces(daemon.process.pid!)).toContain(inode("early-1"))
    // Nothing else was sent: the plain pod never was, the early one only in the snapshot.
    expect(standIn.lines.filter((line) => line.type === "add").map((line) => line.uid)).toEqual([
      "uid-early-1",
      "uid-app-1",
    ])
  })

  it("a node proxy that reconnects gets the snapshot again (without the deleted pod)", async () => {
    standIns[0]!.child.kill("SIGKILL")
    const standIn = startNodeProxy(nodeProxySocket)
    standIns.push(standIn)
    await standIn.next("connected")
    const add = await standIn.next("add")
    expect(add).toMatchObject({ uid: "uid-early-1", fds: 1, inode: inode("early-1") })
    await standIn.next("snapshot_sent")
  })

  it("a node proxy that sends unasked messages is disconnected; the agent keeps serving", async () => {
    const rude = startNodeProxy(nodeProxySocket, "rude")
    standIns.push(rude)
    await rude.next("connected")
    await rude.next("add")
    await rude.next("snapshot_sent")
    expect((await rude.next("after-rude")).eof).toBe(true)
    await daemon.waitFor(/disconnected: the node proxy sent a message nobody asked for/)
    // A fresh connection is still served.
    const standIn = startNodeProxy(nodeProxySocket)
    standIns.push(standIn)
    await standIn.next("connected")
    expect((await standIn.next("add")).uid).toBe("uid-early-1")
  })

  it("bounds: a message over 1,024 bytes ends its connection; no acknowledgement or no hello within 5 s closes it; past 8 connections the rest are closed at once", async () => {
    const big = startNodeProxy(nodeProxySocket, "big")
    standIns.push(big)
    expect((await big.next("after-big")).eof).toBe(true)
    await daemon.waitFor(/disconnected: a message over 1024 bytes/)
    const mute = startNodeProxy(nodeProxySocket, "mute")
    standIns.push(mute)
    const silence = await mute.next("after-mute", 30_000)
    expect(silence.eof).toBe(true)
    // Closed at the acknowledgement deadline (5 s; measured under load).
    expect(silence.seconds).toBeGreaterThan(3.5)
    expect(silence.seconds).toBeLessThan(12)
    await daemon.waitFor(/disconnected: no acknowledgement of add amb\/early-1/)
    // Two polite stand-ins are connected (the reconnected one and the one after the rude one).
    const open = standIns.filter(
      (s) => s.child.exitCode === null && s.child.signalCode === null && s !== big && s !== mute,
    ).length
    expect(open).toBe(2)
    const flood = startNodeProxy(nodeProxySocket, "flood")
    standIns.push(flood)
    const result = await flood.next("flood", 30_000)
    expect(result.closedAtOnce).toBe(10 - (8 - open))
    // The others waited for their hello deadline (5 s, measured under load), then were closed.
    expect(result.allClosedAfter).toBeGreaterThan(3.5)
    expect(result.allClosedAfter).toBeLessThan(12)
    await daemon.waitFor(/disconnected: no hello within 5s/)
  }, 60_000)

  it("the plugin event socket refuses bodies over 64 KiB and invalid events", async () => {
    const socketPath = join(runDir, "pluginevent.sock")
    expect(await postEvent(socketPath, "/cmdadd", "x".repeat(70 * 1024))).toBe(413)
    expect(await postEvent(socketPath, "/cmdadd", JSON.stringify({ netns: "/nope" }))).toBe(400)
    expect(await postEvent(socketPath, "/cmddel", "{")).toBe(400)
  })

  it("SIGTERM: exits 0 and removes both sockets", async () => {
    const code = await daemon.stop("SIGTERM")
    expect(code, daemon.output()).toBe(0)
    expect(readdirSync(runDir)).not.toContain("pluginevent.sock")
    expect(readdirSync(join(root, "node-proxy"))).not.toContain("node-proxy.sock")
  })
})
