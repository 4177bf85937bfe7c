/**
 * Hardening soak (issues 16 and 34): runs the attacks an unauthenticated caller can make against
 * the built `mesh-discovery` and `mesh-agent` for `--seconds` (60) on loopback, while
 * well-behaved clients keep being served: watchers follow a config change every few seconds, and
 * DNS and xDS clients of the agent keep asking. Prints JSON.
 *
 *   node dist/scripts/soak-hardening.mjs [--seconds 60] [--change-every 3] [--config-attacks false]
 *                                        [--agent false] [--udp-rate 10000]
 *
 * Attacks on the control plane, all at once (every loop is bounded in count and stops at the
 * deadline):
 * - `inboxFlood`: ADS streams over raw HTTP/2 from a client that never reads (the server's
 *   answers cannot complete) sending 1 MB requests as fast as the server takes them;
 * - `slowReaders`: more never-reading streams than PILOT_PUSH_THROTTLE's default, each watching
 *   what the changes touch, re-opened when the server closes them;
 * - `nameFlood`: reading ADS streams sending 1 MB requests of distinct resource names;
 * - `labels`: distinct 1 MB type URLs, NACKs with distinct error text from distinct node ids,
 *   and validation webhook reviews of distinct made-up resources;
 * - `debugRequests`: debug type URLs with a 1 MB path or a 3 MB query, and a proper one;
 * - `logFlood`: NACKs, debug paths, webhook refusals and unknown debug pages whose text carries a
 *   newline, a forged log line and ANSI escapes; the server's log is then read for their traces;
 * - `controlz`: reads of `/envj/`, checked for secret-named variables' values (GITHUB_PAT too);
 * - `config`: a config directory holding two directory link loops, a file link loop, a FIFO,
 *   /dev/zero behind a link, a YAML alias bomb and an oversized file, 2 MB of nested flow
 *   collections written a third of the way in, and a large valid file rewritten now and then;
 * - `nodeIds`: streams with no node, an empty node id and a 1 MB node id, and 1 MB unknown type
 *   URLs; the status codes and the largest answer are recorded.
 * Attacks on the agent (soak-agent.ts, in a worker thread): endless Wasm module bodies, an
 * endless chunked token-exchange body, DNS-over-TCP pipelining without reading, a UDP flood.
 *
 * Measured: each process's peak RSS (VmHWM) and its RSS every 2.5 s (`rssTimelineMiB`), the
 * CPU seconds it got while attacked (the machine may be shared), the changes each watcher (SotW
 * and delta, the project's own ADS client) received out of those made, `/ready` and `/metrics`
 * answers and latencies, the agent's healthy DNS and xDS clients, what each attack saw, log
 * bytes per process, and, with clients that never finish attached (a paused ADS stream,
 * slowloris heads, a stalled TLS handshake), how long each process took to stop on SIGTERM and
 * its exit code. The `bounds` object says whether each target held. `--seconds` counts from the
 * start, start-up included: a short run (15 s) leaves the agent, which takes seconds to become
 * healthy, little or no time under attack, and its bounds then say so (no probes: not held).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import * as http2 from "node:http2"
import * as https from "node:https"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../src/services/xds-client/client.js"
import { type AgentSoakInput, type AgentSoakResult, DNS_PROBE_BOUND_MS, XDS_PROBE_BOUND_MS } from "./soak-agent.js"
import {
  debugRequests,
  hostileFileLines,
  hostileFiles,
  logFlood,
  logShape,
  nameFlood,
  nestedFile,
} from "./soak-control-plane.js"
import {
  ADS_PATH,
  cpuSecondsOf,
  DELTA_PATH,
  delay,
  frame,
  freePort,
  leftOpen,
  MiB,
  openRaw,
  pausedAds,
  percentile,
  round1,
  type StuckClient,
  slowloris,
  stalledHandshake,
  statusCounts,
  watchMemory,
} from "./soak-wire.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const SECONDS = Number(arg("seconds", "60"))
const CHANGE_EVERY_MS = Number(arg("change-every", "3")) * 1000
/** `--config-attacks false` leaves out the config directory's attacks (to measure the others alone). */
const CONFIG_ATTACKS = arg("config-attacks", "true") !== "false"
/** `--agent false` leaves out the agent and its attacks. */
const AGENT = arg("agent", "true") !== "false"
/**
 * Queries a second of the UDP flood on the agent's DNS proxy: the rate at which every lookup
 * timed out before the bounds (issue 34 finding 3). Past what the agent's one socket can take in
 * on a loaded machine, the kernel drops every client's datagrams alike, healthy ones included,
 * which no proxy can prevent: a higher `--udp-rate` measures the machine as much as the agent.
 */
