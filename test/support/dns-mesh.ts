/**
 * The agent's DNS proxy end to end: the built `mesh-discovery` on the in-process orchestrator
 * (Services, EndpointSlices and ServiceEntry custom resources) as control plane and CA, the built
 * `mesh-agent proxy` (proxyless, DNS capture on) reading a resolv.conf of the test's, a stand-in
 * upstream nameserver on 127.0.0.153:53 (resolv.conf nameservers are always on port 53, so
 * binding it needs root or CAP_NET_BIND_SERVICE: `upstreamUnavailable` says why not), an ADS
 * client on the agent's socket announcing a DNS-capturing sidecar (so the agent subscribes to
 * the name table), and the real `dig`.
 */
import { execFile } from "node:child_process"
import { createSocket, type Socket as UdpSocket } from "node:dgram"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import dnsPacket, { type DecodedPacket } from "dns-packet"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs } from "./discovery.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "./orchestrator/index.js"
import { meshCustomResources } from "./orchestrator/mesh-crds.js"
import { freePort } from "./ports.js"
import { type Daemon, startDaemon } from "./processes.js"

/** Where the stand-in upstream listens (a loopback address of its own, port 53). */
export const UPSTREAM_HOST = "127.0.0.153"

/** The stand-in upstream nameserver: what it was asked, over which transport. */
export interface Upstream {
  readonly seen: Array<{ readonly name: string; readonly transport: "udp" | "tcp" }>
  readonly close: () => Promise<void>
}

/**
 * A nameserver on 127.0.0.153:53 (UDP and TCP): `answers` maps names to an IPv4 address, names
 * starting with `silent` are never answered (they hold the proxy's slots until its upstream
 * timeout), everything else is NXDOMAIN. Fails when port 53 cannot be bound.
 */
export const startUpstream = async (answers: Readonly<Record<string, string>>): Promise<Upstream> => {
  const seen: Upstream["seen"] = []
  const reply = (query: DecodedPacket): Buffer | undefined => {
    const question = query.questions[0]
    if (question === undefined || question.name.startsWith("silent")) return undefined
    const ip = answers[question.name.toLowerCase()]
    const known = ip !== undefined && question.type === "A"
    return dnsPacket.encode({
      id: query.id,
      type: "response",
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (ip === undefined ? 3 : 0),
      questions: [question],
      answers: known ? [{ name: question.name, type: "A", ttl: 60, data: ip }] : [],
    })
  }
  const udp: UdpSocket = createSocket("udp4")
  udp.on("message", (bytes, from) => {
    let query: DecodedPacket
    try {
      query = dnsPacket.decode(bytes)
    } catch {
      return
    }
    // the flood's names are not recorded: the list would grow with the attack
    const name = query.questions[0]?.name ?? ""
    if (!name.startsWith("silent")) seen.push({ name, transport: "udp" })
    const answer = reply(query)
    if (answer !== undefined) udp.send(answer, from.port, from.address)
  })
  const tcp: Server = createServer((socket) => {
    let pending = Buffer.alloc(0)
    socket.on("data", (chunk) => {
      pending = Buffer.concat([pending, chunk])
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const query = dnsPacket.decode(pending.subarray(2, 2 + pending.readUInt16BE(0)))
        pending = pending.subarray(2 + pending.readUInt16BE(0))
        const name = query.questions[0]?.name ?? ""
        if (!name.startsWith("silent")) seen.push({ name, transport: "tcp" })
        const answer = reply(query)
        if (answer === undefined) continue
        const length = Buffer.alloc(2)
        length.writeUInt16BE(answer.length)
        socket.write(Buffer.concat([length, answer]))
      }
    })
    socket.on("error", () => {})
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
    seen,
    close: async () => {
      udp.close()
      await new Promise<void>((resolve) => tcp.close(() => resolve()))
    },
  }
}

