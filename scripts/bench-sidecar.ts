/**
 * Sidecar push benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-sidecar.mjs [--services 1000] [--sidecars 1000] [--grpc-clients 1000]
 *                                       [--namespaces 10] [--procs 2] [--mode sotw|delta] [--repeat 3]
 *
 * The ADS server runs in this process with `--services` HTTP services (two endpoints, a
 * DestinationRule with two subsets and a weighted VirtualService each). `--sidecars` data-plane
 * proxies (node ids `sidecar~...`, no Sidecar resource: each sees every service) and, in the same
 * run, `--grpc-clients` proxyless gRPC clients as bench-xds has them, connect from `--procs`
 * child processes with the project's light ADS client (resources counted, not decoded). A sidecar
 * subscribes as the proxy does: CDS and LDS wildcard, RDS for the port's route configuration and
 * EDS for every EDS cluster (3 per service). Sidecars are spread over `--namespaces` namespaces
 * (their scope, and so their resource sets, are shared within a namespace).
 *
 * Measured: time until every client holds full config and the server's CPU for it (per sidecar),
 * bytes per sidecar, the push time of one endpoint change reaching every sidecar (each watches
 * every cluster), the server's peak RSS. Target: RSS < 1.5 GB (the reference's published figure
 * for this size is 1 vCPU and 1.5 GB).
 */
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Duration, Effect, Exit, Layer, Scope } from "effect"
import { layer as metricsLayer } from "../src/layers/metrics.js"
import { makeXdsServer } from "../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import type { ConfigResource } from "../src/services/config-model/resource.js"
import type { DestinationRuleSpec } from "../src/services/config-model/schemas/destination-rule.js"
import type { VirtualServiceSpec } from "../src/services/config-model/schemas/virtual-service.js"
import type { Endpoint, Service } from "../src/services/registry/model.js"
import type { PushContextInput } from "../src/services/xds/model/push-context.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { outboundClusterName } from "../src/services/xds/proxygen/well-known.js"
import { defaultXdsServerConfig } from "../src/services/xds/server.js"
import { arg, inboxOf, now, percentile, round1, type Spread, serverLogsToStderr, spreadOf } from "./bench-support.js"

const SERVICES = Number(arg("services", "1000"))
const SIDECARS = Number(arg("sidecars", "1000"))
const GRPC_CLIENTS = Number(arg("grpc-clients", "1000"))
const NAMESPACES = Number(arg("namespaces", "10"))
const PROCS = Number(arg("procs", "2"))
const MODE = arg("mode", "sotw") as "sotw" | "delta"
const REPEAT = Number(arg("repeat", "3"))
/**
 * Each sidecar is sent about 4 MB at start (3,000 clusters with their mTLS settings, as many
 * endpoint sets, the port's routes), so 1,000 of them take gigabytes through loopback to client
 * processes on the same two cores: a write may wait longer than the server's 5 s default before
 * a busy client reads it. The benchmark measures the server, so it allows `--send-timeout` seconds.
 */
const SEND_TIMEOUT_S = Number(arg("send-timeout", "120"))
const GRPC_WATCH = 10
const DEBOUNCE_MS = 100
const PORT = 80

const host = (i: number) => `svc-${i}.bench.svc.cluster.local`

// ------------------------------------------------------------------------------------------------
// Mesh

const meta = (name: string) => ({ name, namespace: "bench", labels: {}, annotations: {} })

const endpointsOf = (i: number, generation: number): ReadonlyArray<Endpoint> =>
  ["v1", "v2"].map((version) => ({
    hostname: host(i),
    namespace: "bench",
    servicePortName: "http",
    address: `10.${Math.floor(i / 250)}.${i % 250}.${version === "v1" ? 1 + (i === 0 ? generation * 10 : 0) : 2}`,
    port: 8080,
    labels: { version, "security.mesh.io/tlsMode": "mesh" },
    serviceAccount: "default",
    locality: "region/zone/",
    network: "",
    weight: 1,
    healthStatus: "HEALTHY" as const,
    clusterId: "Orchestrator",
  }))

