/**
 * xDS push benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-xds.mjs [--services 1000] [--clients 2000] [--watch 10] [--procs 2] [--modes sotw,delta]
 *
 * The ADS server runs in this process; light ADS clients (the project's own client, resources not
 * decoded) run in `--procs` child processes. Each client watches `--watch` services the way a
 * proxyless gRPC client does (LDS/RDS `host:port`, CDS/EDS for the v1/v2 subset clusters).
 * Measured per mode: time until every client holds full config; after one endpoint change and
 * after one VirtualService change, the time until every affected client has the new version
 * (p50/p99/max, also net of the debounce window), server CPU seconds, bytes sent, resources
 * encoded per change; peak RSS of the server process.
 */
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Duration, Effect, Exit, Scope } from "effect"
import { metricsLayer } from "../src/layers/metrics.js"
import { makeXdsServer } from "../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import type { ConfigResource } from "../src/services/config-model/resource.js"
import type { Endpoint, Service } from "../src/services/registry/model.js"
import { clusterName } from "../src/services/xds/grpc-gen.js"
import { plainToStruct } from "../src/services/xds/messages.js"
import type { PushContextInput } from "../src/services/xds/push-context.js"
import { defaultXdsServerConfig } from "../src/services/xds/server.js"
import { TypeUrl } from "../src/services/xds/type-urls.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const SERVICES = Number(arg("services", "1000"))
const CLIENTS = Number(arg("clients", "2000"))
const WATCH = Number(arg("watch", "10"))
const PROCS = Number(arg("procs", "2"))
const MODES = arg("modes", "sotw,delta").split(",") as Array<"sotw" | "delta">
const DEBOUNCE_MS = 100

const host = (i: number) => `svc-${i}.bench.svc.cluster.local`
const watched = (client: number): ReadonlyArray<number> =>
  Array.from({ length: WATCH }, (_, j) => (client * WATCH + j) % SERVICES)

// ------------------------------------------------------------------------------------------------
// Mesh

const meta = (name: string) => ({ name, namespace: "bench", labels: {}, annotations: {} })

const makeInput = (endpointGeneration: number, vsGeneration: number): PushContextInput => {
  const services: Array<Service> = []
  const endpoints: Array<Endpoint> = []
  const virtualServices: Array<ConfigResource> = []
  const destinationRules: Array<ConfigResource> = []
  for (let i = 0; i < SERVICES; i++) {
    services.push({
      hostname: host(i),
      namespace: "bench",
      ports: [{ name: "grpc", port: 80, protocol: "GRPC" }],
      addresses: [],
      autoAllocatedAddresses: [],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
      exportTo: ["*"],
      labels: {},
      registry: "Mock",
      clusterId: "Orchestrator",
    })
    for (const version of ["v1", "v2"]) {
      const octet = i === 0 && version === "v1" ? 10 + endpointGeneration : version === "v1" ? 1 : 2
      endpoints.push({
        hostname: host(i),
        namespace: "bench",
        servicePortName: "grpc",
        address: `10.${Math.floor(i / 250)}.${i % 250}.${octet}`,
        port: 8080,
        labels: { version },
        serviceAccount: "default",
        locality: "region/zone/",
        network: "",
        weight: 1,
        healthStatus: "HEALTHY",
        clusterId: "Orchestrator",
      })
    }
    const v1 = i === 0 ? 80 - vsGeneration : 80
    virtualServices.push({
      group: "networking.mesh.io",
      version: "v1",
      kind: "VirtualService",
      meta: meta(`svc-${i}`),
      spec: {
        hosts: [host(i)],
        http: [
          {
            route: [
              { destination: { host: host(i), subset: "v1" }, weight: v1 },
              { destination: { host: host(i), subset: "v2" }, weight: 100 - v1 },
            ],
          },
        ],
      },
    })
    destinationRules.push({
      group: "networking.mesh.io",
      version: "v1",
      kind: "DestinationRule",
      meta: meta(`svc-${i}`),
      spec: {
        host: host(i),
        subsets: [
          { name: "v1", labels: { version: "v1" } },
          { name: "v2", labels: { version: "v2" } },
        ],
      },
    })
  }
  return { services, endpoints, virtualServices, destinationRules, peerAuthentications: [] }
}

// ------------------------------------------------------------------------------------------------
// Client processes

