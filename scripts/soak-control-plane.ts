/**
 * The hardening soak's second-round attacks on `mesh-discovery` (issue 34), each bounded in
 * count and stopped at the soak's deadline, loopback only:
 * - `nameFlood` (finding 1): reading ADS streams sending 1 MB requests of distinct resource
 *   names (SotW and delta), as fast as flow control lets them, replaced when the server ends them;
 * - `debugRequests` (finding 9, and 6 as far as loopback goes): debug type URLs with a 1 MB path
 *   or a 3 MB query, each of which must get INVALID_ARGUMENT at once, and a proper debug request
 *   that a loopback caller must still be answered;
 * - `logFlood` (finding 4): NACKs from a node id carrying a newline, a forged line and ANSI
 *   escapes, debug paths and webhook bodies carrying the same, unknown debug pages with long
 *   queries; `logShape` then reads the server's log for forged lines, escapes and long lines;
 * - `hostileFiles` / `nestedFile` (findings 5 and 11): a FIFO, /dev/zero behind a link and a link
 *   loop between two files at start, 2 MB of nested flow collections written while the server runs.
 */
import { execFileSync } from "node:child_process"
import { symlinkSync, writeFileSync } from "node:fs"
import * as http2 from "node:http2"
import { Agent, request } from "node:https"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { loadXdsProtos } from "../src/layers/xds/protos.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { ADS_PATH, DELTA_PATH, delay, MiB, openRaw, rawSession, round1, statusCounts } from "./soak-wire.js"

export interface Ports {
  readonly grpc: number
  readonly https: number
  readonly monitoring: number
}

/** The soak's clock: true until its deadline. */
export type Running = () => boolean

const INVALID_ARGUMENT = 3

// ------------------------------------------------------------------------------------------------
// Finding 1: distinct resource names

const NAME_FLOOD_STREAMS = 4
/** Streams each of the flood's slots may open, and requests in all: bounds, the deadline comes first. */
const NAME_FLOOD_OPENS = 200
const NAME_FLOOD_REQUESTS = 20_000

/** 1 MB of distinct names: `count` names of about `MiB / count` characters, unique to `tag`. */
const namesOf = (tag: string, count: number): Array<string> => {
  const pad = "n".repeat(Math.max(1, Math.floor(MiB / count) - tag.length - 16))
  return Array.from({ length: count }, (_, i) => `${tag}-${i}-${pad}`)
}

export const nameFlood = async (ports: Ports, running: Running, node: (name: string) => object) => {
  let requests = 0
  const statuses: Array<number | undefined> = []
  const messages = new Set<string>()
  const types = [TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route, TypeUrl.Cluster]
  const one = async (k: number) => {
    const session = rawSession({ port: ports.grpc }, { reads: true })
    const delta = k % 2 === 1
    for (let opened = 0; running() && opened < NAME_FLOOD_OPENS && !session.destroyed; opened++) {
      const raw = openRaw(session, delta ? DELTA_PATH : ADS_PATH)
      let ended = false
      void raw.closed.then(() => {
        ended = true
      })
      for (let i = 0; running() && !ended && requests < NAME_FLOOD_REQUESTS; i++) {
        const tag = `s${k}-o${opened}-q${i}`
        // Many short names or fewer long ones: both are 1 MB.
        const names = namesOf(tag, i % 2 === 0 ? 20_000 : 2000)
        const typeUrl = types[i % types.length]!
        const sent = delta
          ? await raw.send("DeltaAggregatedResources", {
              node: node(`names-${k}`),
              type_url: typeUrl,
              resource_names_subscribe: names,
            })
          : await raw.send("StreamAggregatedResources", {
              node: node(`names-${k}`),
              type_url: typeUrl,
              resource_names: names,
            })
        if (!sent) break
        requests++
      }
      if (!raw.stream.closed) raw.stream.close(http2.constants.NGHTTP2_CANCEL)
      const outcome = await raw.closed
      statuses.push(outcome.grpcStatus)
      if (outcome.message !== "" && messages.size < 4) messages.add(outcome.message.slice(0, 160))
    }
    session.destroy()
  }
  await Promise.all(Array.from({ length: NAME_FLOOD_STREAMS }, (_, k) => one(k)))
  return { requests, mbSent: requests, streamCloses: statusCounts(statuses), refusals: [...messages] }
}