const makeInput = (): PushContextInput => {
  const services: Array<Service> = []
  const endpoints: Array<Endpoint> = []
  const virtualServices: Array<ConfigResource<VirtualServiceSpec>> = []
  const destinationRules: Array<ConfigResource<DestinationRuleSpec>> = []
  for (let i = 0; i < SERVICES; i++) {
    services.push({
      hostname: host(i),
      namespace: "bench",
      ports: [{ name: "http", port: PORT, protocol: "HTTP" }],
      addresses: [`240.240.${Math.floor(i / 250)}.${i % 250}`],
      autoAllocatedAddresses: [],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
      exportTo: ["*"],
      labels: {},
      registry: "Mock",
      clusterId: "Orchestrator",
    })
    endpoints.push(...endpointsOf(i, 0))
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
              { destination: { host: host(i), subset: "v1" }, weight: 80 },
              { destination: { host: host(i), subset: "v2" }, weight: 20 },
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

type ToChild = { readonly type: "change" }
type FromChild =
  | { readonly type: "ready"; readonly at: number; readonly sidecarBytes: number; readonly grpcBytes: number }
  | { readonly type: "armed" }
  | { readonly type: "converged"; readonly receipts: ReadonlyArray<number> }

const sidecarNames = (): Record<string, ReadonlyArray<string>> => {
  const clusters: Array<string> = []
  for (let i = 0; i < SERVICES; i++)
    for (const subset of ["", "v1", "v2"]) clusters.push(outboundClusterName(host(i), PORT, subset))
  return {
    [TypeUrl.Cluster]: [],
    [TypeUrl.Listener]: [],
    [TypeUrl.Route]: [String(PORT)],
    [TypeUrl.Endpoint]: clusters,
  }
}

const grpcNames = (client: number): Record<string, ReadonlyArray<string>> => {
  const hosts = Array.from({ length: GRPC_WATCH }, (_, j) => host((client * GRPC_WATCH + j) % SERVICES))
  const clusters = hosts.flatMap((h) => [outboundClusterName(h, PORT, "v1"), outboundClusterName(h, PORT, "v2")])
  return {
    [TypeUrl.Listener]: hosts.map((h) => `${h}:${PORT}`),
    [TypeUrl.Route]: hosts.map((h) => `${h}:${PORT}`),
    [TypeUrl.Cluster]: clusters,
    [TypeUrl.Endpoint]: clusters,
  }
}

const runClients = async () => {
  const port = Number(arg("port", "0"))
  const sidecarFrom = Number(arg("sidecar-from", "0"))
  const sidecarCount = Number(arg("sidecar-count", "0"))
  const grpcFrom = Number(arg("grpc-from", "0"))
  const grpcCount = Number(arg("grpc-count", "0"))
  const send = (m: FromChild) => process.send?.(m)
  const total = sidecarCount + grpcCount
  let sidecarBytes = 0
  let grpcBytes = 0
  let ready = 0
  let phase: { pending: Set<number>; receipts: Array<number> } | undefined
  const scope = await Effect.runPromise(Scope.make())
  const sidecarExpected = {
    [TypeUrl.Cluster]: 3 * SERVICES + 2,
    [TypeUrl.Listener]: 2,
    [TypeUrl.Route]: 1,
    [TypeUrl.Endpoint]: 3 * SERVICES,
  }
  const start = (index: number) => {
    const sidecar = index < sidecarCount
    const client = sidecar ? sidecarFrom + index : grpcFrom + index - sidecarCount
    const names = sidecar ? sidecarNames() : grpcNames(client)
    const expected: Record<string, number> = sidecar
      ? sidecarExpected
      : Object.fromEntries(Object.entries(names).map(([t, n]) => [t, n.length]))
    const namespace = `app-${client % NAMESPACES}`
    const held = new Map<string, number>()
    let isReady = false
    return makeAdsClient({
      address: `127.0.0.1:${port}`,
      mode: MODE,
      decode: false,
      node: sidecar
        ? {
            id: `sidecar~10.200.${Math.floor(client / 250)}.${client % 250}~app-${client}.${namespace}~${namespace}.svc.cluster.local`,
            metadata: plainToStruct({ NAMESPACE: namespace, LABELS: { app: "client" }, MESH_VERSION: "bench" }),
          }
        : {
            id: `sidecar~127.0.0.1~grpc-${client}.default~default.svc.cluster.local`,
            metadata: plainToStruct({ GENERATOR: "grpc" }),
          },
      onResponse: (event) => {
        if (sidecar) sidecarBytes += event.bytes
        else grpcBytes += event.bytes
        held.set(event.typeUrl, MODE === "sotw" ? event.resources : (held.get(event.typeUrl) ?? 0) + event.resources)
        if (!isReady && Object.entries(expected).every(([t, n]) => (held.get(t) ?? 0) >= n)) {
          isReady = true
          ready++
          if (ready === total) send({ type: "ready", at: now(), sidecarBytes, grpcBytes })
        }
        if (sidecar && phase !== undefined && event.typeUrl === TypeUrl.Endpoint && phase.pending.delete(client)) {
          phase.receipts.push(now())
          if (phase.pending.size === 0) {
            send({ type: "converged", receipts: phase.receipts })
            phase = undefined
          }
        }
      },
    }).pipe(
      Effect.tap((c) =>
        Effect.forEach([TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route], (t) =>
          c.subscribe(t, names[t]!),
        ),
      ),
      Scope.extend(scope),
    )
  }
  await Effect.runPromise(
    Effect.forEach(
      Array.from({ length: total }, (_, i) => i),
      start,
      { concurrency: 100 },
    ),
  )
  process.on("message", (message: ToChild) => {
    if (message.type !== "change") return
    // Every sidecar watches every cluster: each one is affected.
    const pending = new Set<number>()
    for (let c = sidecarFrom; c < sidecarFrom + sidecarCount; c++) pending.add(c)
    phase = { pending, receipts: [] }
    send({ type: "armed" })
    if (pending.size === 0) {
      send({ type: "converged", receipts: [] })
      phase = undefined
    }
  })
}

// ------------------------------------------------------------------------------------------------
// Server side

const spawnClients = (port: number) => {
  const self = fileURLToPath(import.meta.url)
  const share = (count: number, p: number) => {
    const per = Math.ceil(count / PROCS)
    const from = p * per
    return { from, count: Math.max(0, Math.min(per, count - from)) }
  }
  const children = Array.from({ length: PROCS }, (_, p) => {
    const s = share(SIDECARS, p)
    const g = share(GRPC_CLIENTS, p)
    return fork(
      self,
      [
        ...["--role", "clients", "--port", String(port), "--mode", MODE, "--services", String(SERVICES)],
        ...["--namespaces", String(NAMESPACES)],
        ...["--sidecar-from", String(s.from), "--sidecar-count", String(s.count)],
        ...["--grpc-from", String(g.from), "--grpc-count", String(g.count)],
      ],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    )
  })
  const queues = children.map((child) => inboxOf<FromChild>(child))
  return {
    children,
    next: () => Promise.all(queues.map((take) => take())),
    kill: () => {
      for (const child of children) child.kill()
    },
  }
}

const runServer = async () => {
  const scope = await Effect.runPromise(Scope.make())
  let input = makeInput()
  const server = await Effect.runPromise(
    makeXdsServer(
      {
        ...defaultXdsServerConfig,
        host: "127.0.0.1",
        port: 0,
        sendTimeout: Duration.seconds(SEND_TIMEOUT_S),
        debounce: {
          debounceAfter: Duration.millis(DEBOUNCE_MS),
          debounceMax: Duration.seconds(10),
          enableEdsDebounce: true,
        },
      },
      input,
    ).pipe(Effect.provide(Layer.merge(metricsLayer("bench"), serverLogsToStderr)), Scope.extend(scope)),
  )
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 50)

  const cpuBefore = process.cpuUsage()
  const t0 = now()
  const clients = spawnClients(server.port)
  const ready = await clients.next()
  const fullConfigCpu = process.cpuUsage(cpuBefore)
  const fullConfigMs = Math.round(Math.max(...ready.map((r) => (r.type === "ready" ? r.at : 0))) - t0)
  const sidecarBytes = ready.reduce((n, r) => n + (r.type === "ready" ? r.sidecarBytes : 0), 0)
  const grpcBytes = ready.reduce((n, r) => n + (r.type === "ready" ? r.grpcBytes : 0), 0)
  process.stderr.write(
    `bench-sidecar: ${SIDECARS} sidecars + ${GRPC_CLIENTS} gRPC clients ready in ${fullConfigMs} ms\n`,
  )

  const changes: Array<{ pushMs: Spread; cpuMs: number; encoded: number }> = []
  for (let generation = 1; generation <= REPEAT + 1; generation++) {
    const armed = clients.next()
    for (const child of clients.children) child.send({ type: "change" } satisfies ToChild)
    await armed
    const encodedBefore = (await Effect.runPromise(server.cacheStats)).misses
    input = {
      ...input,
      endpoints: [...endpointsOf(0, generation), ...input.endpoints.filter((e) => e.hostname !== host(0))],
    }
    const cpu = process.cpuUsage()
    const at = now()
    await Effect.runPromise(server.update(input))
    const converged = await clients.next()
    const used = process.cpuUsage(cpu)
    const pushStartedAt = (await Effect.runPromise(server.pushStats)).lastPushStartedAt
    const startedAt = pushStartedAt > 0 ? Math.max(at, pushStartedAt) : at + DEBOUNCE_MS
    const receipts = converged.flatMap((r) => (r.type === "converged" ? r.receipts : []))
    // The first change warms the push path up; it is not reported.
    if (generation > 1)
      changes.push({
        pushMs: spreadOf(receipts.map((t) => t - startedAt)),
        cpuMs: Math.round((used.user + used.system) / 1000),
        encoded: (await Effect.runPromise(server.cacheStats)).misses - encodedBefore,
      })
  }
  clearInterval(sampler)
  clients.kill()
  const stats = await Effect.runPromise(server.cacheStats)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  const medianOf = (f: (c: (typeof changes)[number]) => number) => percentile(changes.map(f), 50)
  return {
    services: SERVICES,
    sidecars: SIDECARS,
    grpcClients: GRPC_CLIENTS,
    namespaces: NAMESPACES,
    mode: MODE,
    fullConfigMs,
    fullConfigServerCpuMs: Math.round((fullConfigCpu.user + fullConfigCpu.system) / 1000),
    cpuMsPerProxy: round1((fullConfigCpu.user + fullConfigCpu.system) / 1000 / Math.max(1, SIDECARS + GRPC_CLIENTS)),
    bytesPerSidecar: Math.round(sidecarBytes / Math.max(1, SIDECARS)),
    bytesPerGrpcClient: Math.round(grpcBytes / Math.max(1, GRPC_CLIENTS)),
    endpointChange: {
      pushTimeMs: {
        p50: medianOf((c) => c.pushMs.p50),
        p99: medianOf((c) => c.pushMs.p99),
        max: medianOf((c) => c.pushMs.max),
      },
      serverCpuMs: medianOf((c) => c.cpuMs),
      resourcesEncoded: medianOf((c) => c.encoded),
      repetitions: changes,
    },
    serverPeakRssMiB: Math.round(peakRss / 2 ** 20),
    rssTargetMiB: 1536,
    rssWithinTarget: peakRss < 1536 * 2 ** 20,
    cache: stats,
  }
}

if (arg("role", "server") === "clients") await runClients()
else {
  const result = await runServer()
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
  process.exit(0)
}