const UDP_RATE = Number(arg("udp-rate", "10000"))
/** More than PILOT_PUSH_THROTTLE's default on this machine (max(10, 50 × cores)). */
const SLOW_READERS = 120
const SLOW_READER_OPENS = 3000
const FLOOD_STREAMS = 4
const FLOOD_REQUESTS_PER_STREAM = 3000
const SECRET = "soak-s3cr3t-value"
const PAT = "ghp_soakpersonalaccesstoken0123456789"
/** The targets: peak RSS of each process under attack. */
const CONTROL_PLANE_BOUND_MIB = 512
const AGENT_BOUND_MIB = 256
/** Past these a process is killed, so a build without the bounds cannot take the machine's memory. */
const CONTROL_PLANE_GUARD_MIB = 1536
const AGENT_GUARD_MIB = 1024
/** mesh-discovery's --shutdownDuration default, and the agent's MINIMUM_DRAIN_DURATION default. */
const SHUTDOWN_DURATION_MS = 10_000
const AGENT_DRAIN_MS = 5000
/** What stopping may take past those: the force-close and the process exit. */
const SHUTDOWN_MARGIN_MS = 1500
const ROOT = join(fileURLToPath(import.meta.url), "..", "..", "..")
/** The listener (and route) the watchers follow and the changes touch. */
const LISTENER = "reviews.demo.svc.cluster.local:9080"
const NODE = (name: string) => ({
  id: `sidecar~127.0.0.1~${name}.demo~demo.svc.cluster.local`,
  metadata: plainToStruct({ GENERATOR: "grpc" }),
})

const started = Date.now()
const deadline = started + SECONDS * 1000
const running = () => Date.now() < deadline
// ------------------------------------------------------------------------------------------------
// The mesh under attack

const work = mkdtempSync(join(tmpdir(), "soak-hardening-"))
const configDir = join(work, "mesh")
cpSync(join(ROOT, "examples/mesh"), configDir, { recursive: true })
if (CONFIG_ATTACKS) {
  // Item 2: a loop to the directory itself and one to its parent from below.
  symlinkSync(".", join(configDir, "loop"))
  mkdirSync(join(configDir, "nested"))
  symlinkSync("..", join(configDir, "nested", "up"))
  // Item 6: nine levels of aliases, each ten times the last (10^9 items if expanded).
  const bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
  for (let i = 1; i < 10; i++) bomb.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(", ")}]`)
  writeFileSync(join(configDir, "bomb.yaml"), `${bomb.join("\n")}\n`)
  // Issue 34 finding 11: a FIFO, /dev/zero behind a link, a link loop between two files.
  hostileFiles(configDir)
}
// Item 6: about 70 MB of valid YAML in one file.
const serviceEntry = (i: number, marker: number) =>
  `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: soak-${i}
  namespace: demo
  labels: {marker: "m${marker}"}
