/**
 * Hardening soak (issue 16): runs the attacks an unauthenticated caller can make against the
 * built `mesh-discovery` for `--seconds` (60) on loopback, while well-behaved watchers follow a
 * config change every few seconds. Prints JSON.
 *
 *   node dist/scripts/soak-hardening.mjs [--seconds 60] [--change-every 3] [--config-attacks false]
 *
 * Attacks, all at once (every loop is bounded in count and stops at the deadline):
 * - `inboxFlood`: ADS streams over raw HTTP/2 from a client that never reads (the server's
 *   answers cannot complete) sending 1 MB requests as fast as the server takes them;
 * - `slowReaders`: more never-reading streams than PILOT_PUSH_THROTTLE's default, each watching
 *   what the changes touch, re-opened when the server closes them;
 * - `labels`: distinct 1 MB type URLs, NACKs with distinct error text from distinct node ids,
 *   and validation webhook reviews of distinct made-up resources;
 * - `controlz`: reads of `/envj/`, checked for a secret-named variable's value;
 * - `config`: a config directory holding two symlink loops, a YAML alias bomb and an oversized
 *   file, and a large valid file rewritten every few seconds;
 * - `nodeIds`: streams with no node, an empty node id and a 1 MB node id, and 1 MB unknown type
 *   URLs; the status codes and the largest answer are recorded.
 *
 * Measured: the server's peak RSS (VmHWM), the changes each watcher (SotW and delta, the
 * project's own ADS client) received out of those made, `/ready` and `/metrics` answers and
 * latencies, what each attack saw, how long the server took to stop on SIGTERM and its exit code.
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
import { Effect, Exit, Scope } from "effect"
import { loadXdsProtos } from "../src/layers/xds/protos.js"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../src/services/xds-client/client.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const SECONDS = Number(arg("seconds", "60"))
const CHANGE_EVERY_MS = Number(arg("change-every", "3")) * 1000
/** `--config-attacks false` leaves out the config directory's attacks (to measure the others alone). */
const CONFIG_ATTACKS = arg("config-attacks", "true") !== "false"
/** More than PILOT_PUSH_THROTTLE's default on this machine (max(10, 50 × cores)). */
const SLOW_READERS = 120
const SLOW_READER_OPENS = 3000
const FLOOD_STREAMS = 4
const FLOOD_REQUESTS_PER_STREAM = 3000
const MB = 1024 * 1024
const SECRET = "soak-s3cr3t-value"
const ROOT = join(fileURLToPath(import.meta.url), "..", "..", "..")
const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
const DELTA_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"
/** The listener (and route) the watchers follow and the changes touch. */
const LISTENER = "reviews.demo.svc.cluster.local:9080"
const NODE = (name: string) => ({
  id: `sidecar~127.0.0.1~${name}.demo~demo.svc.cluster.local`,
  metadata: { GENERATOR: "grpc" },
})

const started = Date.now()
const deadline = started + SECONDS * 1000
const running = () => Date.now() < deadline
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

const protos = loadXdsProtos()
const ads = protos.ads as unknown as Record<
  string,
  { readonly requestSerialize: (value: object) => Buffer; readonly responseDeserialize: (bytes: Buffer) => object }
>
/** One gRPC message frame: uncompressed flag, big-endian length, the message. */
const frame = (method: "StreamAggregatedResources" | "DeltaAggregatedResources", message: object): Buffer => {
  const body = ads[method]!.requestSerialize(message)
  const head = Buffer.alloc(5)
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

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
const server: ChildProcess = spawn(
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
  { cwd: work, env: { ...process.env, SOAK_API_TOKEN: SECRET }, stdio: "ignore" },
)
let exited: { code: number | null; signal: string | null; at: number } | undefined
server.on("exit", (code, signal) => {
  exited = { code, signal, at: Date.now() }
})

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

const peakRssMiB = () => {
  const status = readFileSync(`/proc/${server.pid}/status`, "utf8")
  const field = (name: string) => Number(/(\d+) kB/.exec(status.split("\n").find((l) => l.startsWith(name)) ?? "")?.[1])
  return { peak: field("VmHWM:") / 1024, now: field("VmRSS:") / 1024 }
}

// ------------------------------------------------------------------------------------------------
// Raw HTTP/2 streams (attacks that a grpc-js client would not make)

interface RawStream {
  readonly stream: http2.ClientHttp2Stream
  readonly closed: Promise<{ grpcStatus: number | undefined; message: string; bytes: number }>
}

/** An ADS stream over `session`; what it read and its final status are reported when it closes. */
const openRaw = (session: http2.ClientHttp2Session, path: string): RawStream => {
  const stream = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
  })
  let bytes = 0
  let grpcStatus: number | undefined
  let message = ""
  const take = (headers: http2.IncomingHttpHeaders) => {
    if (headers["grpc-status"] !== undefined) grpcStatus = Number(headers["grpc-status"])
    if (headers["grpc-message"] !== undefined) message = decodeURIComponent(String(headers["grpc-message"]))
  }
  stream.on("response", take)
  stream.on("trailers", take)
  stream.on("data", (chunk: Buffer) => {
    bytes += chunk.length
  })
  const closed = new Promise<{ grpcStatus: number | undefined; message: string; bytes: number }>((resolve) => {
    stream.on("close", () => resolve({ grpcStatus, message: message.slice(0, 200), bytes }))
    stream.on("error", () => undefined)
  })
  return { stream, closed }
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

