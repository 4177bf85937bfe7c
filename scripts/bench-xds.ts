/**
 * xDS push benchmark. Prints JSON.
 *
 *   node dist/scripts/bench-xds.mjs [--services 1000] [--clients 2000] [--watch 10] [--procs 2] [--modes sotw,delta]
 *                                   [--warmup 3] [--repeat 5]
 *
 * The ADS server runs in this process; light ADS clients (the project's own client, resources not
 * decoded) run in `--procs` child processes. Each client watches `--watch` services the way a
 * proxyless gRPC client does (LDS/RDS `host:port`, CDS/EDS for the v1/v2 subset clusters).
 * Measured per mode: time until every client holds full config; after one endpoint change and
 * after one VirtualService change, the time until every affected client has the new version
 * (p50/p99/max, also net of the debounce window), server CPU seconds, bytes sent, resources
 * encoded per change; peak RSS of the server process.
 *
 * The transport floor (bench-xds-floor.ts) runs in a process of its own, with client processes
 * of its own, started once our clients hold full config and our warm-up changes are done: a bare
 * grpc-js server writes the same DiscoveryResponse bytes, serialized once beforehand, to the same
 * number of clients; on the endpoint change it writes the pre-serialized change to the same
 * affected clients (its latencies run from when it began writing). After `--warmup` floor pushes,
 * our measured endpoint changes and the floor's pushes alternate.
 *
 * `pushTimeRatio` = our push time / the floor's (p50, p99, max). Our push time runs from when the
 * server's push started (the debounce timer released it: `lastPushStartedAt`) to each client's
 * receipt, as the floor's runs from when it began writing. `afterWindowRatio` divides our time
 * net of the nominal debounce window instead, which also counts handling the update and how late
 * the window's timer fires (`pushStartAfterWindowMs`: Node timers are millisecond-grained).
 *
 * Latencies run from the moment the change is made (after every
 * client process has been told which of its clients it affects) to where the client has the
 * response and writes its ACK, in both runs. `--warmup` changes of each kind precede the measured
 * ones; the endpoint change and the floor push are measured `--repeat` times and reported as
 * medians. `--cpu-prof-dir DIR` writes a CPU profile of the server per measured change.
 */
import { fork } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Clock, Duration, Effect, Exit, Layer, Scope } from "effect"
import { layer as metricsLayer } from "../src/layers/metrics.js"
import { makeXdsServer } from "../src/layers/xds/ads-server.js"
import { loadXdsProtos } from "../src/layers/xds/protos.js"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import type { ConfigResource } from "../src/services/config-model/resource.js"
import type { DestinationRuleSpec } from "../src/services/config-model/schemas/destination-rule.js"
import type { VirtualServiceSpec } from "../src/services/config-model/schemas/virtual-service.js"
import type { Endpoint, Service } from "../src/services/registry/model.js"
import { makeResourceCache } from "../src/services/xds/cache/resource-cache.js"
import { deltaResponse, sotwResponse } from "../src/services/xds/cache/responder.js"
import { clusterName } from "../src/services/xds/grpcgen/grpc-gen.js"
import { makePushContext, type PushContextInput } from "../src/services/xds/model/push-context.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../src/services/xds/server.js"
import { arg, inboxOf, now, percentile, round1, type Spread, serverLogsToStderr, spreadOf } from "./bench-support.js"
import { type FloorResponses, startFloorServer } from "./bench-xds-floor.js"

const SERVICES = Number(arg("services", "1000"))
const CLIENTS = Number(arg("clients", "2000"))
const WATCH = Number(arg("watch", "10"))
const PROCS = Number(arg("procs", "2"))
const MODES = arg("modes", "sotw,delta").split(",") as Array<"sotw" | "delta">
const DEBOUNCE_MS = 100
/**
 * Changes (one endpoint, one VirtualService each) made and converged before the measured ones:
 * the measured push is a steady-state push, not the first run of the push path's code (whose
 * JIT compilation the first change pays; it is reported as `firstEndpointChange`).
 */
const WARMUP = Number(arg("warmup", "3"))
/**
 * Measured endpoint changes per mode, and floor pushes: each statistic is reported as the median
 * over the repetitions (every repetition's figures are listed too), so that one descheduling of
 * the server on this small machine does not decide the ratio.
 */