spec:
  hosts: [soak-${i}.example.com]
  location: MESH_EXTERNAL
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: NONE
`
if (CONFIG_ATTACKS)
  writeFileSync(
    join(configDir, "huge.yaml"),
    Array.from({ length: 1 << 18 }, (_, i) => serviceEntry(i, 0)).join("---\n"),
  )
/** A large valid file (2,000 ServiceEntries), rewritten with a new marker now and then. */
const rewriteLarge = (marker: number) =>
  writeFileSync(
    join(configDir, "large.yaml"),
    Array.from({ length: 2000 }, (_, i) => serviceEntry(i, marker)).join("---\n"),
  )
rewriteLarge(0)
const routing = readFileSync(join(configDir, "routing.yaml"), "utf8")
/** A config change every watcher sees: the reviews canary's timeout. */
const changeRoute = (k: number) =>
  writeFileSync(join(configDir, "routing.yaml"), routing.replace("timeout: 2s", `timeout: ${k + 3}s`))

const ports = {
  grpc: await freePort(),
  secure: await freePort(),
  http: await freePort(),
  monitoring: await freePort(),
  https: await freePort(),
  ctrlz: await freePort(),
}
const logFile = join(work, "server.log")
/** mesh-discovery, once the agent's part has written its resources to --configDir (read at start). */
const startServer = (): ChildProcess => {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "bin/mesh-discovery.cjs"),
      "discovery",
      "--configDir",
      configDir,
      "--registries",
      "Mock",
      "--grpcAddr",
      `127.0.0.1:${ports.grpc}`,
      "--secureGRPCAddr",
      `127.0.0.1:${ports.secure}`,
      "--httpAddr",
      `127.0.0.1:${ports.http}`,
      "--monitoringAddr",
      `127.0.0.1:${ports.monitoring}`,
      "--httpsAddr",
      `127.0.0.1:${ports.https}`,
      "--ctrlz_address",
      "127.0.0.1",
      "--ctrlz_port",
      String(ports.ctrlz),
      "--log_target",
      logFile,
    ],
    { cwd: work, env: { ...process.env, SOAK_API_TOKEN: SECRET, GITHUB_PAT: PAT }, stdio: "ignore" },
  )
  child.on("exit", (code, signal) => {
    exited = { code, signal, at: Date.now() }
  })
  return child
}
let server: ChildProcess | undefined
let exited: { code: number | null; signal: string | null; at: number } | undefined

const get = (port: number, path: string, timeoutMs = 10_000) =>
  new Promise<{ status: number; body: string; ms: number }>((resolve) => {
    const t0 = performance.now()
    const req = http.get({ host: "127.0.0.1", port, path, timeout: timeoutMs }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: performance.now() - t0 }),
      )
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", () => resolve({ status: 0, body: "", ms: performance.now() - t0 }))
  })

/** Waits (bounded) until the server answers /ready with 200. */
const waitReady = async () => {
  for (let i = 0; i < 600; i++) {
    if (exited !== undefined) throw new Error(`server exited during start-up (${JSON.stringify(exited)})`)
    if ((await get(ports.http, "/ready", 1000)).status === 200) return
    await delay(100)
  }
  throw new Error("server did not become ready in 60 s")
}

/** Writes `chunk`, waiting for the stream to drain; false once the stream is gone or time is up. */
const writeDrained = (stream: http2.ClientHttp2Stream, chunk: Buffer): Promise<boolean> =>
  new Promise((resolve) => {
    if (stream.destroyed || stream.closed || !running()) return resolve(false)
    if (stream.write(chunk)) return resolve(true)
    const done = (ok: boolean) => {
      clearInterval(check)
      stream.off("drain", onDrain)
      stream.off("close", onClose)
      resolve(ok)
    }
    const onDrain = () => done(true)
    const onClose = () => done(false)
    // The server may never drain the stream again: give up at the deadline.
    const check = setInterval(() => {
      if (!running()) done(false)
    }, 250)
    stream.on("drain", onDrain)
    stream.on("close", onClose)
  })

/**
 * A TCP relay to the ADS port that stops reading the server's side once it has passed on the
 * first 64 KB (settings, headers, a first response): behind it, a client that never reads, whose
 * socket buffers fill until the server's writes can no longer complete.
 */
const nonReadingRelay = (): Promise<number> =>
  new Promise((resolve) => {
    const relay = createServer((client) => {
      const upstream = connect(ports.grpc, "127.0.0.1")
      let passed = 0
      client.pipe(upstream)
      upstream.on("data", (chunk: Buffer) => {
        if (passed < 64 * 1024) client.write(chunk)
        passed += chunk.length
        if (passed >= 64 * 1024) upstream.pause()
      })
      const end = () => {
        client.destroy()
        upstream.destroy()
      }
      client.on("error", end).on("close", end)
      upstream.on("error", end).on("close", end)
    })
    relay.listen(0, "127.0.0.1", () => resolve((relay.address() as { port: number }).port))
    relay.unref()
  })
let relayPort = 0

/** A session whose reads stop after its first 64 KB (see `nonReadingRelay`). */
const nonReadingSession = () => http2.connect(`http://127.0.0.1:${relayPort}`).on("error", () => undefined)

