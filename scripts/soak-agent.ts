/**
 * The agent's part of the hardening soak (issue 34, findings 2, 3, 8 and 10), run in a worker
 * thread of soak-hardening.ts so that its floods and its healthy clients' clocks do not share an
 * event loop with the control plane's attackers. Loopback only; every loop bounded in count and
 * stopped at the soak's deadline.
 *
 * The built `mesh-agent proxy`, proxyless (DISABLE_PROXY=true) with its DNS proxy on, runs against
 * the soak's `mesh-discovery` (plaintext xDS) with a workload certificate made here by `openssl`
 * (FILE_MOUNTED_CERTS: nothing to ask a CA). Its resolv.conf (DNS_PROXY_RESOLV_CONF, always set:
 * the agent must never forward a flood to the machine's real resolver) names a stand-in
 * nameserver on 127.0.0.154:53 (not .153, which the DNS end-to-end tests bind while they run).
 * Into the soak's --configDir go a ServiceEntry with an address (a mesh name for the DNS proxy)
 * and three WasmPlugins whose modules come from a local HTTP server: one healthy, two (fail-open
 * and fail-closed) whose body never ends.
 *
 * Attacks, all at once until the deadline:
 * - `wasmEndless`: rounds of an ADS client on the agent's xDS socket asking for the two endless
 *   plugins (each round a new stream, so a new conversion and a new pull);
 * - `stsChunked`: token-exchange requests with a chunked body that never ends;
 * - `dnsTcpPipelining`: connections pipelining queries for the mesh name without ever reading;
 * - `dnsUdpFlood`: four sources flooding never-answered names at `udpRate` queries a second.
 * Healthy clients meanwhile: `dig` for the mesh name (UDP and TCP) and a forwarded name, answered
 * within a bound; a long-lived ADS client and a new one every few seconds getting the healthy
 * plugin's ECDS resource as a local module. At the deadline, clients that never finish are
 * attached (slowloris heads on the readiness and token-exchange ports, an ADS stream through the
 * xDS socket that never reads, half a DNS length prefix) and the agent gets SIGTERM.
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import { createSocket, type Socket as UdpSocket } from "node:dgram"
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { createServer as httpServer, type ServerResponse } from "node:http"
import { connect, createServer as tcpServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { isMainThread, parentPort, workerData } from "node:worker_threads"
import dnsPacket, { type DecodedPacket } from "dns-packet"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../src/services/xds-client/client.js"
import {
  cpuSecondsOf,
  delay,
  freePort,
  leftOpen,
  MiB,
  pausedAds,
  percentile,
  round1,
  type StuckClient,
  slowloris,
  stalledBytes,
  statusCounts,
  watchMemory,
} from "./soak-wire.js"

export interface AgentSoakInput {
  /** Epoch milliseconds at which every attack and probe stops. */
  readonly deadline: number
  /** A directory of the soak's for the agent's files. */
  readonly work: string
  /** mesh-discovery's --configDir (the plugins and the ServiceEntry are written there). */
  readonly configDir: string
  /** mesh-discovery's plaintext xDS port and its secure (CA) port. */
  readonly grpcPort: number
  readonly securePort: number
  /** Queries a second of the UDP flood, all sources together. */
  readonly udpRate: number
  /** Past this RSS the agent is killed (the soak then reports it). */
  readonly guardMiB: number
}

const ROOT = join(fileURLToPath(import.meta.url), "..", "..", "..")
const UPSTREAM_HOST = "127.0.0.154"
const MESH_NAME = "db.soak.internal"
const MESH_IP = "240.240.0.10"
const FORWARDED_NAME = "ok.soak.example"
const FORWARDED_IP = "198.51.100.7"
const NODE_ID = "sidecar~127.0.0.1~app-1.default~default.svc.cluster.local"
const ECDS = TypeUrl.ExtensionConfig
const ecdsName = (name: string) => `extensions.mesh.io/wasmplugin/default.${name}`
const HEALTHY = ecdsName("soak-healthy")
const ENDLESS = [ecdsName("soak-endless-open"), ecdsName("soak-endless-closed")]