/** Why the stand-in upstream cannot run here, or undefined when it can. */
export const upstreamUnavailable = async (): Promise<string | undefined> => {
  try {
    const probe = await startUpstream({})
    await probe.close()
    return undefined
  } catch (e) {
    return `cannot bind ${UPSTREAM_HOST}:53 for the stand-in upstream nameserver (needs root or CAP_NET_BIND_SERVICE): ${(e as Error).message}`
  }
}

/** What the agent needs of a control plane: its addresses, the CA root it published, a token. */
export interface AgentControlPlane {
  /** Plaintext ADS address of mesh-discovery. */
  readonly ads: string
  /** Its secure gRPC port (the CA). */
  readonly securePort: number
  /** The root certificate meshd published in the `default` namespace, once it has. */
  readonly rootCert: () => Promise<string | undefined>
  /** A token for `system:serviceaccount:default:app` with the `mesh-ca` audience. */
  readonly appToken: () => Promise<string>
}

export interface ControlPlane extends AgentControlPlane {
  readonly orchestrator: Orchestrator
  readonly discovery: Daemon
  readonly close: () => Promise<void>
}

/**
 * mesh-discovery on a fresh in-process orchestrator holding `objects`; `binary` is its name under
 * bin/ (a path relative to it measures another build).
 */
export const startControlPlane = async (
  objects: ReadonlyArray<KubeObject>,
  binary = "mesh-discovery",
): Promise<ControlPlane> => {
  const orchestrator = await startOrchestrator({ customResources: meshCustomResources(), token: "meshd-token" })
  orchestrator.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } })
  for (const object of objects) orchestrator.put(object)
  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orchestrator.kubeconfig() }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  const discovery = startDaemon(binary, args, {
    POD_NAME: "meshd-a",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "200ms",
  })
  const ads = (await discovery.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
  const securePort = Number((await discovery.waitFor(/secure gRPC listener on [\d.]+:(\d+)/, 30_000))[1])
  return {
    orchestrator,
    discovery,
    ads,
    securePort,
    rootCert: async () =>
      (
        orchestrator.get("v1", "ConfigMap", "default", "mesh-ca-root-cert") as
          | { data?: Record<string, string> }
          | undefined
      )?.data?.["root-cert.pem"],
    appToken: async () => {
      orchestrator.addToken(
        "app-token",
        { username: "system:serviceaccount:default:app", groups: ["system:serviceaccounts"] },
        ["mesh-ca"],
      )
      return "app-token"
    },
    close: async () => {
      await discovery.stop("SIGKILL")
      await orchestrator.close()
    },
  }
}