/** Item 1: 1 MB requests into streams whose answers cannot complete. */
const inboxFlood = async () => {
  const names = Array.from({ length: 1024 }, (_, i) => `${"n".repeat(1000)}-${i}`)
  let sent = 0
  const closes: Array<number | undefined> = []
  const one = async (k: number) => {
    const session = nonReadingSession()
    for (let round = 0; running() && round < 20; round++) {
      // Half the streams flood SotW, half delta (subscribing 1 MB of names each time).
      const delta = k % 2 === 1
      const raw = openRaw(session, delta ? DELTA_PATH : ADS_PATH)
      for (let i = 0; running() && i < FLOOD_REQUESTS_PER_STREAM; i++) {
        const node = NODE(`flood-${k}`)
        const request = delta
          ? frame("DeltaAggregatedResources", {
              node,
              type_url: TypeUrl.Cluster,
              resource_names_subscribe: names.map((n) => `${n}-${i}`),
            })
          : frame("StreamAggregatedResources", {
              node,
              type_url: TypeUrl.Cluster,
              resource_names: names,
              version_info: String(i),
            })
        if (!(await writeDrained(raw.stream, request))) break
        sent++
      }
      if (!raw.stream.closed) raw.stream.close(http2.constants.NGHTTP2_CANCEL)
      closes.push((await raw.closed).grpcStatus)
      if (session.destroyed) break
    }
    session.destroy()
  }
  await Promise.all(Array.from({ length: FLOOD_STREAMS }, (_, k) => one(k)))
  return { requestsSent: sent, mbSent: Math.round((sent * 1.0e6) / MiB), closesSeen: statusCounts(closes) }
}

/** Item 3: never-reading streams watching everything, re-opened when closed. */
let slowOpened = 0
const slowReaders = async () => {
  const sessions = Array.from({ length: 6 }, nonReadingSession)
  const closes: Array<number | undefined> = []
  const one = async (k: number) => {
    while (running() && slowOpened < SLOW_READER_OPENS) {
      slowOpened++
      const session = sessions[k % sessions.length]!
      if (session.destroyed) return
      const raw = openRaw(session, ADS_PATH)
      // What every change touches: the watchers' listener and route, and every cluster.
      const node = NODE(`slow-${k}`)
      raw.stream.write(frame("StreamAggregatedResources", { node, type_url: TypeUrl.Cluster }))
      for (const type of [TypeUrl.Listener, TypeUrl.Route])
        raw.stream.write(frame("StreamAggregatedResources", { node, type_url: type, resource_names: [LISTENER] }))
      // It stays open until the server gives up on it or the soak ends.
      const ended = await Promise.race([raw.closed, delay(Math.max(0, deadline - Date.now())).then(() => undefined)])
      if (ended === undefined) {
        raw.stream.close(http2.constants.NGHTTP2_CANCEL)
        return
      }
      closes.push(ended.grpcStatus)
    }
  }
  await Promise.all(Array.from({ length: SLOW_READERS }, (_, k) => one(k)))
  for (const session of sessions) session.destroy()
  // The server's resets do not get past the relay: what it closed is read from its metrics.
  return { streamsOpened: slowOpened, closesSeen: statusCounts(closes) }
}

/** Item 7: streams with bad node ids and huge unknown type URLs (a reading session). */
const nodeIds = async () => {
  const session = http2.connect(`http://127.0.0.1:${ports.grpc}`).on("error", () => undefined)
  const cases: Record<string, object> = {
    noNode: { type_url: TypeUrl.Cluster },
    emptyNodeId: { node: { id: "" }, type_url: TypeUrl.Cluster },
    hugeNodeId: { node: { id: "x".repeat(MiB) }, type_url: TypeUrl.Cluster },
    malformedNodeId: { node: { id: "~~~" }, type_url: TypeUrl.Cluster },
    hugeUnknownTypeUrl: { node: NODE("unknown-type"), type_url: `type.googleapis.com/${"u".repeat(MiB)}` },
  }
  const out: Record<string, { grpcStatus: number | undefined; message: string; bytesAnswered: number }> = {}
  for (const [name, request] of Object.entries(cases)) {
    const raw = openRaw(session, ADS_PATH)
    raw.stream.write(frame("StreamAggregatedResources", request))
    // A refused stream closes at once; an accepted one is closed by us after a moment.
    const ended = await Promise.race([raw.closed, delay(2000).then(() => undefined)])
    if (ended === undefined) raw.stream.close(http2.constants.NGHTTP2_CANCEL)
    const result = ended ?? (await raw.closed)
    out[name] = { grpcStatus: result.grpcStatus, message: result.message, bytesAnswered: result.bytes }
  }
  session.destroy()
  return out
}