/** A DNS answer must come within this (dig's own retries included). */
export const DNS_PROBE_BOUND_MS = 4000
/** A new ADS client through the agent must get the healthy plugin within this. */
export const XDS_PROBE_BOUND_MS = 10_000
const WASM_ROUNDS = 20
const WASM_ROUND_WAIT_MS = 45_000
const STS_ROUNDS = 10
const STS_MAX_BYTES = 300 * MiB
const TCP_CONNECTIONS = 2
const TCP_REOPENS = 20
const TCP_MAX_QUERIES = 2_000_000
const UDP_SOURCES = 4
const UDP_MAX_QUERIES = 3_000_000
const UDP_OUTSTANDING = 64
const UDP_POOL = 4096

// ------------------------------------------------------------------------------------------------
// Stand-ins: the upstream nameserver and the module server

/** A valid Wasm binary (header + one custom section). */
const wasmModule = (label: string) => {
  const name = Buffer.from("mesh-soak")
  const payload = Buffer.from(label)
  const body = Buffer.concat([Buffer.from([name.length]), name, payload])
  return Buffer.concat([Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x00, body.length]), body])
}

/** UDP and TCP on UPSTREAM_HOST:53: FORWARDED_NAME answered, `silent*` never, the rest NXDOMAIN. */
const startUpstream = async () => {
  let asked = 0
  const reply = (query: DecodedPacket): Buffer | undefined => {
    asked++
    const question = query.questions?.[0]
    if (question === undefined || question.name.startsWith("silent")) return undefined
    const known = question.name.toLowerCase() === FORWARDED_NAME && question.type === "A"
    return dnsPacket.encode({
      id: query.id,
      type: "response",
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3),
      questions: [question],
      answers: known ? [{ name: question.name, type: "A", ttl: 60, data: FORWARDED_IP }] : [],
    })
  }
  const udp: UdpSocket = createSocket("udp4")
  udp.on("message", (bytes, from) => {
    try {
      const answer = reply(dnsPacket.decode(bytes))
      if (answer !== undefined) udp.send(answer, from.port, from.address)
    } catch {
      // not DNS
    }
  })
  const tcp = tcpServer((socket) => {
    let pending = Buffer.alloc(0)
    socket.on("error", () => undefined)
    socket.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const length = pending.readUInt16BE(0)
        let answer: Buffer | undefined
        try {
          answer = reply(dnsPacket.decode(pending.subarray(2, 2 + length)))
        } catch {
          answer = undefined
        }
        pending = pending.subarray(2 + length)
        if (answer === undefined) continue
        const prefix = Buffer.alloc(2)
        prefix.writeUInt16BE(answer.length)
        socket.write(Buffer.concat([prefix, answer]))
      }
    })
  })
  await new Promise<void>((resolve, reject) => {
    udp.once("error", reject)
    udp.bind(53, UPSTREAM_HOST, () => resolve())
  })
  await new Promise<void>((resolve, reject) => {
    tcp.once("error", reject)
    tcp.listen(53, UPSTREAM_HOST, () => resolve())
  })
  return {
    asked: () => asked,
    close: () => {
      udp.close()
      tcp.close()
    },
  }
}