// ------------------------------------------------------------------------------------------------
// Findings 9 and 6: debug requests over the plaintext xDS port

const DEBUG_NODE = { id: "sidecar~127.0.0.1~soak-debug.mesh-system~mesh-system.svc.cluster.local" }
/**
 * A refusal must come within this once the request has been sent (flushed to the server: flow
 * control lets the last bytes go only as the server reads). Measured from the start, a 3 MB
 * request under the soak's floods takes seconds just to arrive.
 */
const DEBUG_ANSWER_MS = 5000
/** Past this (from the start) a debug request counts as never answered, as before the fix. */
const DEBUG_GIVE_UP_MS = 20_000
const DEBUG_ROUNDS = 10

interface Asked {
  readonly grpcStatus: number | undefined
  /** From the start to the status or answer; undefined when none came. */
  readonly ms: number | undefined
  /** From the request's last byte leaving to the status or answer. */
  readonly afterSentMs: number | undefined
  readonly messageBytes: number
}

/** One debug request on a stream of its own: its status (0 once answered), or a timeout. */
const ask = async (session: http2.ClientHttp2Session, message: object): Promise<Asked> => {
  const raw = openRaw(session, ADS_PATH)
  const started = performance.now()
  let sent: number | undefined
  void raw.send("StreamAggregatedResources", message).then(() => {
    sent ??= performance.now()
  })
  // An answered request leaves its stream open (the answer is one-shot): the first message is it.
  const answered = new Promise<"answered">((resolve) => raw.stream.once("data", () => resolve("answered")))
  const outcome = await Promise.race([raw.closed, answered, delay(DEBUG_GIVE_UP_MS).then(() => undefined)])
  const at = performance.now()
  if (!raw.stream.closed) raw.stream.close(http2.constants.NGHTTP2_CANCEL)
  if (outcome === undefined) return { grpcStatus: undefined, ms: undefined, afterSentMs: undefined, messageBytes: 0 }
  const times = { ms: round1(at - started), afterSentMs: round1(at - (sent ?? at)) }
  if (outcome === "answered") return { grpcStatus: 0, ...times, messageBytes: 0 }
  return { grpcStatus: outcome.grpcStatus, ...times, messageBytes: outcome.message.length }
}

export const debugRequests = async (ports: Ports, running: Running, spacingMs: number) => {
  const cases: Record<string, object> = {
    path1MB: { node: DEBUG_NODE, type_url: `mesh.io/debug/${"p".repeat(MiB)}` },
    query3MB: { node: DEBUG_NODE, type_url: `mesh.io/debug/syncz?q=${"q".repeat(3 * MiB)}` },
    query3MBAsName: {
      node: DEBUG_NODE,
      type_url: "mesh.io/debug/config_dump",
      resource_names: [`proxyID=${"x".repeat(3 * MiB)}`],
    },
    path1MBAsName: { node: DEBUG_NODE, type_url: "mesh.io/debug", resource_names: ["p".repeat(MiB)] },
  }
  const seen: Record<string, Array<Asked>> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
  const proper: Array<Asked> = []
  const session = rawSession({ port: ports.grpc }, { reads: true })
  for (let round = 0; running() && round < DEBUG_ROUNDS; round++) {
    for (const [name, message] of Object.entries(cases)) if (running()) seen[name]!.push(await ask(session, message))
    if (running()) proper.push(await ask(session, { node: DEBUG_NODE, type_url: "mesh.io/debug/syncz" }))
    await delay(spacingMs)
  }
  session.destroy()
  const summary = (answers: ReadonlyArray<Asked>) => ({
    sent: answers.length,
    statuses: statusCounts(answers.map((a) => a.grpcStatus)),
    maxMs: round1(Math.max(0, ...answers.map((a) => a.ms ?? DEBUG_GIVE_UP_MS))),
    maxAfterSentMs: round1(Math.max(0, ...answers.map((a) => a.afterSentMs ?? DEBUG_GIVE_UP_MS))),
    longestMessageBytes: Math.max(0, ...answers.map((a) => a.messageBytes)),
  })
  const oversized = Object.fromEntries(Object.entries(seen).map(([name, answers]) => [name, summary(answers)]))
  return {
    oversized,
    /** Every oversized request got INVALID_ARGUMENT within DEBUG_ANSWER_MS of being sent. */
    everyOversizedRefused:
      Object.values(seen).some((answers) => answers.length > 0) &&
      Object.values(seen).every((answers) =>
        answers.every(
          (a) => a.grpcStatus === INVALID_ARGUMENT && a.afterSentMs !== undefined && a.afterSentMs < DEBUG_ANSWER_MS,
        ),
      ),
    refusedWithinMsOfSending: DEBUG_ANSWER_MS,
    loopbackSyncz: summary(proper),
    remoteCaller:
      "not run: the soak stays on loopback (test/e2e/xds-debug-requests.test.ts calls from another address)",
  }
}