/** Item 4: caller-chosen strings where metric labels were made from them. */
const labels = async () => {
  const session = http2.connect(`http://127.0.0.1:${ports.grpc}`).on("error", () => undefined)
  let typeUrls = 0
  let nacks = 0
  for (let i = 0; running() && i < 200; i++) {
    const raw = openRaw(session, ADS_PATH)
    const typeUrl = `type.googleapis.com/soak.${i}.${"t".repeat(MiB - 64)}`
    const ok = await writeDrained(
      raw.stream,
      frame("StreamAggregatedResources", { node: NODE(`label-${i}`), type_url: typeUrl }),
    )
    if (ok) typeUrls++
    // NACK a real response with distinct text from a distinct node.
    await writeDrained(
      raw.stream,
      frame("StreamAggregatedResources", {
        node: NODE(`nack-${i}`),
        type_url: TypeUrl.Cluster,
        response_nonce: "not-a-nonce",
        error_detail: { code: 3, message: `soak rejection ${i} ${"e".repeat(64 * 1024)}` },
      }),
    )
    nacks++
    raw.stream.close(http2.constants.NGHTTP2_CANCEL)
    await raw.closed
  }
  session.destroy()
  let reviews = 0
  const statuses: Array<number> = []
  for (let i = 0; running() && i < 200; i++) {
    const body = JSON.stringify({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: `soak-${i}`,
        kind: { group: `g${i}.soak`, version: "v1", kind: "Soak" },
        resource: { group: `g${i}.soak.${"r".repeat(10_000)}`, version: `v${i}`, resource: `res${i}` },
        operation: "CREATE",
        object: { apiVersion: `g${i}.soak/v1`, kind: "Soak", metadata: { name: `s${i}` } },
      },
    })
    statuses.push(
      await new Promise<number>((resolve) => {
        const req = https.request(
          {
            host: "127.0.0.1",
            port: ports.https,
            path: "/validate",
            method: "POST",
            rejectUnauthorized: false,
            headers: { "content-type": "application/json" },
            timeout: 10_000,
          },
          (res) => {
            res.resume()
            res.on("end", () => resolve(res.statusCode ?? 0))
          },
        )
        req.on("timeout", () => req.destroy())
        req.on("error", () => resolve(0))
        req.end(body)
      }),
    )
    reviews++
  }
  return {
    distinctTypeUrls: typeUrls,
    distinctNacks: nacks,
    webhookReviews: reviews,
    webhookStatuses: statusCounts(statuses),
  }
}

/** Item 5 and issue 34 finding 11: the process environment through ControlZ. */
const controlz = async () => {
  const env = await get(ports.ctrlz, "/envj/")
  return {
    envStatus: env.status,
    envShowsSecret: env.body.includes(SECRET),
    envShowsGithubPat: env.body.includes(PAT),
    githubPatRedacted: env.body.includes("GITHUB_PAT=<redacted>"),
  }
}

// ------------------------------------------------------------------------------------------------
// Well-behaved watchers and the changes they must all receive

const watchers = async (scope: Scope.Scope) => {
  const out: Array<{ readonly mode: "sotw" | "delta"; readonly client: AdsClientShape }> = []
  for (const mode of ["sotw", "delta", "sotw", "delta"] as const) {
    const client = await Effect.runPromise(
      makeAdsClient({ address: `127.0.0.1:${ports.grpc}`, mode, node: NODE(`watcher-${out.length}`) as never }).pipe(
        Scope.extend(scope),
      ),
    )
    await Effect.runPromise(client.subscribe(TypeUrl.Listener, [LISTENER]))
    await Effect.runPromise(client.subscribe(TypeUrl.Route, [LISTENER]))
    out.push({ mode, client })
  }
  return out
}

/** The route version a watcher holds (a resource's version is the digest of its content). */
const routeVersion = async (client: AdsClientShape) =>
  (await Effect.runPromise(client.snapshot)).types.get(TypeUrl.Route)?.resources.get(LISTENER)?.version

/** The sum of a metric's samples in Prometheus text (every label set). */
const metricSum = (text: string, name: string): number =>
  text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)

// ------------------------------------------------------------------------------------------------
// The agent's part, in a worker thread (its floods and its clients' clocks get an event loop of their own)

type AgentOutcome = { readonly result: AgentSoakResult } | { readonly error: string }
let agentPid: number | undefined

/**
 * Starts the agent's part: `configWritten` resolves once its mesh resources are in --configDir
 * (or it failed), `done` with its result. The agent starts at once, alongside mesh-discovery.
 */