/** Serves the healthy module at /healthy.wasm and a body that never ends at any other path. */
const startModuleServer = () =>
  new Promise<{
    port: number
    served: Map<string, { requests: number; bytes: number; closedByAgent: number }>
    close: () => void
  }>((resolve) => {
    const served = new Map<string, { requests: number; bytes: number; closedByAgent: number }>()
    const good = wasmModule("healthy soak plugin")
    const chunk = Buffer.alloc(256 * 1024, 7)
    const pour = (record: { bytes: number; closedByAgent: number }, res: ServerResponse) => {
      let ended = false
      res.on("close", () => {
        ended = true
        record.closedByAgent++
      })
      const write = () => {
        while (!ended && !res.destroyed) {
          record.bytes += chunk.length
          if (!res.write(chunk)) return void res.once("drain", write)
        }
      }
      res.writeHead(200, { "content-type": "application/wasm" })
      write()
    }
    const server = httpServer((req, res) => {
      const path = req.url ?? "/"
      const record = served.get(path) ?? { requests: 0, bytes: 0, closedByAgent: 0 }
      served.set(path, record)
      record.requests++
      if (path === "/healthy.wasm") {
        record.bytes += good.length
        return void res.end(good)
      }
      pour(record, res)
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as { port: number }).port,
        served,
        close: () => {
          server.closeAllConnections()
          server.close()
        },
      }),
    )
  })

/** The mesh's side: a ServiceEntry with an address (a name for the DNS proxy) and the plugins. */
const meshConfig = (modulePort: number) => {
  const plugin = (name: string, path: string, failStrategy?: string) =>
    `apiVersion: extensions.mesh.io/v1alpha1
kind: WasmPlugin
metadata:
  name: ${name}
  namespace: default
spec:
  url: http://127.0.0.1:${modulePort}${path}
  phase: AUTHN
${failStrategy === undefined ? "" : `  failStrategy: ${failStrategy}\n`}`
  return [
    `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: soak-dns
  namespace: demo
spec:
  hosts: [${MESH_NAME}]
  addresses: [${MESH_IP}]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  endpoints: [{address: 127.0.0.1}]
`,
    plugin("soak-healthy", "/healthy.wasm"),
    plugin("soak-endless-open", "/endless-open.wasm", "FAIL_OPEN"),
    plugin("soak-endless-closed", "/endless-closed.wasm"),
  ].join("---\n")
}

/** A CA and a workload certificate for spiffe://cluster.local/ns/default/sa/app, as mounted files. */
const workloadCertificates = (dir: string) => {
  mkdirSync(dir, { recursive: true })
  const sh = (args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
  sh([
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-keyout",
    "ca.key",
    "-out",
    "root-cert.pem",
    "-subj",
    "/O=soak CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ])
  sh(["req", "-new", ...ec, "-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/O=soak workload"])
  writeFileSync(
    join(dir, "leaf.ext"),
    "subjectAltName=URI:spiffe://cluster.local/ns/default/sa/app\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n",
  )
  sh([
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "root-cert.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    "leaf.ext",
    "-out",
    "cert-chain.pem",
  ])
}

// ------------------------------------------------------------------------------------------------
// The agent process

const readLog = (path: string) => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return ""
  }
}

const waitForLog = async (path: string, pattern: RegExp, exited: () => boolean, withinMs = 30_000) => {
  for (const until = Date.now() + withinMs; Date.now() < until; ) {
    const match = pattern.exec(readLog(path))
    if (match !== null) return match
    if (exited()) throw new Error(`mesh-agent exited during start-up:\n${readLog(path).slice(-3000)}`)
    await delay(100)
  }
  throw new Error(`mesh-agent did not log ${pattern} within ${withinMs} ms:\n${readLog(path).slice(-3000)}`)
}

const digOnce = (port: number, args: ReadonlyArray<string>) =>
  new Promise<{ answers: Array<string>; ms: number }>((resolve) => {
    const started = performance.now()
    execFile("dig", ["@127.0.0.1", "-p", String(port), ...args], { timeout: 15_000 }, (_error, stdout) => {
      const answers: Array<string> = []
      let inAnswer = false
      for (const line of String(stdout).split("\n")) {
        if (line.startsWith(";; ANSWER SECTION")) inAnswer = true
        else if (line.trim() === "" || line.startsWith(";;")) inAnswer = false
        else if (inAnswer) {
          const [name, , , type, ...data] = line.split(/\s+/)
          answers.push(`${name} ${type} ${data.join(" ")}`)
        }
      }
      resolve({ answers, ms: performance.now() - started })
    })
  })

const query = (id: number, name: string) =>
  dnsPacket.encode({
    id: id & 0xffff,
    type: "query",
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: "A" }],
  })