type ToChild =
  | { readonly type: "change"; readonly kind: "eds" | "rds"; readonly at: number }
  | { readonly type: "report" }
type FromChild =
  | { readonly type: "ready"; readonly at: number; readonly bytes: number }
  | {
      readonly type: "converged"
      readonly latencies: ReadonlyArray<number>
      readonly bytes: number
      readonly rss: number
    }

const runClients = async () => {
  const port = Number(arg("port", "0"))
  const from = Number(arg("from", "0"))
  const count = Number(arg("count", "0"))
  const mode = arg("mode", "sotw") as "sotw" | "delta"
  const send = (m: FromChild) => process.send?.(m)
  const expected = {
    [TypeUrl.Listener]: WATCH,
    [TypeUrl.Route]: WATCH,
    [TypeUrl.Cluster]: 2 * WATCH,
    [TypeUrl.Endpoint]: 2 * WATCH,
  }
  let bytes = 0
  let ready = 0
  let phase: { kind: "eds" | "rds"; at: number; pending: Set<number>; latencies: Array<number> } | undefined
  const held = Array.from({ length: count }, () => new Map<string, number>())
  const scope = await Effect.runPromise(Scope.make())
  const start = (index: number) => {
    const client = from + index
    const hosts = watched(client).map(host)
    const names = {
      [TypeUrl.Listener]: hosts.map((h) => `${h}:80`),
      [TypeUrl.Route]: hosts.map((h) => `${h}:80`),
      [TypeUrl.Cluster]: hosts.flatMap((h) => [clusterName(h, 80, "v1"), clusterName(h, 80, "v2")]),
      [TypeUrl.Endpoint]: hosts.flatMap((h) => [clusterName(h, 80, "v1"), clusterName(h, 80, "v2")]),
    }
    let isReady = false
    return makeAdsClient({
      address: `127.0.0.1:${port}`,
      mode,
      decode: false,
      node: { id: `bench-${client}`, metadata: plainToStruct({ GENERATOR: "grpc" }), locality: { zone: "zone" } },
      onResponse: (event) => {
        if (process.env.BENCH_DEBUG) process.stderr.write(`${client} ${JSON.stringify(event)}\n`)
        bytes += event.bytes
        const m = held[index]!
        m.set(event.typeUrl, mode === "sotw" ? event.resources : (m.get(event.typeUrl) ?? 0) + event.resources)
        if (!isReady && Object.entries(expected).every(([t, n]) => (m.get(t) ?? 0) >= n)) {
          isReady = true
          ready++
          if (ready === count) send({ type: "ready", at: Date.now(), bytes })
        }
        const wanted = phase?.kind === "eds" ? TypeUrl.Endpoint : TypeUrl.Route
        if (phase !== undefined && event.typeUrl === wanted && phase.pending.delete(client)) {
          phase.latencies.push(Date.now() - phase.at)
          if (phase.pending.size === 0) {
            send({ type: "converged", latencies: phase.latencies, bytes, rss: process.memoryUsage().rss })
            phase = undefined
          }
        }
      },
    }).pipe(
      Effect.tap((c) =>
        Effect.forEach([TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route], (t) =>
          c.subscribe(t, names[t]),
        ),
      ),
      Scope.extend(scope),
    )
  }
  await Effect.runPromise(
    Effect.forEach(
      Array.from({ length: count }, (_, i) => i),
      start,
      { concurrency: 100 },
    ),
  )
  process.on("message", (message: ToChild) => {
    if (message.type === "change") {
      // clients watching svc-0 are affected by both changes
      const pending = new Set<number>()
      for (let c = from; c < from + count; c++) if (watched(c).includes(0)) pending.add(c)
      bytes = 0
      phase = { kind: message.kind, at: message.at, pending, latencies: [] }
      if (pending.size === 0) {
        send({ type: "converged", latencies: [], bytes: 0, rss: process.memoryUsage().rss })
        phase = undefined
      }
    }
  })
}