const agentSoak = () => {
  let configWritten: () => void = () => undefined
  const written = new Promise<void>((resolve) => {
    configWritten = resolve
  })
  const done = new Promise<AgentOutcome>((resolve) => {
    const input: AgentSoakInput = {
      deadline,
      work,
      configDir,
      grpcPort: ports.grpc,
      securePort: ports.secure,
      udpRate: UDP_RATE,
      guardMiB: AGENT_GUARD_MIB,
    }
    const worker = new Worker(join(ROOT, "dist/scripts/soak-agent.mjs"), { workerData: { kind: "soak-agent", input } })
    worker.on(
      "message",
      (
        message:
          | { type: "config" }
          | { type: "pid"; pid: number }
          | { type: "result"; result: AgentSoakResult }
          | { type: "error"; message: string },
      ) => {
        if (message.type === "config") configWritten()
        else if (message.type === "pid") agentPid = message.pid
        else {
          void worker.terminate()
          resolve(message.type === "result" ? { result: message.result } : { error: message.message })
        }
      },
    )
    worker.on("error", (error) => resolve({ error: String(error?.stack ?? error) }))
    worker.on("exit", (code) => resolve({ error: `the agent's worker exited (${code}) without a result` }))
  })
  return { configWritten: Promise.race([written, done.then(() => undefined)]), done }
}

// ------------------------------------------------------------------------------------------------