const statusCounts = (codes: Array<number | undefined>) => {
  const out: Record<string, number> = {}
  for (const code of codes) out[String(code ?? "none")] = (out[String(code ?? "none")] ?? 0) + 1
  return out
}

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
  return { requestsSent: sent, mbSent: Math.round((sent * 1.0e6) / MB), closesSeen: statusCounts(closes) }
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
    hugeNodeId: { node: { id: "x".repeat(MB) }, type_url: TypeUrl.Cluster },
    malformedNodeId: { node: { id: "~~~" }, type_url: TypeUrl.Cluster },
    hugeUnknownTypeUrl: { node: NODE("unknown-type"), type_url: `type.googleapis.com/${"u".repeat(MB)}` },
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
    const typeUrl = `type.googleapis.com/soak.${i}.${"t".repeat(MB - 64)}`
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

/** Item 5: the process environment through ControlZ. */
const controlz = async () => {
  const env = await get(ports.ctrlz, "/envj/")
  return { envStatus: env.status, envShowsSecret: env.body.includes(SECRET) }
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

const main = async () => {
  await waitReady()
  const readyAt = Date.now() - started
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

  const [flood, slow, ids, label, ctrl] = await Promise.all([inboxFlood(), slowDone, nodeIds(), labels(), controlz()])
  const change = await changes
  await probing
  const finalMetrics = await get(ports.monitoring, "/metrics", 10_000)
  const rss = peakRssMiB()
  await Effect.runPromise(Scope.close(scope, Exit.void))

  const stopAt = Date.now()
  server.kill("SIGTERM")
  for (let i = 0; i < 600 && exited === undefined; i++) await delay(100)
  const log = readFileSync(logFile, "utf8").split("\n")
  const sorted = (xs: Array<number>) => [...xs].sort((a, b) => a - b)
  const pct = (xs: Array<number>, p: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0
  const round = (x: number) => Math.round(x * 10) / 10
  return {
    seconds: SECONDS,
    serverReadyAfterMs: readyAt,
    peakRssMiB: round(rss.peak),
    rssAtEndMiB: round(rss.now),
    watchers: {
      changesMade: change.made,
      deliveredPerWatcher: Object.fromEntries(watching.map((w, i) => [`${w.mode}-${i}`, change.delivered[i]])),
      everyWatcherGotEveryChange: change.delivered.every((d) => d === change.made),
      deliveryMs: {
        p50: round(pct(change.lateMs, 0.5)),
        p99: round(pct(change.lateMs, 0.99)),
        max: round(Math.max(0, ...change.lateMs)),
      },
    },
    ready: {
      probes: probes.ready.length,
      failures: probes.ready.filter((p) => p.status !== 200).length,
      maxMs: round(Math.max(0, ...probes.ready.map((p) => p.ms))),
      p99Ms: round(
        pct(
          probes.ready.map((p) => p.ms),
          0.99,
        ),
      ),
    },
    metrics: {
      probes: probes.metrics.length,
      failures: probes.metrics.filter((p) => p.status !== 200).length,
      maxMs: round(Math.max(0, ...probes.metrics.map((p) => p.ms))),
      finalStatus: finalMetrics.status,
      finalBytes: finalMetrics.body.length,
      finalSeries: finalMetrics.body.split("\n").filter((l) => l !== "" && !l.startsWith("#")).length,
      writeTimeouts: metricSum(finalMetrics.body, "pilot_xds_write_timeout"),
      pushes: metricSum(finalMetrics.body, "pilot_xds_pushes"),
      rejectSeries: finalMetrics.body.split("\n").filter((l) => /^pilot_xds_\w+_reject\{/.test(l)).length,
    },
    attacks: { inboxFlood: flood, slowReaders: slow, nodeIds: ids, labels: label, controlz: ctrl },
    serverLog: {
      lines: log.length,
      errorLines: log.filter((l) => /\berror\b|\tE\t|^E /i.test(l)).length,
      warnLines: log.filter((l) => /\bwarn/i.test(l)).length,
      bytes: log.reduce((n, l) => n + l.length + 1, 0),
    },
    shutdown: {
      exitCode: exited?.code ?? null,
      signal: exited?.signal ?? null,
      ms: exited === undefined ? null : exited.at - stopAt,
    },
    workDir: work,
  }
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`soak failed: ${String(error?.stack ?? error)}\n`)
    server.kill("SIGKILL")
    process.exit(1)
  },
)