const framed = (message: Buffer) => {
  const length = Buffer.alloc(2)
  length.writeUInt16BE(message.length)
  return Buffer.concat([length, message])
}

/**
 * Datagrams the kernel dropped at the agent's DNS socket (its receive buffer full: the agent did
 * not read them in time), from /proc/net/udp; such drops hit every client alike.
 */
const udpDrops = (port: number): number | undefined => {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`
  try {
    const line = readFileSync("/proc/net/udp", "utf8")
      .split("\n")
      .find((l) => l.trim().split(/\s+/)[1] === local)
    return line === undefined ? undefined : Number(line.trim().split(/\s+/).at(-1))
  } catch {
    return undefined
  }
}

// biome-ignore lint/suspicious/noExplicitAny: decoded ECDS resources are walked loosely
type J = any

/** What the proxy would get for a plugin: its module as a local file, allow-all or deny-all RBAC. */
const pluginOutcome = (resource: J): string => {
  const typed = resource?.typed_config
  if (typed === undefined) return "missing"
  if (typeof typed.config?.vm_config?.code?.local?.filename === "string") return "localModule"
  if (String(typed["@type"]).endsWith("RBAC"))
    return typed.rules?.action === "DENY" ? "denyAllRbac" : typed.rules === undefined ? "allowAllRbac" : "rbac"
  return "other"
}

export const runAgentSoak = async (input: AgentSoakInput) => {
  const running = () => Date.now() < input.deadline
  const dir = join(input.work, "agent")
  const modules = await startModuleServer()
  writeFileSync(join(input.configDir, "soak-agent.yaml"), meshConfig(modules.port))
  parentPort?.postMessage({ type: "config" })
  const upstream = await startUpstream().then(
    (u) => ({ ok: true as const, ...u }),
    (e: Error) => ({ ok: false as const, reason: `cannot bind ${UPSTREAM_HOST}:53: ${e.message}` }),
  )
  mkdirSync(join(dir, "etc/mesh/config"), { recursive: true })
  workloadCertificates(join(dir, "etc/certs"))
  writeFileSync(
    join(dir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${input.grpcPort}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  writeFileSync(
    join(dir, "resolv.conf"),
    `search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver ${UPSTREAM_HOST}\noptions ndots:5\n`,
  )

  const ports = { dns: await freePort(), sts: await freePort(), readiness: await freePort() }
  const logPath = join(dir, "agent.log")
  const logFd = openSync(logPath, "a")
  const agent = spawn(process.execPath, [join(ROOT, "bin/mesh-agent.cjs"), "proxy", "--stsPort", String(ports.sts)], {
    cwd: dir,
    env: {
      ...process.env,
      DISABLE_PROXY: "true",
      FILE_MOUNTED_CERTS: "true",
      // Never asked (FILE_MOUNTED_CERTS), but left at its default it would name a cluster host.
      CA_ADDR: `127.0.0.1:${input.securePort}`,
      POD_NAME: "app-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "app",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(ports.readiness),
      // No agent status listener: it would bind every interface (the readiness port must, as a probe target).
      STATUS_PORT: "0",
      MESH_META_DNS_CAPTURE: "true",
      DNS_PROXY_ADDR: `127.0.0.1:${ports.dns}`,
      DNS_PROXY_RESOLV_CONF: join(dir, "resolv.conf"),
    },
    stdio: ["ignore", logFd, logFd],
  })
  closeSync(logFd)
  let exited: { code: number | null; signal: string | null; at: number } | undefined
  agent.on("exit", (code, signal) => {
    exited = { code, signal, at: Date.now() }
  })
  parentPort?.postMessage({ type: "pid", pid: agent.pid })
  const memory = watchMemory(agent.pid!, input.guardMiB)
  const scope = Effect.runSync(Scope.make())
  try {
    const startedAt = Date.now()
    for (const pattern of [/DNS proxy listening/, /gRPC xDS bootstrap written/, /token exchange listening/])
      await waitForLog(logPath, pattern, () => exited !== undefined)
    const socket = join(dir, "etc/mesh/proxy/XDS")
    const node = {
      id: NODE_ID,
      metadata: plainToStruct({ NAMESPACE: "default", INSTANCE_IPS: "127.0.0.1", DNS_CAPTURE: "true" }),
    }
    const adsClient = (clientScope: Scope.Scope) =>
      Effect.runPromise(
        makeAdsClient({ address: `unix://${socket}`, mode: "sotw", node: node as never }).pipe(
          Scope.extend(clientScope),
        ),
      )
    /** The healthy plugin held by `client` as a local module, within `ms`. */
    const healthyWithin = async (client: AdsClientShape, ms: number) => {
      const got = await Effect.runPromise(
        client
          .waitFor(
            (s) => pluginOutcome(s.types.get(ECDS)?.resources.get(HEALTHY)?.resource) === "localModule",
            `${ms} millis`,
          )
          .pipe(Effect.either),
      )
      return got._tag === "Right"
    }
    // The workload's long-lived stream: the agent then subscribes to the name table on its behalf.
    const longLived = await adsClient(scope)
    await Effect.runPromise(longLived.subscribe(ECDS, [HEALTHY]))
    if (!(await healthyWithin(longLived, 45_000)))
      throw new Error(`the healthy plugin never reached the workload:\n${readLog(logPath).slice(-3000)}`)
    for (const until = Date.now() + 30_000; ; await delay(200)) {
      const answer = await digOnce(ports.dns, ["+tries=1", "+time=1", MESH_NAME])
      if (answer.answers.includes(`${MESH_NAME}. A ${MESH_IP}`)) break
      if (Date.now() > until) throw new Error(`${MESH_NAME} never answered by the DNS proxy`)
    }
    const readyAfterMs = Date.now() - startedAt
    const attacksFrom = Date.now()
    const cpuBefore = cpuSecondsOf(agent.pid!)
    const dropsBefore = udpDrops(ports.dns) ?? 0
    const baselineMiB = memory.peakMiB()
    const logBytesBefore = Buffer.byteLength(readLog(logPath))

    // -- Attacks ------------------------------------------------------------------------------

    const wasmEndless = async () => {
      const outcomes: Record<string, Array<string>> = Object.fromEntries(ENDLESS.map((n) => [n, []]))
      const roundMs: Array<number> = []
      let rounds = 0
      for (; running() && rounds < WASM_ROUNDS; rounds++) {
        const roundScope = Effect.runSync(Scope.make())
        const t0 = Date.now()
        try {
          const client = await adsClient(roundScope)
          await Effect.runPromise(client.subscribe(ECDS, ENDLESS))
          const wait = Math.min(WASM_ROUND_WAIT_MS, Math.max(1000, input.deadline - Date.now()))
          const got = await Effect.runPromise(
            client
              .waitFor((s) => ENDLESS.every((n) => s.types.get(ECDS)?.resources.has(n) === true), `${wait} millis`)
              .pipe(Effect.either),
          )
          const snapshot = await Effect.runPromise(client.snapshot)
          for (const n of ENDLESS)
            outcomes[n]!.push(pluginOutcome(snapshot.types.get(ECDS)?.resources.get(n)?.resource))
          if (got._tag === "Right") roundMs.push(Date.now() - t0)
        } finally {
          await Effect.runPromise(Scope.close(roundScope, Exit.void))
        }
      }
      return {
        rounds,
        roundsAnswered: roundMs.length,
        roundMaxMs: Math.max(0, ...roundMs),
        outcomes: Object.fromEntries(Object.entries(outcomes).map(([n, list]) => [n, statusCounts(list)])),
      }
    }

    const stsChunked = async () => {
      const results: Array<{ status: string; mibSent: number; ms: number; closed: boolean }> = []
      for (let round = 0; running() && round < STS_ROUNDS; round++) {
        const started = Date.now()
        results.push(
          await new Promise((resolve) => {
            const socket = connect(ports.sts, "127.0.0.1")
            let received = ""
            let sent = 0
            let done = false
            const chunk = `${(64 * 1024).toString(16)}\r\n${"s".repeat(64 * 1024)}\r\n`
            const finish = (closed: boolean) => {
              if (done) return
              done = true
              socket.destroy()
              const status = /^HTTP\/1\.1 (\d+)/.exec(received)?.[1] ?? "none"
              resolve({ status, mibSent: round1(sent / MiB), ms: Date.now() - started, closed })
            }
            // No last chunk: sent until the agent answers or closes, STS_MAX_BYTES went out, or
            // 5 s after the last byte (a build without the bound never answers).
            const pump = () => {
              while (!done && sent < STS_MAX_BYTES && running()) {
                sent += 64 * 1024
                if (!socket.write(chunk)) return void socket.once("drain", pump)
              }
              if (!done) setTimeout(() => finish(false), 5000)
            }
            socket.on("data", (data) => {
              received += data.toString("latin1")
            })
            socket.on("close", () => finish(true))
            socket.on("error", () => finish(true))
            socket.write(
              "POST /token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked\r\n\r\n",
            )
            pump()
          }),
        )
        await delay(2000)
      }
      return {
        requests: results.length,
        statuses: statusCounts(results.map((r) => r.status)),
        maxMibSent: Math.max(0, ...results.map((r) => r.mibSent)),
        maxMs: Math.max(0, ...results.map((r) => r.ms)),
        everyConnectionClosed: results.every((r) => r.closed),
      }
    }

    const dnsTcpPipelining = async () => {
      let offered = 0
      let opened = 0
      let closedByAgent = 0
      const batch = Buffer.concat(Array.from({ length: 1000 }, (_, i) => framed(query(i, MESH_NAME))))
      const one = async () => {
        while (running() && opened < TCP_REOPENS && offered < TCP_MAX_QUERIES) {
          opened++
          const socket = connect({ host: "127.0.0.1", port: ports.dns })
          socket.on("error", () => undefined)
          const closed = new Promise<"closed">((resolve) => socket.once("close", () => resolve("closed")))
          // Never read: no 'data' listener, so answers pile up wherever the agent lets them.
          while (running() && !socket.destroyed && offered < TCP_MAX_QUERIES) {
            offered += 1000
            if (!socket.write(batch)) {
              const until = delay(Math.max(0, input.deadline - Date.now()))
              await Promise.race([new Promise((r) => socket.once("drain", r)), closed, until])
            }
          }
          if (socket.destroyed) closedByAgent++
          socket.destroy()
        }
      }
      await Promise.all(Array.from({ length: TCP_CONNECTIONS }, one))
      return { connections: opened, queriesOffered: offered, closedByAgent }
    }

    const dnsUdpFlood = async () => {
      let sent = 0
      const started = Date.now()
      const perSource = input.udpRate / UDP_SOURCES / 1000
      const one = async (source: number) => {
        const udp = createSocket("udp4")
        await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()))
        udp.on("message", () => undefined)
        udp.on("error", () => undefined)
        // Distinct never-answered names, encoded once: the flood's own CPU is taken from the
        // machine the agent runs on. A buffer is used again only after UDP_POOL sends, long
        // after its send completed (at most UDP_OUTSTANDING are in flight).
        const pool = Array.from({ length: UDP_POOL }, (_, i) => query(i, `silent-${source}-${i}.soak.example`))
        let outstanding = 0
        let mine = 0
        while (running() && sent < UDP_MAX_QUERIES) {
          // Paced: past what the agent's one socket takes in, the kernel drops every client's
          // datagrams alike, which no proxy can prevent.
          const due = Math.floor((Date.now() - started) * perSource) - mine
          const now = Math.min(due, UDP_OUTSTANDING - outstanding)
          for (let i = 0; i < now; i++) {
            outstanding++
            mine++
            sent++
            const datagram = pool[mine % UDP_POOL]!
            datagram.writeUInt16BE(mine & 0xffff, 0)
            udp.send(datagram, ports.dns, "127.0.0.1", () => {
              outstanding--
            })
          }
          await (now > 0 ? new Promise((r) => setImmediate(r)) : delay(2))
        }
        udp.close()
      }
      await Promise.all(Array.from({ length: UDP_SOURCES }, (_, k) => one(k)))
      const drops = udpDrops(ports.dns)
      return {
        queriesSent: sent,
        ratePerSecond: Math.round(sent / Math.max(1, (Date.now() - started) / 1000)),
        droppedByKernelAtAgentSocket: drops === undefined ? null : drops - dropsBefore,
      }
    }

    // -- Healthy clients ------------------------------------------------------------------------

    const dnsProbes = async () => {
      const results: Record<string, Array<{ ok: boolean; ms: number }>> = {}
      const expected = (name: string, ip: string) => `${name}. A ${ip}`
      const probes: Array<[string, Array<string>, string]> = [
        ["udpMeshName", ["+tries=3", "+time=1", MESH_NAME], expected(MESH_NAME, MESH_IP)],
        ["tcpMeshName", ["+tcp", "+tries=2", "+time=2", MESH_NAME], expected(MESH_NAME, MESH_IP)],
      ]
      if (upstream.ok)
        probes.push(["udpForwarded", ["+tries=3", "+time=1", FORWARDED_NAME], expected(FORWARDED_NAME, FORWARDED_IP)])
      for (const [what] of probes) results[what] = []
      /** The first few lookups that were not answered right within the bound: when, how long, what came. */
      const misses: Array<{ what: string; atS: number; ms: number; answers: Array<string> }> = []
      while (running()) {
        await Promise.all(
          probes.map(async ([what, args, answer]) => {
            const at = Date.now()
            const got = await digOnce(ports.dns, args)
            const ok = got.answers.length === 1 && got.answers[0] === answer
            results[what]!.push({ ok, ms: got.ms })
            if ((!ok || got.ms >= DNS_PROBE_BOUND_MS) && misses.length < 12)
              misses.push({ what, atS: round1((at - attacksFrom) / 1000), ms: round1(got.ms), answers: got.answers })
          }),
        )
        await delay(500)
      }
      const byKind = Object.fromEntries(
        Object.entries(results).map(([what, list]) => [
          what,
          {
            probes: list.length,
            answered: list.filter((r) => r.ok).length,
            withinBound: list.filter((r) => r.ok && r.ms < DNS_PROBE_BOUND_MS).length,
            p50Ms: round1(
              percentile(
                list.map((r) => r.ms),
                0.5,
              ),
            ),
            maxMs: round1(Math.max(0, ...list.map((r) => r.ms))),
          },
        ]),
      )
      return { lookups: byKind, misses }
    }

    const xdsProbes = async () => {
      const ms: Array<number> = []
      let probes = 0
      let served = 0
      while (running()) {
        probes++
        const probeScope = Effect.runSync(Scope.make())
        const t0 = performance.now()
        try {
          const client = await adsClient(probeScope)
          await Effect.runPromise(client.subscribe(ECDS, [HEALTHY]))
          if (await healthyWithin(client, XDS_PROBE_BOUND_MS)) {
            served++
            ms.push(performance.now() - t0)
          }
        } finally {
          await Effect.runPromise(Scope.close(probeScope, Exit.void))
        }
        await delay(3000)
      }
      const held = await Effect.runPromise(longLived.snapshot)
      return {
        newClients: probes,
        served,
        p50Ms: round1(percentile(ms, 0.5)),
        maxMs: round1(Math.max(0, ...ms)),
        longLivedStillHolds: pluginOutcome(held.types.get(ECDS)?.resources.get(HEALTHY)?.resource) === "localModule",
      }
    }

    const [wasm, sts, tcp, udp, dns, xds] = await Promise.all([
      wasmEndless(),
      stsChunked(),
      dnsTcpPipelining(),
      dnsUdpFlood(),
      dnsProbes(),
      xdsProbes(),
    ])
    const peakMiB = memory.peakMiB()
    const cpuDuringAttacks = round1(cpuSecondsOf(agent.pid!) - cpuBefore)
    const logText = readLog(logPath)

    // -- Shutdown with clients that never finish ------------------------------------------------
    const stuck: Array<StuckClient> = []
    const attach = async (client: Promise<StuckClient>) => {
      try {
        stuck.push(await client)
      } catch {
        // could not be attached: reported by its absence
      }
    }
    await attach(slowloris("slowloris readiness", ports.readiness))
    await attach(slowloris("slowloris token exchange", ports.sts))
    await attach(pausedAds("paused xDS stream", { socketPath: socket }, node))
    await attach(stalledBytes("half DNS length prefix", ports.dns, "\u0000"))
    const stopAt = Date.now()
    agent.kill("SIGTERM")
    for (let i = 0; i < 300 && exited === undefined; i++) await delay(100)
    if (exited === undefined) agent.kill("SIGKILL")
    const notClosed = await leftOpen(stuck, 2000)
    const served = [...modules.served].map(([path, s]) => [
      path,
      { requests: s.requests, mibServed: round1(s.bytes / MiB), closedByAgent: s.closedByAgent },
    ])
    return {
      readyAfterMs,
      baselinePeakRssMiB: round1(baselineMiB),
      peakRssMiB: round1(peakMiB),
      killedByGuardAfterMs: memory.killedAfterMs() ?? null,
      attackSeconds: Math.max(0, round1((input.deadline - attacksFrom) / 1000)),
      cpuSecondsDuringAttacks: cpuDuringAttacks,
      rssTimelineMiB: memory.timelineMiB(),
      upstream: upstream.ok ? { host: `${UPSTREAM_HOST}:53`, queriesSeen: upstream.asked() } : upstream.reason,
      attacks: {
        wasmEndless: { ...wasm, moduleServer: Object.fromEntries(served) },
        stsChunked: sts,
        dnsTcpPipelining: tcp,
        dnsUdpFlood: udp,
      },
      healthy: { dns, xds },
      log: {
        bytes: Buffer.byteLength(logText),
        bytesDuringAttacks: Buffer.byteLength(logText) - logBytesBefore,
        lines: logText.split("\n").filter((l) => l !== "").length,
      },
      shutdown: {
        stuckClients: stuck.map((c) => c.name),
        leftOpen: notClosed,
        exitCode: exited?.code ?? null,
        signal: exited?.signal ?? null,
        ms: exited === undefined ? null : exited.at - stopAt,
      },
    }
  } finally {
    memory.stop()
    if (exited === undefined) agent.kill("SIGKILL")
    await Effect.runPromise(Scope.close(scope, Exit.void))
    modules.close()
    if (upstream.ok) upstream.close()
  }
}

export type AgentSoakResult = Awaited<ReturnType<typeof runAgentSoak>>

// Run as the soak's worker: report the result (or the failure) to the main thread.
if (!isMainThread && (workerData as { kind?: string } | null)?.kind === "soak-agent") {
  runAgentSoak((workerData as { input: AgentSoakInput }).input).then(
    (result) => parentPort?.postMessage({ type: "result", result }),
    (error: Error) => parentPort?.postMessage({ type: "error", message: String(error?.stack ?? error) }),
  )
}