// ------------------------------------------------------------------------------------------------
// Finding 4: a log flood whose text would forge lines and drive the reader's terminal

/** The fake line a forged log entry would start with. */
export const FORGED_TIME = "2026-01-01T00:00:00.000Z"
const forged = (tag: string) => `\n${FORGED_TIME}\tinfo\tFORGED-${tag} \u001b[31mred\u001b[0m\u001b[2J`

const LOG_FLOOD = {
  nacks: 200,
  nackBytes: 16 * 1024,
  debugPaths: 20,
  validateRefusals: 150,
  injectDecodeErrors: 150,
  httpDebug: 50,
}

const protos = loadXdsProtos()
const AdsClient = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")
type Duplex = grpc.ClientDuplexStream<object, { nonce?: string }>
const adsStream = (client: grpc.Client): Duplex =>
  (client as unknown as { StreamAggregatedResources: () => Duplex }).StreamAggregatedResources()
const write = (stream: Duplex, message: object) =>
  new Promise<boolean>((resolve) => stream.write(message, (error: unknown) => resolve(!error)))

/** One stream as a proxy whose node id forges a line, NACKing its clusters. */
const nackFlood = async (ports: Ports, running: Running) => {
  const client = new AdsClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure())
  const stream = adsStream(client)
  stream.on("error", () => undefined)
  let sent = 0
  try {
    const first = new Promise<{ nonce?: string } | undefined>((resolve) => {
      stream.once("data", resolve)
      stream.once("error", () => resolve(undefined))
      setTimeout(() => resolve(undefined), 20_000)
    })
    const node = { id: `sidecar~127.0.0.1~evil${forged("NODE")}.default~default.svc.cluster.local` }
    await write(stream, { node, type_url: TypeUrl.Cluster, resource_names: [] })
    const response = await first
    if (response === undefined) return { nacksSent: 0, firstResponse: false }
    const message = `rejected${forged("NACK")}${"y".repeat(LOG_FLOOD.nackBytes - 64)}`
    for (let i = 0; running() && i < LOG_FLOOD.nacks; i++) {
      const ok = await write(stream, {
        type_url: TypeUrl.Cluster,
        resource_names: [],
        version_info: "",
        response_nonce: response.nonce,
        error_detail: { code: 3, message },
      })
      if (!ok) break
      sent++
    }
    return { nacksSent: sent, firstResponse: true }
  } finally {
    stream.cancel()
    client.close()
  }
}

/** Debug requests over xDS with an invalid path that would forge a line, one stream each. */
const debugPathFlood = async (ports: Ports, running: Running) => {
  const session = rawSession({ port: ports.grpc }, { reads: true })
  const statuses: Array<number | undefined> = []
  for (let i = 0; running() && i < LOG_FLOOD.debugPaths; i++)
    statuses.push(
      (await ask(session, { node: DEBUG_NODE, type_url: `mesh.io/debug/nothing-${i}${forged("DEBUG")}` })).grpcStatus,
    )
  session.destroy()
  return statusCounts(statuses)
}

const post = (agent: Agent, port: number, path: string, body: string) =>
  new Promise<number>((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent,
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
  })

const invalidReview = (i: number) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `uid-${i}`,
      operation: "CREATE",
      resource: { group: "networking.mesh.io", version: "v1", resource: "virtualservices" },
      object: {
        apiVersion: "networking.mesh.io/v1",
        kind: "VirtualService",
        metadata: { name: `r${i}${forged("VALIDATE")}${"n".repeat(2000)}`, namespace: "default" },
        spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" }, weight: 20 }] }] },
      },
    },
  })