/** Polls `check` until it returns a value other than undefined. */
export const until = async <A>(what: string, check: () => Promise<A | undefined> | A | undefined, ms = 20_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

export interface DigResult {
  readonly status: string | undefined
  readonly flags: ReadonlyArray<string>
  /** Answer records as `name type data` (names with their root dot, as dig prints them). */
  readonly answers: ReadonlyArray<string>
  /** Milliseconds dig took. */
  readonly millis: number
  readonly output: string
}

export interface Agent {
  readonly daemon: Daemon
  readonly dnsPort: number
  /** The real dig against the agent's DNS proxy (`+tries=1 +time=2` unless given). */
  readonly dig: (...args: ReadonlyArray<string>) => Promise<DigResult>
  /** The agent's peak resident memory (VmHWM), in MiB. */
  readonly peakRssMiB: () => number
  /** A counter of the agent's metrics (its status port's /stats/prometheus), 0 when absent. */
  readonly metric: (name: string) => Promise<number>
  readonly close: () => Promise<void>
}

export interface AgentOptions {
  /** resolv.conf text (written to a file passed as DNS_PROXY_RESOLV_CONF). */
  readonly resolvConf: string
  /** More environment (DNS_PROXY_* bounds). */
  readonly env?: Readonly<Record<string, string>>
  /** The binary's name under bin/ (a path relative to it measures another build). */
  readonly binary?: string
}

const digOnce = (port: number, args: ReadonlyArray<string>): Promise<DigResult> => {
  const started = Date.now()
  return new Promise((resolve) => {
    execFile(
      "dig",
      ["@127.0.0.1", "-p", String(port), "+tries=1", "+time=2", ...args],
      { timeout: 30_000 },
      (_error, stdout) => {
        const output = String(stdout)
        const answers: Array<string> = []
        let inAnswer = false
        for (const line of output.split("\n")) {
          if (line.startsWith(";; ANSWER SECTION")) inAnswer = true
          else if (line.trim() === "" || line.startsWith(";;")) inAnswer = false
          else if (inAnswer) {
            const [name, , , type, ...data] = line.split(/\s+/)
            answers.push(`${name} ${type} ${data.join(" ")}`)
          }
        }
        resolve({
          status: /status: (\w+)/.exec(output)?.[1],
          flags: /;; flags: ([a-z ]+);/.exec(output)?.[1]?.split(" ") ?? [],
          answers,
          millis: Date.now() - started,
          output,
        })
      },
    )
  })
}

/** Peak resident set (VmHWM) of process `pid`, in MiB. */
export const peakRssMiB = (pid: number): number => {
  const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return line === null ? Number.NaN : Number(line[1]) / 1024
}

/**
 * The built mesh-agent in `default` (service account `app`), its DNS proxy on a free loopback
 * port, fed by `cp` once the ADS client on its socket has asked for clusters.
 */
export const startAgent = async (cp: AgentControlPlane, options: AgentOptions): Promise<Agent> => {
  const dir = mkdtempSync(join(tmpdir(), "mesh-agent-dns-"))
  mkdirSync(join(dir, "etc/mesh/config"), { recursive: true })
  mkdirSync(join(dir, "var/run/secrets/mesh"), { recursive: true })
  const root = await until("the CA root in the default namespace", () => cp.rootCert())
  writeFileSync(join(dir, "var/run/secrets/mesh/root-cert.pem"), root)
  writeFileSync(join(dir, "token"), await cp.appToken())
  writeFileSync(join(dir, "resolv.conf"), options.resolvConf)
  writeFileSync(
    join(dir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: ${cp.ads}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  const dnsPort = await freePort()
  const statusPort = await freePort()
  const daemon = startDaemon(
    options.binary ?? "mesh-agent",
    ["proxy"],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${cp.securePort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(dir, "token"),
      POD_NAME: "app-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "app",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(await freePort()),
      STATUS_PORT: String(statusPort),
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      MESH_META_DNS_CAPTURE: "true",
      DNS_PROXY_ADDR: `127.0.0.1:${dnsPort}`,
      DNS_PROXY_RESOLV_CONF: join(dir, "resolv.conf"),
      ...options.env,
    },
    dir,
  )
  await daemon.waitFor(/DNS proxy listening on/, 30_000)
  await daemon.waitFor(/gRPC xDS bootstrap written/, 30_000)
  // The workload's ADS stream through the agent: the agent then asks for the name table.
  const scope = await Effect.runPromise(Scope.make())
  const client = await Effect.runPromise(
    makeAdsClient({
      address: `unix://${join(dir, "etc/mesh/proxy/XDS")}`,
      mode: "sotw",
      node: {
        id: "sidecar~127.0.0.1~app-1.default~default.svc.cluster.local",
        metadata: plainToStruct({ NAMESPACE: "default", INSTANCE_IPS: "127.0.0.1", DNS_CAPTURE: "true" }),
      },
    }).pipe(Scope.extend(scope)),
  )
  await Effect.runPromise(client.subscribe(TypeUrl.Cluster))
  return {
    daemon,
    dnsPort,
    dig: (...args) => digOnce(dnsPort, args),
    peakRssMiB: () => peakRssMiB(daemon.process.pid!),
    metric: async (name) => {
      const page = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text()
      return Number(page.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m"))?.[1] ?? "0")
    },
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await daemon.stop("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** resolv.conf of a pod in `default`, forwarding to the stand-in upstream. */
export const POD_RESOLV_CONF = `search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver ${UPSTREAM_HOST}\noptions ndots:5\n`
