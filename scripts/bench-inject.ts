/**
 * Sidecar injection webhook benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-inject.mjs [--requests 5000] [--concurrency 200] [--warmup 200] [--sequential 500]
 *
 * Starts the built `mesh-discovery` (Mock registry, the example mesh, every listener on an
 * ephemeral loopback port) and sends `/inject` AdmissionReviews over HTTPS, verified against the
 * CA root the server made, for a typical Deployment's pod: two containers with ports, probes and
 * resources. `--concurrency` requests are in flight at once (one keep-alive connection each)
 * until `--requests` have been answered; every answer must be an allowed review with a JSONPatch.
 * Measured: latency per request (p50, p99, max) and throughput. Target: p99 < 20 ms. With every
 * request in flight at once, latency is mostly queueing (about concurrency / throughput, Little's
 * law), so the same is measured one request at a time (`--sequential`): the cost of one review
 * with nothing ahead of it.
 */
import { spawn } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { Agent, request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { arg, now, round1, spreadOf } from "./bench-support.js"

const REQUESTS = Number(arg("requests", "5000"))
const CONCURRENCY = Number(arg("concurrency", "200"))
const WARMUP = Number(arg("warmup", "200"))
const SEQUENTIAL = Number(arg("sequential", "500"))
const TARGET_P99_MS = 20
const SERVER_NAME = "meshd.mesh-system.svc"
const root = join(import.meta.dirname, "..", "..")

const container = (name: string, image: string, port: number) => ({
  name,
  image,
  ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
  resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
  readinessProbe: { httpGet: { path: "/ready", port }, initialDelaySeconds: 2, periodSeconds: 5 },
  livenessProbe: { httpGet: { path: "/healthz", port }, periodSeconds: 10 },
  env: [{ name: "LOG_LEVEL", value: "info" }],
})

/** A pod the way a Deployment's ReplicaSet creates it: generated name, owner, template hash. */
const pod = (i: number) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    generateName: "reviews-v1-7d9f8c6b5-",
    namespace: "bench",
    // Opted in by label: without an orchestrator there are no namespace labels to select it.
    labels: { app: "reviews", version: "v1", "pod-template-hash": "7d9f8c6b5", "sidecar.mesh.io/inject": "true" },
    ownerReferences: [
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "reviews-v1-7d9f8c6b5",
        uid: `rs-${i % 10}`,
        controller: true,
      },
    ],
  },
  spec: {
    serviceAccountName: "reviews",
    containers: [container("reviews", "example/reviews:1.0", 9080), container("cache", "example/cache:2.1", 6379)],
  },
})

const review = (i: number) =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `uid-${i}`,
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      namespace: "bench",
      operation: "CREATE",
      object: pod(i),
    },
  })

interface Server {
  readonly port: number
  readonly rootPem: string
  readonly stop: () => Promise<void>
}

/** Starts the built mesh-discovery in a private directory; resolves once its webhook listens. */
const startServer = (): Promise<Server> => {
  const dir = mkdtempSync(join(tmpdir(), "bench-inject-"))
  cpSync(join(root, "examples/mesh"), join(dir, "mesh"), { recursive: true })
  const args = [
    join(root, "bin/mesh-discovery.cjs"),
    "discovery",
    "--configDir",
    join(dir, "mesh"),
    "--registries",
    "Mock",
    ...["--grpcAddr", "--secureGRPCAddr", "--httpAddr", "--monitoringAddr", "--httpsAddr"].flatMap((flag) => [
      flag,
      "127.0.0.1:0",
    ]),
    "--ctrlz_address",
    "127.0.0.1",
    "--ctrlz_port",
    "0",
  ]
  const child = spawn(process.execPath, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    child.kill("SIGTERM")
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`mesh-discovery did not start its webhook listener in 60s:\n${output}`))
    }, 60_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /webhook HTTPS listener on [\d.]+:(\d+)/.exec(output)
      if (match === null) return
      clearTimeout(timer)
      child.stdout.off("data", onData)
      child.stderr.off("data", onData)
      // The rest of its log is not read: drained so the server never blocks on a full pipe.
      child.stdout.resume()
      child.stderr.resume()
      const rootPem = readFileSync(join(dir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
      resolve({ port: Number(match[1]), rootPem, stop })
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`mesh-discovery exited (${code}) before its webhook listened:\n${output}`))
    })
  })
}

/** One review; resolves with its latency once the answer is checked. */
const call = (server: Server, agent: Agent, body: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const start = now()
    const req = request(
      {
        host: "127.0.0.1",
        port: server.port,
        servername: SERVER_NAME,
        ca: server.rootPem,
        agent,
        method: "POST",
        path: "/inject",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const latency = now() - start
          const text = Buffer.concat(chunks).toString("utf8")
          if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text}`))
          const response = JSON.parse(text).response
          if (response?.allowed !== true || response.patchType !== "JSONPatch" || typeof response.patch !== "string") {
            return reject(new Error(`not injected: ${text.slice(0, 500)}`))
          }
          resolve(latency)
        })
      },
    )
    req.on("error", reject)
    req.end(body)
  })

/** `total` requests, `concurrency` at a time; the latency of each. */
const load = async (server: Server, agent: Agent, total: number, concurrency: number) => {
  const latencies: Array<number> = []
  let next = 0
  const worker = async () => {
    while (next < total) {
      const i = next++
      latencies.push(await call(server, agent, review(i)))
    }
  }
  const start = now()
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker))
  return { latencies, seconds: (now() - start) / 1000 }
}

const main = async () => {
  const server = await startServer()
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  try {
    // TLS handshakes and the server's first (JIT-cold) requests are not what is measured.
    await load(server, agent, WARMUP, CONCURRENCY)
    const { latencies, seconds } = await load(server, agent, REQUESTS, CONCURRENCY)
    const spread = spreadOf(latencies)
    const sequential = await load(server, agent, SEQUENTIAL, 1)
    console.log(
      JSON.stringify(
        {
          requests: REQUESTS,
          concurrency: CONCURRENCY,
          warmup: WARMUP,
          latency_ms: spread,
          throughput_per_s: round1(REQUESTS / seconds),
          wall_s: round1(seconds),
          sequential: {
            requests: SEQUENTIAL,
            latency_ms: spreadOf(sequential.latencies),
            throughput_per_s: round1(SEQUENTIAL / sequential.seconds),
          },
          target_p99_ms: TARGET_P99_MS,
          target_met: spread.p99 < TARGET_P99_MS,
        },
        null,
        2,
      ),
    )
  } finally {
    agent.destroy()
    await server.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