const main = async () => {
  const agentPart = AGENT ? agentSoak() : undefined
  if (agentPart !== undefined) await agentPart.configWritten
  const meshd = startServer()
  server = meshd
  await waitReady()
  const readyAt = Date.now() - started
  const cpMemory = watchMemory(meshd.pid!, CONTROL_PLANE_GUARD_MIB)
  const agentDone = agentPart?.done ?? Promise.resolve(undefined)
  relayPort = await nonReadingRelay()
  // The slow readers come first: a push serves connections in the order they registered, and
  // a well-behaved watcher must still get every push when it is queued behind all of them.
  const slowDone = slowReaders()
  for (let i = 0; i < 100 && slowOpened < SLOW_READERS; i++) await delay(50)
  await delay(1000)
  const scope = Effect.runSync(Scope.make())
  const watching = await watchers(scope)
  for (const w of watching)
    await Effect.runPromise(
      w.client.waitFor((s) => s.types.get(TypeUrl.Route)?.resources.has(LISTENER) === true, "20 seconds"),
    )
  const attacksFrom = Date.now()
  const cpuBefore = cpuSecondsOf(meshd.pid!)

  const probes = {
    ready: [] as Array<{ status: number; ms: number }>,
    metrics: [] as Array<{ status: number; ms: number }>,
  }
  const probing = (async () => {
    let tick = 0
    while (running()) {
      const ready = await get(ports.http, "/ready", 5000)
      probes.ready.push({ status: ready.status, ms: ready.ms })
      if (tick++ % 5 === 0) {
        const metrics = await get(ports.monitoring, "/metrics", 10_000)
        probes.metrics.push({ status: metrics.status, ms: metrics.ms })
      }
      await delay(200)
    }
  })()

  const changes = (async () => {
    let made = 0
    const delivered = watching.map(() => 0)
    const lateMs: Array<number> = []
    for (let k = 0; Date.now() + CHANGE_EVERY_MS < deadline; k++) {
      await delay(CHANGE_EVERY_MS)
      const before = await Promise.all(watching.map((w) => routeVersion(w.client)))
      const t0 = Date.now()
      changeRoute(k)
      if (k % 3 === 0) rewriteLarge(k + 1)
      made++
      await Promise.all(
        watching.map(async (w, i) => {
          const got = await Effect.runPromise(
            w.client
              .waitFor((s) => {
                const v = s.types.get(TypeUrl.Route)?.resources.get(LISTENER)?.version
                return v !== undefined && v !== before[i]
              }, "20 seconds")
              .pipe(Effect.either),
          )
          if (got._tag === "Right") {
            delivered[i]!++
            lateMs.push(Date.now() - t0)
          }
        }),
      )
    }
    return { made, delivered, lateMs }
  })()

  // Issue 34 finding 5: the nested file arrives a third of the way into the attacks.
  const nested = (async () => {
    if (!CONFIG_ATTACKS) return false
    await delay(Math.max(0, (deadline - attacksFrom) / 3))
    if (!running()) return false
    nestedFile(configDir)
    return true
  })()

  const [flood, slow, ids, label, ctrl, names, debug, logs, nestedWritten] = await Promise.all([
    inboxFlood(),
    slowDone,
    nodeIds(),
    labels(),
    controlz(),
    nameFlood(ports, running, NODE),
    debugRequests(ports, running, 2000),
    logFlood(ports, running, 2000),
    nested,
  ])
  const change = await changes
  await probing
  const finalMetrics = await get(ports.monitoring, "/metrics", 10_000)
  const cpPeak = cpMemory.peakMiB()
  const cpCpu = round1(cpuSecondsOf(meshd.pid!) - cpuBefore)
  const rssAtEnd = (() => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${meshd.pid}/status`, "utf8"))?.[1]) / 1024
    } catch {
      return Number.NaN
    }
  })()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  // Issue 34 finding 10: clients that never finish, held across SIGTERM.
  const stuck: Array<StuckClient> = []
  const stuckFailures: Array<string> = []
  for (const attach of [
    () => pausedAds("paused ADS stream", { port: ports.grpc }, NODE("stuck")),
    () => slowloris("slowloris http", ports.http),
    () => slowloris("slowloris webhook", ports.https, true),
    () => stalledHandshake("stalled TLS handshake secure gRPC", ports.secure),
    () => stalledHandshake("stalled TLS handshake webhook", ports.https),
  ])
    await attach().then(
      (client) => stuck.push(client),
      (e: Error) => stuckFailures.push(e.message),
    )
  const stopAt = Date.now()
  meshd.kill("SIGTERM")
  for (let i = 0; i < 600 && exited === undefined; i++) await delay(100)
  if (exited === undefined) meshd.kill("SIGKILL")
  cpMemory.stop()
  const notClosed = await leftOpen(stuck, 2000)
  const agent = await agentDone

  const logText = readFileSync(logFile, "utf8")
  const log = logText.split("\n")
  const cpLog = logShape(logText)
  const cpShutdown = {
    stuckClients: stuck.map((c) => c.name),
    notAttached: stuckFailures,
    leftOpen: notClosed,
    exitCode: exited?.code ?? null,
    signal: exited?.signal ?? null,
    ms: exited === undefined ? null : exited.at - stopAt,
  }
  const agentResult = agent !== undefined && "result" in agent ? agent.result : undefined
  const dnsProbes = Object.values(agentResult?.healthy.dns.lookups ?? {})
  const xdsProbes = agentResult?.healthy.xds
  const agentShutdown = agentResult?.shutdown
  const bounds = {
    controlPlanePeakRss: {
      limitMiB: CONTROL_PLANE_BOUND_MIB,
      peakMiB: round1(cpPeak),
      held: cpPeak < CONTROL_PLANE_BOUND_MIB && cpMemory.killedAfterMs() === undefined,
    },
    agentPeakRss: {
      limitMiB: AGENT_BOUND_MIB,
      peakMiB: agentResult?.peakRssMiB ?? null,
      held: agentResult !== undefined && agentResult.peakRssMiB < AGENT_BOUND_MIB,
    },
    everyWatcherGotEveryChange: {
      made: change.made,
      held: change.made > 0 && change.delivered.every((d) => d === change.made),
    },
    everyHealthyDnsClientServed: {
      withinMs: DNS_PROBE_BOUND_MS,
      probes: dnsProbes.reduce((n, p) => n + p.probes, 0),
      servedWithinBound: dnsProbes.reduce((n, p) => n + p.withinBound, 0),
      // What to read a miss against: datagrams the kernel dropped because the agent did not read
      // its socket in time (they hit every client alike), and the CPU the agent got meanwhile.
      kernelDropsAtAgentSocket: agentResult?.attacks.dnsUdpFlood.droppedByKernelAtAgentSocket ?? null,
      agentCpuSeconds: agentResult?.cpuSecondsDuringAttacks ?? null,
      attackSeconds: agentResult?.attackSeconds ?? null,
      held: dnsProbes.length > 0 && dnsProbes.every((p) => p.probes > 0 && p.withinBound === p.probes),
    },
    everyHealthyXdsClientServed: {
      withinMs: XDS_PROBE_BOUND_MS,
      newClients: xdsProbes?.newClients ?? 0,
      served: xdsProbes?.served ?? 0,
      longLivedStillHolds: xdsProbes?.longLivedStillHolds ?? false,
      held:
        xdsProbes !== undefined &&
        xdsProbes.newClients > 0 &&
        xdsProbes.served === xdsProbes.newClients &&
        xdsProbes.longLivedStillHolds,
    },
    // Beyond the "done when": the other targets of its findings.
    readyAlwaysAnswered: { held: probes.ready.length > 0 && probes.ready.every((p) => p.status === 200) },
    oversizedDebugRefused: { withinMsOfSending: debug.refusedWithinMsOfSending, held: debug.everyOversizedRefused },
    noForgedLogLine: { held: cpLog.forgedLines === 0 && cpLog.escapeCharacters === 0 },
    controlPlaneStopsInTime: {
      withinMs: SHUTDOWN_DURATION_MS + SHUTDOWN_MARGIN_MS,
      held:
        cpShutdown.exitCode === 0 &&
        cpShutdown.ms !== null &&
        cpShutdown.ms <= SHUTDOWN_DURATION_MS + SHUTDOWN_MARGIN_MS,
    },
    agentStopsInTime: {
      withinMs: AGENT_DRAIN_MS + SHUTDOWN_MARGIN_MS,
      held:
        agentShutdown?.exitCode === 0 &&
        agentShutdown.ms !== null &&
        agentShutdown.ms <= AGENT_DRAIN_MS + SHUTDOWN_MARGIN_MS,
    },
  }
  const sorted = (xs: Array<number>) => [...xs].sort((a, b) => a - b)
  const pct = (xs: Array<number>, p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0
  return {
    seconds: SECONDS,
    attackSeconds: Math.max(0, round1((deadline - attacksFrom) / 1000)),
    bounds: { ...bounds, allHeld: Object.values(bounds).every((b) => b.held) },
    controlPlane: {
      readyAfterMs: readyAt,
      peakRssMiB: round1(cpPeak),
      rssAtEndMiB: round1(rssAtEnd),
      killedByGuardAfterMs: cpMemory.killedAfterMs() ?? null,
      cpuSecondsDuringAttacks: cpCpu,
      rssTimelineMiB: cpMemory.timelineMiB(),
      watchers: {
        changesMade: change.made,
        deliveredPerWatcher: Object.fromEntries(watching.map((w, i) => [`${w.mode}-${i}`, change.delivered[i]])),
        deliveryMs: {
          p50: round1(pct(change.lateMs, 0.5)),
          p99: round1(pct(change.lateMs, 0.99)),
          max: round1(Math.max(0, ...change.lateMs)),
        },
      },
      ready: {
        probes: probes.ready.length,
        failures: probes.ready.filter((p) => p.status !== 200).length,
        maxMs: round1(Math.max(0, ...probes.ready.map((p) => p.ms))),
        p99Ms: round1(
          percentile(
            probes.ready.map((p) => p.ms),
            0.99,
          ),
        ),
      },
      metrics: {
        probes: probes.metrics.length,
        failures: probes.metrics.filter((p) => p.status !== 200).length,
        maxMs: round1(Math.max(0, ...probes.metrics.map((p) => p.ms))),
        finalStatus: finalMetrics.status,
        finalBytes: finalMetrics.body.length,
        finalSeries: finalMetrics.body.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length,
        writeTimeouts: metricSum(finalMetrics.body, "pilot_xds_write_timeout"),
        pushes: metricSum(finalMetrics.body, "pilot_xds_pushes"),
        rejectSeries: finalMetrics.body.split("\n").filter((l) => /^pilot_xds_\w+_reject\{/.test(l)).length,
      },
      attacks: {
        inboxFlood: flood,
        slowReaders: slow,
        nameFlood: names,
        nodeIds: ids,
        labels: label,
        debugRequests: debug,
        logFlood: logs,
        controlz: ctrl,
        config: CONFIG_ATTACKS ? { nestedFileWritten: nestedWritten, ...hostileFileLines(logText) } : "off",
      },
      log: {
        ...cpLog,
        errorLines: log.filter((l) => /\berror\b|\tE\t|^E /i.test(l)).length,
        warnLines: log.filter((l) => /\bwarn/i.test(l)).length,
      },
      shutdown: cpShutdown,
    },
    agent: agent === undefined ? "off" : "result" in agent ? agent.result : { error: agent.error },
    workDir: work,
  }
}

const killAgent = () => {
  if (agentPid === undefined) return
  try {
    process.kill(agentPid, "SIGKILL")
  } catch {
    // already gone
  }
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`soak failed: ${String(error?.stack ?? error)}\n`)
    server?.kill("SIGKILL")
    killAgent()
    process.exit(1)
  },
)