// ------------------------------------------------------------------------------------------------
// Server side

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const runMode = async (mode: "sotw" | "delta") => {
  const scope = await Effect.runPromise(Scope.make())
  let input = makeInput(0, 0)
  const server = await Effect.runPromise(
    makeXdsServer(
      {
        ...defaultXdsServerConfig,
        host: "127.0.0.1",
        port: 0,
        debounce: {
          debounceAfter: Duration.millis(DEBOUNCE_MS),
          debounceMax: Duration.seconds(10),
          enableEdsDebounce: true,
        },
      },
      input,
    ).pipe(Effect.provide(metricsLayer("bench")), Scope.extend(scope)),
  )
  let peakRss = process.memoryUsage().rss
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }, 50)

  const self = fileURLToPath(import.meta.url)
  const perProc = Math.ceil(CLIENTS / PROCS)
  const children = Array.from({ length: PROCS }, (_, p) => {
    const from = p * perProc
    const count = Math.max(0, Math.min(perProc, CLIENTS - from))
    return fork(
      self,
      [
        "--role",
        "clients",
        "--port",
        String(server.port),
        "--mode",
        mode,
        "--from",
        String(from),
        "--count",
        String(count),
        "--services",
        String(SERVICES),
        "--watch",
        String(WATCH),
      ],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    )
  })
  const next = (): Promise<ReadonlyArray<FromChild>> =>
    Promise.all(
      children.map((child) => new Promise<FromChild>((resolve) => child.once("message", (m: FromChild) => resolve(m)))),
    )

  const t0 = Date.now()
  const ready = await next()
  const connectMs = Math.max(...ready.map((r) => (r.type === "ready" ? r.at : 0))) - t0
  const initialBytes = ready.reduce((n, r) => n + r.bytes, 0)

  const change = async (kind: "eds" | "rds") => {
    input =
      kind === "eds"
        ? { ...input, endpoints: makeInput(1, 0).endpoints }
        : { ...input, virtualServices: makeInput(0, 10).virtualServices }
    const encodedBefore = (await Effect.runPromise(server.cacheStats)).misses
    const cpuBefore = process.cpuUsage()
    const at = Date.now()
    const done = next()
    for (const child of children) child.send({ type: "change", kind, at } satisfies ToChild)
    await Effect.runPromise(server.update(input))
    const results = await done
    const cpu = process.cpuUsage(cpuBefore)
    const latencies = results.flatMap((r) => (r.type === "converged" ? r.latencies : []))
    const stats = await Effect.runPromise(server.cacheStats)
    return {
      affectedClients: latencies.length,
      convergedMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(0, ...latencies) },
      convergedAfterDebounceMs: {
        p50: Math.max(0, percentile(latencies, 50) - DEBOUNCE_MS),
        p99: Math.max(0, percentile(latencies, 99) - DEBOUNCE_MS),
        max: Math.max(0, Math.max(0, ...latencies) - DEBOUNCE_MS),
      },
      serverCpuSeconds: (cpu.user + cpu.system) / 1e6,
      bytesSent: results.reduce((n, r) => n + (r.type === "converged" ? r.bytes : 0), 0),
      resourcesEncoded: stats.misses - encodedBefore,
      clientRssBytes: results.map((r) => (r.type === "converged" ? r.rss : 0)),
    }
  }

  process.stderr.write(`bench-xds ${mode}: ${CLIENTS} clients hold full config after ${connectMs} ms\n`)
  const endpointChange = await change("eds")
  process.stderr.write(`bench-xds ${mode}: endpoint change converged\n`)
  const virtualServiceChange = await change("rds")
  process.stderr.write(`bench-xds ${mode}: VirtualService change converged\n`)
  clearInterval(sampler)
  for (const child of children) child.kill()
  const stats = await Effect.runPromise(server.cacheStats)
  process.stderr.write("closing\n")
  const keepAlive = setInterval(() => {}, 1000)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  clearInterval(keepAlive)
  process.stderr.write("closed\n")
  return {
    mode,
    fullConfigMs: connectMs,
    initialBytes,
    endpointChange,
    virtualServiceChange,
    serverPeakRssBytes: peakRss,
    cache: stats,
  }
}

const main = async () => {
  const results = []
  for (const mode of MODES) results.push(await runMode(mode))
  process.stderr.write("bench-xds: done\n")
  console.log(
    JSON.stringify(
      {
        services: SERVICES,
        clients: CLIENTS,
        watchPerClient: WATCH,
        clientProcesses: PROCS,
        debounceMs: DEBOUNCE_MS,
        results,
      },
      null,
      2,
    ),
  )
  process.exit(0)
}

if (arg("role", "server") === "clients") void runClients()
else void main()
