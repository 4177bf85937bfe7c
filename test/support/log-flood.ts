/**
 * A log flood against a running `mesh-discovery` (issue 34 item 4), as one client would send it:
 * refused requests on every listener that logs them, each carrying text that would forge a log
 * line (a newline followed by a fake timestamped line) or drive the reader's terminal (ANSI
 * escapes), some of it megabytes long. Every loop is bounded in count; every target is loopback.
 */

import { Agent, request } from "node:https"
import * as grpc from "@grpc/grpc-js"
import { loadXdsProtos } from "../../src/layers/xds/protos.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"

/** The fake line a forged log entry would start with. */
export const FORGED_TIME = "2026-01-01T00:00:00.000Z"
const forged = (tag: string) => `\n${FORGED_TIME}\tinfo\tFORGED-${tag} \u001b[31mred\u001b[0m\u001b[2J`

export interface FloodPorts {
  readonly grpc: number
  readonly https: number
  readonly monitoring: number
}

export interface FloodCounts {
  /** NACKs on one stream, each with a long error_detail message. */
  readonly nacks: number
  /** Bytes of each NACK's message. */
  readonly nackBytes: number
  /** Debug requests over xDS with an invalid path that would forge a line (one stream each). */
  readonly debugPaths: number
  /** Debug requests over xDS with a huge query (`proxyID` of `debugQueryBytes`). */
  readonly debugQueries: number
  readonly debugQueryBytes: number
  /** AdmissionReviews of an invalid resource whose name would forge a line. */
  readonly validateRefusals: number
  /** /inject bodies that are not JSON. */
  readonly injectDecodeErrors: number
  /** GETs of unknown debug pages with a long query on the monitoring listener. */
  readonly httpDebug: number
}

export interface FloodResult {
  /** NACKs the server counted (`pilot_total_xds_rejects`): how many reached the log site. */
  readonly nacksCounted: number
  readonly debugStatuses: ReadonlyArray<number | undefined>
  readonly validateStatuses: ReadonlyArray<number>
  readonly injectStatuses: ReadonlyArray<number>
  readonly httpStatuses: ReadonlyArray<number>
}

const protos = loadXdsProtos()
const AdsClient = grpc.makeClientConstructor(protos.ads, "AggregatedDiscoveryService")

type Duplex = grpc.ClientDuplexStream<object, { version_info?: string; nonce?: string }>

const openStream = (client: grpc.Client): Duplex =>
  (client as unknown as { StreamAggregatedResources: () => Duplex }).StreamAggregatedResources()

const write = (stream: Duplex, message: object) =>
  new Promise<void>((resolve, reject) => stream.write(message, (error: unknown) => (error ? reject(error) : resolve())))