const REPEAT = Number(arg("repeat", "5"))
/** `--cpu-prof-dir DIR`: a CPU profile of the server process per change (for finding push costs). */
const CPU_PROF_DIR = arg("cpu-prof-dir", "")

const host = (i: number) => `svc-${i}.bench.svc.cluster.local`
const watched = (client: number): ReadonlyArray<number> =>
  Array.from({ length: WATCH }, (_, j) => (client * WATCH + j) % SERVICES)
/** Clients watching svc-0 are the ones both changes affect. */
const affected = (client: number): boolean => watched(client).includes(0)

/** The names a client subscribes to, per type (as a proxyless gRPC client would). */
const namesOf = (client: number): Record<string, ReadonlyArray<string>> => {
  const hosts = watched(client).map(host)
  const clusters = hosts.flatMap((h) => [clusterName(h, 80, "v1"), clusterName(h, 80, "v2")])
  return {
    [TypeUrl.Listener]: hosts.map((h) => `${h}:80`),
    [TypeUrl.Route]: hosts.map((h) => `${h}:80`),
    [TypeUrl.Cluster]: clusters,
    [TypeUrl.Endpoint]: clusters,
  }
}

// ------------------------------------------------------------------------------------------------
// Mesh

const meta = (name: string) => ({ name, namespace: "bench", labels: {}, annotations: {} })

/**
 * The endpoints after svc-i's change, as the registry hands them over: its snapshot keeps the
 * endpoint objects of every service whose endpoints did not change, so only svc-i's are new.
 */
const changeEndpointsOf = (
  i: number,
  endpoints: ReadonlyArray<Endpoint>,
  generation: number,
): ReadonlyArray<Endpoint> => [
  ...makeInput(generation, 0).endpoints.filter((e) => e.hostname === host(i)),
  ...endpoints.filter((e) => e.hostname !== host(i)),
]

/** The VirtualServices after svc-i's is edited: the config store keeps every other object. */
const changeVirtualServiceOf = (
  i: number,
  virtualServices: ReadonlyArray<ConfigResource<VirtualServiceSpec>>,
  generation: number,
): ReadonlyArray<ConfigResource<VirtualServiceSpec>> => {
  const edited = makeInput(0, generation).virtualServices[i]!
  return virtualServices.map((vs, j) => (j === i ? edited : vs))
}