const webhookFlood = async (ports: Ports, running: Running) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 })
  try {
    const validate: Array<number> = []
    for (let i = 0; running() && i < LOG_FLOOD.validateRefusals; i++)
      validate.push(await post(agent, ports.https, "/validate", invalidReview(i)))
    const inject: Array<number> = []
    const notJson = `{"x${forged("INJECT")}${"j".repeat(4000)}`
    for (let i = 0; running() && i < LOG_FLOOD.injectDecodeErrors; i++)
      inject.push(await post(agent, ports.https, "/inject", i % 2 === 0 ? notJson : '"not a review"'))
    return { validateStatuses: statusCounts(validate), injectStatuses: statusCounts(inject) }
  } finally {
    agent.destroy()
  }
}

const httpDebugFlood = async (ports: Ports, running: Running) => {
  const statuses: Array<number> = []
  const query = encodeURIComponent(`q${forged("HTTP")}${"h".repeat(6000)}`)
  for (let i = 0; running() && i < LOG_FLOOD.httpDebug; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${ports.monitoring}/debug/nothing-${i}?${query}`, {
        signal: AbortSignal.timeout(10_000),
      })
      await res.arrayBuffer()
      statuses.push(res.status)
    } catch {
      statuses.push(0)
    }
  }
  return statusCounts(statuses)
}

/** Every part of the flood at once, `startAfterMs` into the run (the log's first minutes are start-up). */
export const logFlood = async (ports: Ports, running: Running, startAfterMs: number) => {
  await delay(startAfterMs)
  const [nacks, debugPaths, webhook, httpDebug] = await Promise.all([
    nackFlood(ports, running),
    debugPathFlood(ports, running),
    webhookFlood(ports, running),
    httpDebugFlood(ports, running),
  ])
  return { ...nacks, debugPathStatuses: debugPaths, ...webhook, httpDebugStatuses: httpDebug }
}

/** What the flood could do to a log: forged lines, escapes reaching the reader, long lines. */
export const logShape = (text: string) => {
  const lines = text.split("\n").filter((line) => line !== "")
  return {
    bytes: Buffer.byteLength(text),
    lines: lines.length,
    forgedLines: lines.filter((line) => line.startsWith(FORGED_TIME) || line.startsWith("FORGED")).length,
    escapeCharacters: text.split("\u001b").length - 1 + text.split("\u009b").length - 1,
    longestLineBytes: Math.max(0, ...lines.map((line) => Buffer.byteLength(line))),
    suppressedSummaries: lines.filter((line) => /suppressed \d+ similar line/.test(line)).length,
  }
}

// ------------------------------------------------------------------------------------------------
// Findings 5 and 11: hostile files in --configDir

/** A FIFO, /dev/zero behind a link and a link loop between two files: each skipped with one line. */
export const hostileFiles = (configDir: string) => {
  execFileSync("mkfifo", [join(configDir, "pipe.yaml")])
  symlinkSync("/dev/zero", join(configDir, "zero.yaml"))
  symlinkSync("loop-b.yaml", join(configDir, "loop-a.yaml"))
  symlinkSync("loop-a.yaml", join(configDir, "loop-b.yaml"))
}

/** 2 MB of `[[[...]]]` (a million levels): the finding's file. */
export const nestedFile = (configDir: string) => {
  const levels = 1_000_000
  writeFileSync(join(configDir, "nested.yaml"), `${"[".repeat(levels)}${"]".repeat(levels)}\n`)
}

/** What the server's log says of the hostile files: lines naming each (one expected for each). */
export const hostileFileLines = (log: string) => {
  const lines = log.split("\n")
  const count = (pattern: RegExp) => lines.filter((line) => pattern.test(line)).length
  return {
    fifoLines: count(/pipe\.yaml: not read: /),
    devZeroLines: count(/zero\.yaml: not read: /),
    linkLoopLines: count(/loop-[ab]\.yaml: not read: /),
    nestedRefusalLines: count(/nested\.yaml[^\n]*nested more than \d+ levels/),
  }
}