const rejectsCounted = async (monitoring: number): Promise<number> => {
  const text = await (await fetch(`http://127.0.0.1:${monitoring}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith('pilot_total_xds_rejects{type="cds"}'))
  return line === undefined ? 0 : Number(line.split(" ").pop())
}

/** Waits (polling, never a blind sleep) until `read` returns the same value twice 250 ms apart or `target`. */
const settled = async (read: () => Promise<number>, target: number, withinMs: number): Promise<number> => {
  const deadline = Date.now() + withinMs
  let last = -1
  for (;;) {
    const now = await read()
    if (now >= target || (now === last && now > 0) || Date.now() > deadline) return now
    last = now
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** One stream as a proxy whose node id forges a line, NACKing its clusters `count` times. */
const nackFlood = async (ports: FloodPorts, counts: FloodCounts): Promise<number> => {
  const client = new AdsClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure())
  const stream = openStream(client)
  stream.on("error", () => undefined)
  try {
    const first = new Promise<{ version_info?: string; nonce?: string }>((resolve, reject) => {
      stream.once("data", resolve)
      stream.once("error", reject)
    })
    const node = { id: `sidecar~10.0.0.9~evil${forged("NODE")}.default~default.svc.cluster.local` }
    await write(stream, { node, type_url: TypeUrl.Cluster, resource_names: [] })
    const response = await first
    const message = `rejected${forged("NACK")}${"y".repeat(Math.max(0, counts.nackBytes - 64))}`
    for (let i = 0; i < counts.nacks; i++)
      await write(stream, {
        type_url: TypeUrl.Cluster,
        resource_names: [],
        version_info: "",
        response_nonce: response.nonce,
        error_detail: { code: 3, message },
      })
    return await settled(() => rejectsCounted(ports.monitoring), counts.nacks, 20_000)
  } finally {
    stream.cancel()
    client.close()
  }
}

/** One debug request on a stream of its own; resolves with the status the stream ended with. */
const debugRequest = (client: grpc.Client, typeUrl: string, names: ReadonlyArray<string>) =>
  new Promise<number | undefined>((resolve) => {
    const stream = openStream(client)
    const timer = setTimeout(() => finish(undefined), 15_000)
    const finish = (code: number | undefined) => {
      clearTimeout(timer)
      stream.removeAllListeners()
      stream.on("error", () => undefined)
      stream.cancel()
      resolve(code)
    }
    stream.on("data", () => finish(0))
    stream.on("error", (e: grpc.ServiceError) => finish(e.code))
    stream.on("end", () => finish(0))
    stream.write({
      node: { id: "sidecar~127.0.0.1~debug.default~default.svc.cluster.local" },
      type_url: typeUrl,
      resource_names: names,
    })
  })

const debugFlood = async (ports: FloodPorts, counts: FloodCounts) => {
  const client = new AdsClient(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure())
  const statuses: Array<number | undefined> = []
  try {
    for (let i = 0; i < counts.debugPaths; i++)
      statuses.push(await debugRequest(client, `mesh.io/debug/nothing-${i}${forged("DEBUG")}`, []))
    const query = `proxyID=${"z".repeat(counts.debugQueryBytes)}`
    for (let i = 0; i < counts.debugQueries; i++)
      statuses.push(await debugRequest(client, "mesh.io/debug/config_dump", [query]))
  } finally {
    client.close()
  }
  return statuses
}

/** An HTTPS POST to the webhook listener (its certificate is not checked: the attacker would not). */
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
      },
      (res) => {
        res.resume()
        res.on("end", () => resolve(res.statusCode ?? 0))
      },
    )
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
      resource: { group: "networking.istio.io", version: "v1", resource: "virtualservices" },
      object: {
        apiVersion: "networking.istio.io/v1",
        kind: "VirtualService",
        metadata: { name: `r${i}${forged("VALIDATE")}${"n".repeat(2000)}`, namespace: "default" },
        spec: { hosts: ["reviews"], http: [{ route: [{ destination: { host: "reviews" }, weight: 20 }] }] },
      },
    },
  })

const webhookFlood = async (ports: FloodPorts, counts: FloodCounts) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const validateStatuses: Array<number> = []
    for (let i = 0; i < counts.validateRefusals; i++)
      validateStatuses.push(await post(agent, ports.https, "/validate", invalidReview(i)))
    const injectStatuses: Array<number> = []
    const notJson = `{"x${forged("INJECT")}${"j".repeat(4000)}`
    for (let i = 0; i < counts.injectDecodeErrors; i++)
      injectStatuses.push(await post(agent, ports.https, "/inject", i % 2 === 0 ? notJson : '"not a review"'))
    return { validateStatuses, injectStatuses }
  } finally {
    agent.destroy()
  }
}

const httpDebugFlood = async (ports: FloodPorts, counts: FloodCounts) => {
  const statuses: Array<number> = []
  const query = encodeURIComponent(`q${forged("HTTP")}${"h".repeat(6000)}`)
  for (let i = 0; i < counts.httpDebug; i++) {
    const res = await fetch(`http://127.0.0.1:${ports.monitoring}/debug/nothing-${i}?${query}`)
    await res.arrayBuffer()
    statuses.push(res.status)
  }
  return statuses
}

/** Runs every part of the flood at once and resolves when all are answered. */
export const logFlood = async (ports: FloodPorts, counts: FloodCounts): Promise<FloodResult> => {
  const [nacksCounted, debugStatuses, webhook, httpStatuses] = await Promise.all([
    nackFlood(ports, counts),
    debugFlood(ports, counts),
    webhookFlood(ports, counts),
    httpDebugFlood(ports, counts),
  ])
  return { nacksCounted, debugStatuses, ...webhook, httpStatuses }
}