const makeInput = (endpointGeneration: number, vsGeneration: number): PushContextInput => {
  const services: Array<Service> = []
  const endpoints: Array<Endpoint> = []
  const virtualServices: Array<ConfigResource<VirtualServiceSpec>> = []
  const destinationRules: Array<ConfigResource<DestinationRuleSpec>> = []
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

/**
 * A change is announced before it is made: each client process records which of its clients it
 * affects and answers "armed"; only then is the change made (so that a fast push can never beat
 * its announcement), and the processes report when each affected client received it.
 */
type ToChild = { readonly type: "change"; readonly kind: "eds" | "rds" }
type FromChild =
  | { readonly type: "ready"; readonly at: number; readonly bytes: number }
  | { readonly type: "armed" }
  | {
      readonly type: "converged"
      /** When each affected client received the change (wall-clock ms, as `now()`). */
      readonly receipts: ReadonlyArray<number>
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
  let phase: { kind: "eds" | "rds"; pending: Set<number>; receipts: Array<number> } | undefined
  const held = Array.from({ length: count }, () => new Map<string, number>())
  const scope = await Effect.runPromise(Scope.make())
  const start = (index: number) => {
    const client = from + index
    const names = namesOf(client)
    let isReady = false
    return makeAdsClient({
      address: `127.0.0.1:${port}`,
      mode,
      decode: false,
      // A node id of the form the server accepts (type~ip~id~domain).
      node: {
        id: `sidecar~127.0.0.1~bench-${client}.default~default.svc.cluster.local`,
        metadata: plainToStruct({ GENERATOR: "grpc" }),
        locality: { zone: "zone" },
      },
      onResponse: (event) => {
        if (process.env.BENCH_DEBUG) process.stderr.write(`${client} ${JSON.stringify(event)}\n`)
        bytes += event.bytes
        const m = held[index]!
        m.set(event.typeUrl, mode === "sotw" ? event.resources : (m.get(event.typeUrl) ?? 0) + event.resources)
        if (!isReady && Object.entries(expected).every(([t, n]) => (m.get(t) ?? 0) >= n)) {
          isReady = true
          ready++
          if (ready === count) send({ type: "ready", at: now(), bytes })
        }
        const wanted = phase?.kind === "eds" ? TypeUrl.Endpoint : TypeUrl.Route
        if (phase !== undefined && event.typeUrl === wanted && phase.pending.delete(client)) {
          phase.receipts.push(now())
          if (phase.pending.size === 0) {
            send({ type: "converged", receipts: phase.receipts, bytes, rss: process.memoryUsage.rss() })
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
      Array.from({ length: count }, (_, i) => i),
      start,
      { concurrency: 100 },
    ),
  )
  process.on("message", (message: ToChild) => {
    if (message.type === "change") {
      // clients watching svc-0 are affected by both changes
      const pending = new Set<number>()
      for (let c = from; c < from + count; c++) if (affected(c)) pending.add(c)
      bytes = 0
      phase = { kind: message.kind, pending, receipts: [] }
      send({ type: "armed" })
      if (pending.size === 0) {
        send({ type: "converged", receipts: [], bytes: 0, rss: process.memoryUsage.rss() })
        phase = undefined
      }
    }
  })
}

// ------------------------------------------------------------------------------------------------
// Server side

/** Forks the client processes against `port`; `next()` waits for one message from each. */
const spawnClients = (port: number, mode: "sotw" | "delta") => {
  const self = fileURLToPath(import.meta.url)
  const perProc = Math.ceil(CLIENTS / PROCS)
  const children = Array.from({ length: PROCS }, (_, p) => {
    const from = p * perProc
    const count = Math.max(0, Math.min(perProc, CLIENTS - from))
    return fork(
      self,
      [
        ...["--role", "clients", "--port", String(port), "--mode", mode],
        ...["--from", String(from), "--count", String(count)],
        ...["--services", String(SERVICES), "--watch", String(WATCH)],
      ],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    )
  })
  const inboxes = children.map((child) => inboxOf<FromChild>(child))
  const next = (): Promise<ReadonlyArray<FromChild>> => Promise.all(inboxes.map((take) => take()))
  return {
    children,
    next,
    kill: () => {
      for (const child of children) child.kill()
    },
  }
}

type Clients = ReturnType<typeof spawnClients>

/** Waits until every client holds full config: milliseconds since `t0` and bytes received. */
const awaitReady = async (clients: Clients, t0: number) => {
  const ready = await clients.next()
  return {
    fullConfigMs: Math.round(Math.max(...ready.map((r) => (r.type === "ready" ? r.at : 0))) - t0),
    initialBytes: ready.reduce((n, r) => n + (r.type === "ready" ? r.bytes : 0), 0),
  }
}

const median = (values: ReadonlyArray<number>): number => percentile(values, 50)
/** Each percentile's median over repetitions. */
const medianSpread = (runs: ReadonlyArray<Spread>): Spread => ({
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  max: median(runs.map((r) => r.max)),
})

/** A change made in another process: when it was made there, and that process's CPU for it. */
interface MadeElsewhere {
  readonly at: number
  readonly cpuSeconds: () => Promise<number>
}

/**
 * Announces a change to the clients, runs `trigger`, and waits until every affected client has
 * it. Latencies run from when `trigger` was called, or from when the change was made in the
 * process `trigger` asked to make it (the floor's).
 */
const measureChange = async (
  clients: Clients,
  kind: "eds" | "rds",
  trigger: () => Promise<MadeElsewhere | undefined>,
) => {
  const armed = clients.next()
  for (const child of clients.children) child.send({ type: "change", kind } satisfies ToChild)
  await armed
  const cpuBefore = process.cpuUsage()
  const calledAt = now()
  const elsewhere = await trigger()
  const at = elsewhere?.at ?? calledAt
  const results = await clients.next()
  const local = process.cpuUsage(cpuBefore)
  const cpuSeconds = elsewhere !== undefined ? await elsewhere.cpuSeconds() : (local.user + local.system) / 1e6
  const latencies = results.flatMap((r) => (r.type === "converged" ? r.receipts.map((t) => t - at) : []))
  return {
    at,
    latencies,
    affectedClients: latencies.length,
    convergedMs: spreadOf(latencies),
    serverCpuSeconds: cpuSeconds,
    bytesSent: results.reduce((n, r) => n + (r.type === "converged" ? r.bytes : 0), 0),
    clientRssBytes: results.map((r) => (r.type === "converged" ? r.rss : 0)),
  }
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
    ).pipe(Effect.provide(Layer.merge(metricsLayer("bench"), serverLogsToStderr)), Scope.extend(scope)),
  )
  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 50)

  const t0 = now()
  const clients = spawnClients(server.port, mode)
  const { fullConfigMs, initialBytes } = await awaitReady(clients, t0)

  // The server stamps its pushes with its Effect clock: how far that clock is ahead of `now()`.
  const serverClockAhead = Number(Effect.runSync(Clock.currentTimeNanos)) / 1e6 - now()
  let generation = 0
  const change = async (kind: "eds" | "rds", profile = true) => {
    generation++
    input =
      kind === "eds"
        ? { ...input, endpoints: changeEndpointsOf(0, input.endpoints, generation) }
        : { ...input, virtualServices: changeVirtualServiceOf(0, input.virtualServices, generation) }
    const encodedBefore = (await Effect.runPromise(server.cacheStats)).misses
    const profiler = CPU_PROF_DIR === "" || !profile ? undefined : new Session()
    if (profiler !== undefined) {
      profiler.connect()
      await profiler.post("Profiler.enable")
      await profiler.post("Profiler.setSamplingInterval", { interval: 100 })
      await profiler.post("Profiler.start")
    }
    const measured = await measureChange(clients, kind, () =>
      Effect.runPromise(server.update(input)).then(() => undefined),
    )
    if (profiler !== undefined) {
      const { profile } = await profiler.post("Profiler.stop")
      mkdirSync(CPU_PROF_DIR, { recursive: true })
      writeFileSync(join(CPU_PROF_DIR, `bench-xds-${mode}-${kind}.cpuprofile`), JSON.stringify(profile))
      profiler.disconnect()
    }
    const stats = await Effect.runPromise(server.cacheStats)
    const { p50, p99, max } = measured.convergedMs
    // The push started when the debounce timer released it, in the server (this process).
    const pushStartedAt = (await Effect.runPromise(server.pushStats)).lastPushStartedAt - serverClockAhead
    const { at, latencies, ...reported } = measured
    return {
      ...reported,
      pushStartAfterWindowMs: round1(pushStartedAt - at - DEBOUNCE_MS),
      pushTimeMs: spreadOf(latencies.map((l) => l - (pushStartedAt - at))),
      convergedAfterDebounceMs: {
        p50: round1(Math.max(0, p50 - DEBOUNCE_MS)),
        p99: round1(Math.max(0, p99 - DEBOUNCE_MS)),
        max: round1(Math.max(0, max - DEBOUNCE_MS)),
      },
      resourcesEncoded: stats.misses - encodedBefore,
    }
  }

  process.stderr.write(`bench-xds ${mode}: ${CLIENTS} clients hold full config after ${fullConfigMs} ms\n`)
  let firstEndpointChange: Awaited<ReturnType<typeof change>>["convergedAfterDebounceMs"] | undefined
  for (let i = 0; i < WARMUP; i++) {
    const warm = await change("eds", false)
    firstEndpointChange ??= warm.convergedAfterDebounceMs
    await change("rds", false)
  }
  process.stderr.write(`bench-xds ${mode}: ${WARMUP} warm-up changes of each kind converged\n`)
  const floor = await startFloor(mode)
  process.stderr.write(`bench-xds ${mode} floor: ${CLIENTS} clients hold full config after ${floor.fullConfigMs} ms\n`)
  // The floor's code gets as many warm-up pushes as ours got warm-up changes.
  for (let i = 0; i < WARMUP; i++) await floor.push()
  // Our changes and the floor's pushes alternate, so that a slow spell of this small machine
  // weighs on both figures alike instead of deciding their ratio.
  const endpointRuns: Array<Awaited<ReturnType<typeof change>>> = []
  const floorRuns: Array<Awaited<ReturnType<typeof measureChange>>> = []
  for (let r = 0; r < REPEAT; r++) {
    endpointRuns.push(await change("eds", r === 0))
    floorRuns.push(await floor.push())
  }
  floor.stop()
  const { at: _at, latencies: _latencies, ...firstFloorRun } = floorRuns[0]!
  const floorEndpointChange = {
    ...firstFloorRun,
    convergedMs: medianSpread(floorRuns.map((r) => r.convergedMs)),
    serverCpuSeconds: median(floorRuns.map((r) => r.serverCpuSeconds)),
    repetitionsMs: floorRuns.map((r) => r.convergedMs),
  }
  const endpointChange = {
    ...endpointRuns[0]!,
    convergedMs: medianSpread(endpointRuns.map((r) => r.convergedMs)),
    convergedAfterDebounceMs: medianSpread(endpointRuns.map((r) => r.convergedAfterDebounceMs)),
    pushTimeMs: medianSpread(endpointRuns.map((r) => r.pushTimeMs)),
    pushStartAfterWindowMs: median(endpointRuns.map((r) => r.pushStartAfterWindowMs)),
    serverCpuSeconds: median(endpointRuns.map((r) => r.serverCpuSeconds)),
    repetitionsAfterDebounceMs: endpointRuns.map((r) => r.convergedAfterDebounceMs),
    repetitionsPushTimeMs: endpointRuns.map((r) => r.pushTimeMs),
  }
  process.stderr.write(`bench-xds ${mode}: ${REPEAT} endpoint changes and floor pushes converged\n`)
  const virtualServiceChange = await change("rds")
  process.stderr.write(`bench-xds ${mode}: VirtualService change converged\n`)
  clearInterval(sampler)
  clients.kill()
  const stats = await Effect.runPromise(server.cacheStats)
  const keepAlive = setInterval(() => {}, 1000)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  clearInterval(keepAlive)

  const ratio = (ours: number, base: number) => (base > 0 ? Math.round((ours / base) * 100) / 100 : null)
  const ratios = (ours: Spread, base: Spread) => ({
    p50: ratio(ours.p50, base.p50),
    p99: ratio(ours.p99, base.p99),
    max: ratio(ours.max, base.max),
  })
  return {
    mode,
    fullConfigMs,
    initialBytes,
    endpointChange: {
      ...endpointChange,
      floor: floorEndpointChange,
      pushTimeRatio: ratios(endpointChange.pushTimeMs, floorEndpointChange.convergedMs),
      afterWindowRatio: ratios(endpointChange.convergedAfterDebounceMs, floorEndpointChange.convergedMs),
    },
    virtualServiceChange,
    ...(firstEndpointChange !== undefined ? { firstEndpointChangeAfterDebounceMs: firstEndpointChange } : {}),
    serverPeakRssBytes: peakRss,
    cache: stats,
    floorFullConfigMs: floor.fullConfigMs,
  }
}

/**
 * Every response the floor sends, serialized before it starts: the initial answer per distinct
 * watch and type, and the endpoint change per distinct EDS watch (what our server sends: the
 * whole EDS watch for SotW, only the changed cluster for delta).
 */
const floorResponses = (mode: "sotw" | "delta"): FloorResponses => {
  const protos = loadXdsProtos()
  const methods = protos.ads as unknown as Record<string, { readonly responseSerialize: (value: unknown) => Buffer }>
  const serialize =
    methods[mode === "sotw" ? "StreamAggregatedResources" : "DeltaAggregatedResources"]!.responseSerialize
  const options = defaultXdsServerConfig.pushContext
  const before = makePushContext(makeInput(0, 0), options, "floor/0")
  const after = makePushContext(makeInput(1, 0), options, "floor/1")
  const cache = makeResourceCache(protos.codec)
  const respond = (push: typeof before, typeUrl: string, names: ReadonlyArray<string>, changeOnly: boolean) => {
    if (mode === "sotw")
      return sotwResponse(push, cache, { typeUrl, names: [...names].sort(), wildcard: false }, "f").response
    const watch = {
      typeUrl,
      subscribed: new Set(names),
      wildcard: false,
      known: new Map<string, string>(),
      pending: new Set<string>(),
    }
    if (changeOnly) {
      // What the client holds after the initial response: every resource at its first version.
      const held = deltaResponse(before, cache, { ...watch, pending: new Set(names) }, "f", true).sent
      for (const { name, version } of held) watch.known.set(name, version)
    } else watch.pending = new Set(names)
    return deltaResponse(push, cache, watch, "f", !changeOnly).response
  }
  const memo = new Map<string, Buffer | undefined>()
  const once = (key: string, build: () => unknown): Buffer | undefined => {
    if (!memo.has(key)) {
      const response = build()
      memo.set(key, response === undefined ? undefined : serialize(response))
    }
    return memo.get(key)
  }
  return {
    initial: (client, typeUrl) => {
      const names = namesOf(client)[typeUrl]
      if (names === undefined) return undefined
      return once(`0|${typeUrl}|${names.join(",")}`, () => respond(before, typeUrl, names, false))
    },
    change: (client) => {
      if (!affected(client)) return undefined
      const names = namesOf(client)[TypeUrl.Endpoint]!
      return once(`1|${names.join(",")}`, () => respond(after, TypeUrl.Endpoint, names, true))
    },
  }
}

type ToFloor = { readonly type: "push" } | { readonly type: "cpu" }
type FromFloor =
  | { readonly type: "listening"; readonly port: number }
  | { readonly type: "pushed"; readonly at: number }
  | { readonly type: "cpu"; readonly seconds: number }

/**
 * The floor's own process (`--role floor`): a bare grpc-js server with every response serialized
 * before it starts. On "push" it writes the change to the affected clients and says when it
 * began; on "cpu" it reports its CPU since that push.
 */
const runFloorProcess = async () => {
  const mode = arg("mode", "sotw") as "sotw" | "delta"
  const responses = floorResponses(mode)
  // Serialized up front, so that neither the connect phase nor the push pays for it.
  for (let c = 0; c < CLIENTS; c++) {
    for (const typeUrl of Object.keys(namesOf(c))) responses.initial(c, typeUrl)
    responses.change(c)
  }
  const floor = await startFloorServer(loadXdsProtos().ads, responses)
  const targets = Array.from({ length: CLIENTS }, (_, c) => c).filter(affected)
  const send = (m: FromFloor) => process.send?.(m)
  let cpuAtPush = process.cpuUsage()
  process.on("message", (message: ToFloor) => {
    if (message.type === "push") {
      cpuAtPush = process.cpuUsage()
      const at = now()
      void floor.push(targets)
      send({ type: "pushed", at })
    } else {
      const used = process.cpuUsage(cpuAtPush)
      send({ type: "cpu", seconds: (used.user + used.system) / 1e6 })
    }
  })
  send({ type: "listening", port: floor.port })
}

/**
 * The transport floor for one mode: same clients (in their own processes), same bytes, a bare
 * grpc-js server in a process of its own, so that it shares neither our heap nor our event loop.
 */
const startFloor = async (mode: "sotw" | "delta") => {
  const child = fork(
    fileURLToPath(import.meta.url),
    [
      ...["--role", "floor", "--mode", mode],
      ...["--services", String(SERVICES), "--clients", String(CLIENTS), "--watch", String(WATCH)],
    ],
    { stdio: ["ignore", "inherit", "inherit", "ipc"] },
  )
  const next = inboxOf<FromFloor>(child)
  const listening = await next()
  if (listening.type !== "listening") throw new Error(`floor process: unexpected ${listening.type}`)
  const t0 = now()
  const clients = spawnClients(listening.port, mode)
  const { fullConfigMs } = await awaitReady(clients, t0)
  return {
    fullConfigMs,
    push: () =>
      measureChange(clients, "eds", async () => {
        child.send({ type: "push" } satisfies ToFloor)
        const pushed = await next()
        if (pushed.type !== "pushed") throw new Error(`floor process: unexpected ${pushed.type}`)
        return {
          at: pushed.at,
          cpuSeconds: async () => {
            child.send({ type: "cpu" } satisfies ToFloor)
            const cpu = await next()
            return cpu.type === "cpu" ? cpu.seconds : 0
          },
        }
      }),
    stop: () => {
      clients.kill()
      child.kill()
    },
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
        warmupChanges: WARMUP,
        repetitions: REPEAT,
        results,
      },
      null,
      2,
    ),
  )
  process.exit(0)
}

const role = arg("role", "server")
if (role === "clients" || role === "floor") {
  // A child process outlives nothing: when the benchmark process dies, it goes too.
  process.on("disconnect", () => process.exit(0))
  void (role === "clients" ? runClients() : runFloorProcess())
} else void main()
