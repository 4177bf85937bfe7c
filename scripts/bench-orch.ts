/**
 * Orchestrator benchmark (issue 18's targets). Prints one JSON object on stdout; progress on stderr.
 *
 *   node dist/scripts/bench-orch.mjs [--services 1000] [--pods-per-service 10] [--nodes 50] [--crs 5000]
 *                                    [--clients 50] [--flips 20] [--warmup 2] [--unthrottled true]
 *                                    [--daemon-log FILE]
 *
 * The in-process orchestrator API server (test/support/orchestrator) is filled with `--services`
 * Services (a selector, one or two ports), their Pods (spread over `--nodes` Nodes with topology
 * labels), one ready EndpointSlice per Service, and `--crs` mesh custom resources
 * (DestinationRules and VirtualServices for those Services). Then the built `mesh-discovery`
 * starts against it (`--registries Orchestrator --orchconfig`, default API QPS/burst) and:
 *
 * - initial sync: spawn → `/ready` on --httpAddr answering 200; the daemon's VmHWM then and at
 *   the end (targets: < 5 s, < 600 MiB). With `--unthrottled true` a second daemon measures the
 *   sync again with `--orchestratorApiQPS 0` (no client-side throttle).
 * - propagation: `--clients` ADS streams (the project's own client, as proxyless gRPC: LDS/RDS
 *   `host:port`, CDS/EDS for svc-0's clusters) watch svc-0; one of its pods flips readiness (Pod
 *   condition and EndpointSlice endpoint condition, as the endpoint controller would) `--flips`
 *   times; per flip, the time from the write until every client has an EDS response
 *   (target p99 < PILOT_DEBOUNCE_AFTER + 100 ms).
 * - relist without change: watches dropped, a write elsewhere, history compacted (every informer
 *   gets 410 Gone and lists again); no push may follow: `pilot_inbound_updates`,
 *   `pilot_xds_pushes` before and after, and the responses the clients received.
 *
 * The API server and the clients share this process: its CPU for serving lists and watches is
 * reported (`benchProcessCpuSeconds`), so a distortion of the daemon's figures can be judged.
 *
 * `--apiserver real` runs the same cluster on the real kube-apiserver and etcd
 * (test/support/real-orchestrator.ts; built by scripts/build-orchestrator.sh): everything is created
 * through the API (`--concurrency` requests at once; a Pod's status through its status subresource,
 * the mesh CRDs installed first), then spawn → `/ready`, peak RSS and the readiness-flip → client
 * push latency are measured as above. The relist and unthrottled phases are the in-process run's
 * (the real server's 410s are tested in test/e2e/real-orchestrator-controllers.test.ts).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { Effect, Exit, Scope } from "effect"
import { makeAdsClient } from "../src/layers/xds-client/ads-client.js"
import { meshCrds } from "../src/services/install/crds.js"
import { clusterName } from "../src/services/xds/grpcgen/grpc-gen.js"
import { plainToStruct } from "../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import type { AdsClientShape } from "../src/services/xds-client/client.js"
import { discoveryArgs } from "../test/support/discovery.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../test/support/orchestrator/index.js"
import { meshCustomResources } from "../test/support/orchestrator/mesh-crds.js"
import { type Daemon, startDaemon } from "../test/support/processes.js"
import { type RealOrchestrator, realOrchestratorWith } from "../test/support/real-orchestrator.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}

const SERVICES = Number(arg("services", "1000"))
const PODS_PER_SERVICE = Number(arg("pods-per-service", "10"))
const NODES = Number(arg("nodes", "50"))
const CRS = Number(arg("crs", "5000"))
const CLIENTS = Number(arg("clients", "50"))
const FLIPS = Number(arg("flips", "20"))
/** Flips before the measured ones: the first pays the push path's JIT compilation. */
const WARMUP = Number(arg("warmup", "2"))
const UNTHROTTLED = arg("unthrottled", "true") !== "false"
/** `--daemon-log FILE`: the first daemon's output, written when it stops (for finding slow steps). */
const DAEMON_LOG = arg("daemon-log", "")
/** `in-process` (default) or `real`: kube-apiserver and etcd built from their Go modules. */
const API_SERVER = arg("apiserver", "in-process")
/** Requests in flight at once while filling the real API server. */
const CONCURRENCY = Number(arg("concurrency", "32"))
const DEBOUNCE_MS = 100
const SYNC_TARGET_MS = 5000
const RSS_TARGET_MIB = 600
const NS = "bench"
const TEAMS = ["team-0", "team-1", "team-2"]

const host = (i: number) => `svc-${i}.${NS}.svc.cluster.local`
const now = (): number => performance.now()
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const log = (line: string) => process.stderr.write(`bench-orch: ${line}\n`)
const round1 = (n: number) => Math.round(n * 10) / 10

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const until = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 10) => {
  const deadline = now() + timeoutMs
  while (now() < deadline) {
    if (await check()) return
    await sleep(everyMs)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

// ------------------------------------------------------------------------------------------------
// The cluster

/** Pod n's address: 10.1.0.1 onwards, 250 per /24. */
const podIp = (n: number) => `10.${1 + Math.floor(n / 62_500)}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`
/** Every other service has a second (HTTP) port. */
const twoPorts = (i: number) => i % 2 === 1

const pod = (i: number, p: number, ready: boolean): KubeObject => {
  const n = i * PODS_PER_SERVICE + p
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `svc-${i}-${p}`, namespace: NS, labels: { app: `svc-${i}`, version: p % 2 === 0 ? "v1" : "v2" } },
    spec: { nodeName: `node-${n % NODES}`, serviceAccountName: `svc-${i}`, containers: [{ name: "app" }] },
    status: {
      phase: "Running",
      podIP: podIp(n),
      podIPs: [{ ip: podIp(n) }],
      conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
    },
  }
}

/** svc-i's one EndpointSlice; `notReady` is the pod index whose endpoint is not ready, if any. */
const slice = (i: number, notReady?: number): KubeObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `svc-${i}-abcde`, namespace: NS, labels: { "kubernetes.io/service-name": `svc-${i}` } },
  addressType: "IPv4",
  endpoints: Array.from({ length: PODS_PER_SERVICE }, (_, p) => ({
    addresses: [podIp(i * PODS_PER_SERVICE + p)],
    conditions: { ready: p !== notReady, serving: true, terminating: false },
    nodeName: `node-${(i * PODS_PER_SERVICE + p) % NODES}`,
    targetRef: { kind: "Pod", namespace: NS, name: `svc-${i}-${p}` },
  })),
  ports: [
    { name: "grpc", port: 8080, protocol: "TCP" },
    ...(twoPorts(i) ? [{ name: "http-web", port: 8081, protocol: "TCP" }] : []),
  ],
})

const service = (i: number): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: `svc-${i}`, namespace: NS, labels: { app: `svc-${i}` } },
  spec: {
    clusterIP: `10.96.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    selector: { app: `svc-${i}` },
    ports: [
      { name: "grpc", port: 80, targetPort: 8080, protocol: "TCP" },
      ...(twoPorts(i) ? [{ name: "http-web", port: 8081, targetPort: 8081, protocol: "TCP" }] : []),
    ],
  },
})

/**
 * Custom resource k: first a DestinationRule (v1/v2 subsets) and a VirtualService (90/10 split)
 * per service in its namespace, then namespace-local ones (`exportTo: ["."]`) in team namespaces,
 * as client teams write them; all valid.
 */
const customResource = (k: number): KubeObject => {
  const inBench = k < 2 * SERVICES
  const i = inBench ? k % SERVICES : (k - 2 * SERVICES) % SERVICES
  const isRule = inBench ? k < SERVICES : (k - 2 * SERVICES) % 2 === 0
  const namespace = inBench ? NS : TEAMS[Math.floor((k - 2 * SERVICES) / SERVICES) % TEAMS.length]!
  const exportTo = inBench ? {} : { exportTo: ["."] }
  const metadata = { name: inBench ? `svc-${i}` : `svc-${i}-${k}`, namespace }
  return isRule
    ? {
        apiVersion: "networking.mesh.io/v1",
        kind: "DestinationRule",
        metadata,
        spec: {
          host: host(i),
          ...exportTo,
          trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
          subsets: [
            { name: "v1", labels: { version: "v1" } },
            { name: "v2", labels: { version: "v2" } },
          ],
        },
      }
    : {
        apiVersion: "networking.mesh.io/v1",
        kind: "VirtualService",
        metadata,
        spec: {
          hosts: [host(i)],
          ...exportTo,
          http: [
            {
              route: [
                { destination: { host: host(i), subset: "v1" }, weight: 90 },
                { destination: { host: host(i), subset: "v2" }, weight: 10 },
              ],
            },
          ],
        },
      }
}

const populate = (server: Orchestrator) => {
  for (const name of ["mesh-system", NS, ...TEAMS])
    server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
  server.put({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "trustDomain: cluster.local\n" },
  })
  for (let n = 0; n < NODES; n++)
    server.put({
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: `node-${n}`,
        labels: {
          "topology.kubernetes.io/region": `region-${n % 3}`,
          "topology.kubernetes.io/zone": `zone-${n % 10}`,
          "kubernetes.io/hostname": `node-${n}`,
        },
      },
    })
  for (let i = 0; i < SERVICES; i++) {
    server.put(service(i))
    for (let p = 0; p < PODS_PER_SERVICE; p++) server.put(pod(i, p, true))
    server.put(slice(i))
  }
  for (let k = 0; k < CRS; k++) server.put(customResource(k))
}

// ------------------------------------------------------------------------------------------------
// The daemon

/** `/proc/<pid>/status` VmHWM (peak RSS) and VmRSS in MiB. */
const memoryOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kib = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0)
  return { peakRssMiB: round1(kib("VmHWM") / 1024), rssMiB: round1(kib("VmRSS") / 1024) }
}

/** CPU seconds (user + system) of a process, from `/proc/<pid>/stat` (clock ticks of 1/100 s). */
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const benchCpu = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return Math.round((used.user + used.system) / 1e4) / 100
}

interface Started {
  readonly daemon: Daemon
  readonly pid: number
  readonly ads: string
  readonly monitoring: string
  readonly initialSyncMs: number
  /** When the daemon logged each start-up step, in ms after the spawn (from its log timestamps). */
  readonly milestonesMs: Record<string, number | null>
  readonly atReady: {
    readonly peakRssMiB: number
    readonly rssMiB: number
    readonly daemonCpuSeconds: number
    readonly benchProcessCpuSeconds: number
    readonly apiRequests: number
    readonly apiLists: number
  }
}

/** Starts mesh-discovery against `server` and waits for `/ready` on --httpAddr. */
const startDiscovery = async (server: Orchestrator, flags: Readonly<Record<string, string>> = {}): Promise<Started> => {
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": server.kubeconfig(),
    ...flags,
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  const requestsBefore = server.requestCount()
  const listsBefore = server.requestCount({ verb: "list" })
  const cpuBefore = process.cpuUsage()
  const t0 = now()
  const spawnedAt = Date.now()
  const daemon = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-bench",
    PILOT_DEBOUNCE_AFTER: `${DEBOUNCE_MS}ms`,
  })
  const pid = daemon.process.pid!
  // When the last list request for the large kinds arrived (sampled): splits listing from
  // processing. (The leader's controllers list other kinds later.)
  const large = { verb: "list" as const, path: /\/(pods|endpointslices|services|destinationrules|virtualservices)$/ }
  let lists = server.requestCount(large)
  let lastListMs = 0
  const sampler = setInterval(() => {
    const current = server.requestCount(large)
    if (current !== lists) lastListMs = Math.round(now() - t0)
    lists = current
  }, 10)
  const httpAddr = `127.0.0.1:${(await daemon.waitFor(/http listening on [\d.]+:(\d+)/, 60_000))[1]!}`
  await until(
    "/ready",
    async () => {
      try {
        return (await fetch(`http://${httpAddr}/ready`)).status === 200
      } catch {
        return false
      }
    },
    120_000,
  )
  const initialSyncMs = Math.round(now() - t0)
  clearInterval(sampler)
  const atReady = {
    ...memoryOf(pid),
    daemonCpuSeconds: cpuOf(pid),
    benchProcessCpuSeconds: benchCpu(cpuBefore),
    apiRequests: server.requestCount() - requestsBefore,
    apiLists: server.requestCount({ verb: "list" }) - listsBefore,
  }
  const ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 10_000))[1]!
  const monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 10_000))[1]!
  return {
    daemon,
    pid,
    ads,
    monitoring,
    initialSyncMs,
    milestonesMs: { ...milestones(daemon.output(), spawnedAt), lastLargeListRequest: lastListMs },
    atReady,
  }
}

const MILESTONES: Record<string, RegExp> = {
  firstLogLine: /^/,
  meshConfig: /mesh configuration: ConfigMap/,
  configSynced: /config from the orchestrator synced/,
  registrySynced: /orchestrator registry synced/,
  adsListening: /ADS server listening/,
  firstPushContext: /first configuration received/,
  httpListening: /\thttp listening on/,
}

const milestones = (output: string, spawnedAt: number): Record<string, number | null> => {
  const lines = output.split("\n")
  return Object.fromEntries(
    Object.entries(MILESTONES).map(([name, pattern]) => {
      const line = lines.find((l) => /^\d{4}-\d\d-\d\dT/.test(l) && pattern.test(l))
      const at = line === undefined ? Number.NaN : Date.parse(line.split("\t")[0]!)
      return [name, Number.isNaN(at) ? null : at - spawnedAt]
    }),
  )
}

/** Sum of a metric's samples (every label set) on the monitoring listener. */
const metric = async (monitoring: string, name: string, labels = ""): Promise<number> => {
  const text = await fetch(`http://${monitoring}/metrics`).then((r) => r.text())
  const sample = new RegExp(`^${name}(?:_total)?(\\{[^}]*\\})? (\\S+)$`)
  let total = 0
  for (const line of text.split("\n")) {
    const m = line.match(sample)
    if (m !== null && (labels === "" || (m[1] ?? "").includes(labels))) total += Number(m[2])
  }
  return total
}

const pushCounters = async (monitoring: string) => ({
  xdsPushes: await metric(monitoring, "pilot_xds_pushes"),
  edsPushes: await metric(monitoring, "pilot_xds_pushes", 'type="eds"'),
  inboundFull: await metric(monitoring, "pilot_inbound_updates", 'type="config"'),
  inboundEds: await metric(monitoring, "pilot_inbound_updates", 'type="eds"'),
})

// ------------------------------------------------------------------------------------------------
// Watching clients

const watchedClusters = [clusterName(host(0), 80), clusterName(host(0), 80, "v1"), clusterName(host(0), 80, "v2")]
const names: Record<string, ReadonlyArray<string>> = {
  [TypeUrl.Listener]: [`${host(0)}:80`],
  [TypeUrl.Route]: [`${host(0)}:80`],
  [TypeUrl.Cluster]: watchedClusters,
  [TypeUrl.Endpoint]: watchedClusters,
}
const typeName: Record<string, string> = {
  [TypeUrl.Listener]: "lds",
  [TypeUrl.Route]: "rds",
  [TypeUrl.Cluster]: "cds",
  [TypeUrl.Endpoint]: "eds",
}

interface Watchers {
  /** Responses received per type, over every client. */
  readonly responses: Record<string, number>
  /** Resolves once every client has an EDS response after this call; each client's receipt time. */
  readonly nextEds: () => Promise<ReadonlyArray<number>>
  /** Endpoints the verifying (decoding) client holds for svc-0's default cluster. */
  readonly endpoints: () => Promise<number>
}

const startWatchers = async (ads: string, scope: Scope.Scope): Promise<Watchers> => {
  const responses: Record<string, number> = { lds: 0, rds: 0, cds: 0, eds: 0 }
  let pending: { readonly left: Set<number>; readonly receipts: Array<number>; readonly done: () => void } | undefined
  const ready = new Set<number>()
  const start = (c: number, decode: boolean) =>
    makeAdsClient({
      address: ads,
      mode: "sotw",
      decode,
      node: {
        id: `sidecar~127.0.0.1~client-${c}.${NS}~${NS}.svc.cluster.local`,
        metadata: plainToStruct({ GENERATOR: "grpc" }),
        locality: { region: "region-0", zone: "zone-0" },
      },
      onResponse: (event) => {
        if (c < 0) return
        const type = typeName[event.typeUrl] ?? "other"
        responses[type] = (responses[type] ?? 0) + 1
        if (type !== "eds") return
        ready.add(c)
        if (pending?.left.delete(c)) {
          pending.receipts.push(now())
          if (pending.left.size === 0) pending.done()
        }
      },
    }).pipe(
      Effect.tap((client) => Effect.forEach(Object.keys(names), (t) => client.subscribe(t, names[t]!))),
      Scope.extend(scope),
    )
  await Effect.runPromise(
    Effect.forEach(
      Array.from({ length: CLIENTS }, (_, c) => c),
      (c) => start(c, false),
      { concurrency: 10 },
    ),
  )
  // One more client (not counted) decodes, so that each flip's result can be checked.
  const verifier: AdsClientShape = await Effect.runPromise(start(-1, true))
  await until("every client to hold svc-0's endpoints", () => ready.size === CLIENTS, 30_000)
  return {
    responses,
    nextEds: () =>
      new Promise((resolve) => {
        const receipts: Array<number> = []
        pending = {
          left: new Set(Array.from({ length: CLIENTS }, (_, c) => c)),
          receipts,
          done: () => {
            pending = undefined
            resolve(receipts)
          },
        }
      }),
    endpoints: async () => {
      const snapshot = await Effect.runPromise(verifier.snapshot)
      const held = snapshot.types.get(TypeUrl.Endpoint)?.resources.get(watchedClusters[0]!)?.resource as
        | { endpoints?: ReadonlyArray<{ lb_endpoints?: ReadonlyArray<unknown> }> }
        | undefined
      return (held?.endpoints ?? []).reduce((n, l) => n + (l.lb_endpoints?.length ?? 0), 0)
    },
  }
}

// ------------------------------------------------------------------------------------------------

const main = async () => {
  const server = await startOrchestrator({
    customResources: meshCustomResources(),
    token: "bench-token",
    // The population alone is ~17k writes; keep them (and the flips) in history.
    historyLimit: 100_000,
  })
  const populateStarted = now()
  populate(server)
  const populateMs = Math.round(now() - populateStarted)
  log(`populated ${SERVICES} services, ${SERVICES * PODS_PER_SERVICE} pods, ${CRS} CRs in ${populateMs} ms`)

  const started = await startDiscovery(server)
  const { daemon, pid, ads, monitoring } = started
  log(`ready after ${started.initialSyncMs} ms (peak RSS ${started.atReady.peakRssMiB} MiB)`)

  const scope = await Effect.runPromise(Scope.make())
  try {
    const watchers = await startWatchers(ads, scope)
    log(`${CLIENTS} clients hold svc-0's endpoints`)

    // Propagation: pod svc-0-0 (version v1) flips readiness.
    const flips: Array<{ allMs: number; clientMs: ReadonlyArray<number> }> = []
    const wrongEndpoints: Array<{ flip: number; expected: number; held: number }> = []
    const countersBeforeFlips = await pushCounters(monitoring)
    const responsesBeforeFlips = { ...watchers.responses }
    let firstFlipMs = 0
    for (let f = 0; f < WARMUP + FLIPS; f++) {
      const ready = f % 2 === 1
      const received = watchers.nextEds()
      const at = now()
      server.put(pod(0, 0, ready))
      server.put(slice(0, ready ? undefined : 0))
      const receipts = await Promise.race([
        received,
        sleep(10_000).then(() => Promise.reject(new Error(`flip ${f}: not every client got an EDS update in 10 s`))),
      ])
      const clientMs = receipts.map((t) => round1(t - at))
      const allMs = Math.max(...clientMs)
      if (f === 0) firstFlipMs = allMs
      if (f >= WARMUP) flips.push({ allMs, clientMs })
      // Let the push finish everywhere (and the next flip fall into a new debounce window).
      await sleep(DEBOUNCE_MS + 200)
      const expected = PODS_PER_SERVICE - (ready ? 0 : 1)
      const held = await watchers.endpoints()
      if (held !== expected) wrongEndpoints.push({ flip: f, expected, held })
    }
    const countersAfterFlips = await pushCounters(monitoring)
    const responsesDuringFlips = Object.fromEntries(
      Object.entries(watchers.responses).map(([t, n]) => [t, n - (responsesBeforeFlips[t] ?? 0)]),
    )
    const allMs = flips.map((f) => f.allMs)
    const perClient = flips.flatMap((f) => f.clientMs)
    const propagation = {
      flips: FLIPS,
      warmupFlips: WARMUP,
      clients: CLIENTS,
      debounceMs: DEBOUNCE_MS,
      p50Ms: round1(percentile(allMs, 50)),
      p99Ms: round1(percentile(allMs, 99)),
      maxMs: round1(Math.max(...allMs)),
      perClientP50Ms: round1(percentile(perClient, 50)),
      perClientP99Ms: round1(percentile(perClient, 99)),
      firstFlipMs,
      allClientsMs: allMs,
      /** Over warm-up and measured flips: one EDS response per client per flip is the ideal. */
      responsesPerClientPerFlip: Object.fromEntries(
        Object.entries(responsesDuringFlips).map(([t, n]) => [t, round1(n / CLIENTS / (WARMUP + FLIPS))]),
      ),
      inboundUpdates: {
        full: countersAfterFlips.inboundFull - countersBeforeFlips.inboundFull,
        eds: countersAfterFlips.inboundEds - countersBeforeFlips.inboundEds,
      },
      wrongEndpoints,
    }
    log(`propagation p50 ${propagation.p50Ms} ms, p99 ${propagation.p99Ms} ms`)

    // Relist without change: every informer's watch ends, its version expires, it lists again.
    await sleep(1500)
    const before = await pushCounters(monitoring)
    const responsesBefore = Object.values(watchers.responses).reduce((a, b) => a + b, 0)
    const listsBefore = server.requestCount({ verb: "list" })
    const podListsBefore = server.requestCount({ verb: "list", path: /\/pods/ })
    const watchesBefore = server.watchCount()
    const cpuBefore = cpuOf(pid)
    const relistStarted = now()
    server.dropWatches()
    server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bench-elsewhere", namespace: "default" } })
    server.compact()
    await until(
      "the pods to be listed again",
      () => server.requestCount({ verb: "list", path: /\/pods/ }) > podListsBefore,
      30_000,
    )
    // Every informer lists again; then wait until the watch count is back and a debounce window has passed.
    let lists = -1
    await until(
      "the relists to settle",
      () => {
        const current = server.requestCount({ verb: "list" })
        const settled = current === lists && server.watchCount() >= watchesBefore
        lists = current
        return settled
      },
      30_000,
      500,
    )
    const relistMs = Math.round(now() - relistStarted)
    await sleep(DEBOUNCE_MS + 1000)
    const after = await pushCounters(monitoring)
    const responsesAfter = Object.values(watchers.responses).reduce((a, b) => a + b, 0)
    const relist = {
      lists: server.requestCount({ verb: "list" }) - listsBefore,
      watchesBefore,
      watchesAfter: server.watchCount(),
      settledMs: relistMs,
      daemonCpuSeconds: round1((cpuOf(pid) - cpuBefore) * 100) / 100,
      pushesBefore: before.xdsPushes,
      pushesAfter: after.xdsPushes,
      inboundFullBefore: before.inboundFull,
      inboundFullAfter: after.inboundFull,
      inboundEdsBefore: before.inboundEds,
      inboundEdsAfter: after.inboundEds,
      responsesReceived: responsesAfter - responsesBefore,
    }
    log(
      `relist: ${relist.lists} lists, ${relist.pushesAfter - relist.pushesBefore} pushes, ${relist.responsesReceived} responses`,
    )

    const end = memoryOf(pid)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await daemon.stop()
    if (DAEMON_LOG !== "") writeFileSync(DAEMON_LOG, daemon.output())

    // The same sync without the client-side throttle.
    let unthrottled: { initialSyncMs: number; peakRssMiB: number; apiRequests: number } | undefined
    if (UNTHROTTLED) {
      const again = await startDiscovery(server, { "--orchestratorApiQPS": "0" })
      unthrottled = {
        initialSyncMs: again.initialSyncMs,
        peakRssMiB: again.atReady.peakRssMiB,
        apiRequests: again.atReady.apiRequests,
      }
      log(`unthrottled: ready after ${again.initialSyncMs} ms`)
      await again.daemon.stop()
    }
    await server.close()

    const peakRssMiB = Math.max(end.peakRssMiB, started.atReady.peakRssMiB)
    console.log(
      JSON.stringify(
        {
          services: SERVICES,
          pods: SERVICES * PODS_PER_SERVICE,
          endpointSlices: SERVICES,
          nodes: NODES,
          crs: CRS,
          populateMs,
          initialSyncMs: started.initialSyncMs,
          initialSync: {
            milestonesMs: started.milestonesMs,
            apiQps: 80,
            apiBurst: 160,
            ...started.atReady,
            ...(unthrottled === undefined ? {} : { unthrottled }),
          },
          peakRssMiB,
          rssAtEndMiB: end.rssMiB,
          propagation,
          relist,
          targets: {
            initialSyncUnder5s: started.initialSyncMs < SYNC_TARGET_MS,
            rssUnder600MiB: peakRssMiB < RSS_TARGET_MIB,
            propagationP99UnderDebouncePlus100Ms: propagation.p99Ms < DEBOUNCE_MS + 100,
            propagationCorrect: wrongEndpoints.length === 0,
            relistNoPush:
              relist.pushesAfter === relist.pushesBefore &&
              relist.inboundFullAfter === relist.inboundFullBefore &&
              relist.inboundEdsAfter === relist.inboundEdsBefore &&
              relist.responsesReceived === 0,
          },
          notes: [
            "The API server and the watching clients run in the benchmark process; initialSync.benchProcessCpuSeconds is its CPU during the sync (serving the lists), on a machine whose cores the daemon shares.",
            "Clients are the project's ADS client (SotW, proxyless-style LDS/RDS/CDS/EDS for svc-0); grpc-js may share one connection between them.",
          ],
        },
        null,
        2,
      ),
    )
  } catch (error) {
    process.stderr.write(
      `bench-orch failed: ${String(error)}\n--- daemon output (tail) ---\n${daemon.output().slice(-4000)}\n`,
    )
    await daemon.stop()
    await server.close()
    process.exit(1)
  }
  process.exit(0)
}

// ------------------------------------------------------------------------------------------------
// The real API server

/** Runs `work` over `items` with at most CONCURRENCY at once. */
const inBatches = async <A>(items: ReadonlyArray<A>, work: (item: A) => Promise<unknown>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!)
    }),
  )
}

/** The API path of an object's collection. */
const collection = (o: KubeObject): string => {
  const apiVersion = o.apiVersion ?? "v1"
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion]
  // Every kind created here takes a plain "s" (services, pods, endpointslices, destinationrules, ...).
  const plural = `${(o.kind ?? "").toLowerCase()}s`
  const ns = o.metadata.namespace === undefined ? "" : `/namespaces/${o.metadata.namespace}`
  return `${group === "" ? "/api" : `/apis/${group}`}/${version}${ns}/${plural}`
}

const create = (orch: RealOrchestrator, o: KubeObject) => orch.ok("POST", collection(o), { body: o })

const populateReal = async (orch: RealOrchestrator) => {
  for (const name of ["mesh-system", NS, ...TEAMS])
    await create(orch, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  await create(orch, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "trustDomain: cluster.local\n" },
  } as KubeObject)
  if (CRS > 0) {
    const crds = meshCrds({}) as unknown as ReadonlyArray<KubeObject>
    await inBatches(crds, (crd) => create(orch, crd))
    await until(
      "the mesh CRDs to be established",
      async () => {
        const list = await orch.ok("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        return (list.items as Array<{ status?: { conditions?: Array<{ type: string; status: string }> } }>).every(
          (c) => c.status?.conditions?.some((k) => k.type === "Established" && k.status === "True") === true,
        )
      },
      60_000,
      200,
    )
  }
  const nodes = Array.from({ length: NODES }, (_, n) => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: `node-${n}`,
      labels: {
        "topology.kubernetes.io/region": `region-${n % 3}`,
        "topology.kubernetes.io/zone": `zone-${n % 10}`,
        "kubernetes.io/hostname": `node-${n}`,
      },
    },
  }))
  await inBatches(nodes, (o) => create(orch, o))
  // The ServiceAccount admission plugin refuses Pods whose account does not exist.
  const indices = Array.from({ length: SERVICES }, (_, i) => i)
  await inBatches(indices, (i) =>
    create(orch, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: `svc-${i}`, namespace: NS } }),
  )
  // The real server allocates cluster IPs (10.96.0.1 is already the `kubernetes` Service's).
  await inBatches(indices, (i) => {
    const { clusterIP: _, ...spec } = service(i).spec as Record<string, unknown>
    return create(orch, { ...service(i), spec } as KubeObject)
  })
  log("services created")
  const pods = indices.flatMap((i) => Array.from({ length: PODS_PER_SERVICE }, (_, p) => [i, p] as const))
  let done = 0
  await inBatches(pods, async ([i, p]) => {
    const { status, ...spec } = pod(i, p, true)
    const withImage = {
      ...spec,
      spec: { ...(spec.spec as Record<string, unknown>), containers: [{ name: "app", image: "example/app:1" }] },
    }
    const created = await create(orch, withImage as KubeObject)
    // A create drops status: the kubelet's part, through the status subresource.
    await orch.ok("PUT", `${collection(spec as KubeObject)}/${spec.metadata.name}/status`, {
      body: { ...created, status },
    })
    if (++done % 2000 === 0) log(`${done} pods`)
  })
  await inBatches(indices, (i) => create(orch, slice(i)))
  await inBatches(
    Array.from({ length: CRS }, (_, k) => k),
    (k) => create(orch, customResource(k)),
  )
}

const mainReal = async () => {
  const scope = await Effect.runPromise(Scope.make())
  const orch = await Effect.runPromise(realOrchestratorWith().pipe(Scope.extend(scope)))
  log(`kube-apiserver ${orch.versions.kube} ready in ${orch.startMillis} ms`)
  const populateStarted = now()
  await populateReal(orch)
  const populateMs = Math.round(now() - populateStarted)
  log(`populated ${SERVICES} services, ${SERVICES * PODS_PER_SERVICE} pods, ${CRS} CRs in ${populateMs} ms`)

  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orch.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  const t0 = now()
  const spawnedAt = Date.now()
  const daemon = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-bench",
    POD_NAMESPACE: "mesh-system",
    PILOT_DEBOUNCE_AFTER: `${DEBOUNCE_MS}ms`,
  })
  const pid = daemon.process.pid!
  const watchScope = await Effect.runPromise(Scope.make())
  try {
    const httpAddr = `127.0.0.1:${(await daemon.waitFor(/http listening on [\d.]+:(\d+)/, 60_000))[1]!}`
    await until(
      "/ready",
      async () => {
        try {
          return (await fetch(`http://${httpAddr}/ready`)).status === 200
        } catch {
          return false
        }
      },
      180_000,
    )
    const initialSyncMs = Math.round(now() - t0)
    const atReady = { ...memoryOf(pid), daemonCpuSeconds: cpuOf(pid) }
    log(`ready after ${initialSyncMs} ms (peak RSS ${atReady.peakRssMiB} MiB)`)
    const ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 10_000))[1]!
    const monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 10_000))[1]!
    const watchers = await startWatchers(ads, watchScope)
    log(`${CLIENTS} clients hold svc-0's endpoints`)

    const flips: Array<number> = []
    const perClient: Array<number> = []
    const wrongEndpoints: Array<{ flip: number; expected: number; held: number }> = []
    const countersBefore = await pushCounters(monitoring)
    const podPath = `/api/v1/namespaces/${NS}/pods/svc-0-0/status`
    const slicePath = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/svc-0-abcde`
    const merge = "application/merge-patch+json"
    for (let f = 0; f < WARMUP + FLIPS; f++) {
      const ready = f % 2 === 1
      const received = watchers.nextEds()
      const at = now()
      // As the kubelet and the EndpointSlice controller would: the Pod's condition, then the slice's.
      await orch.ok("PATCH", podPath, {
        body: { status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] } },
        contentType: merge,
      })
      await orch.ok("PATCH", slicePath, {
        body: { endpoints: slice(0, ready ? undefined : 0).endpoints },
        contentType: merge,
      })
      const receipts = await Promise.race([
        received,
        sleep(10_000).then(() => Promise.reject(new Error(`flip ${f}: not every client got an EDS update in 10 s`))),
      ])
      const clientMs = receipts.map((t) => round1(t - at))
      if (f >= WARMUP) {
        flips.push(Math.max(...clientMs))
        perClient.push(...clientMs)
      }
      await sleep(DEBOUNCE_MS + 200)
      const expected = PODS_PER_SERVICE - (ready ? 0 : 1)
      const held = await watchers.endpoints()
      if (held !== expected) wrongEndpoints.push({ flip: f, expected, held })
    }
    const countersAfter = await pushCounters(monitoring)
    const end = memoryOf(pid)
    const peakRssMiB = Math.max(end.peakRssMiB, atReady.peakRssMiB)
    console.log(
      JSON.stringify(
        {
          apiServer: `kube-apiserver ${orch.versions.kube}, etcd ${orch.versions.etcd}`,
          services: SERVICES,
          pods: SERVICES * PODS_PER_SERVICE,
          endpointSlices: SERVICES,
          nodes: NODES,
          crs: CRS,
          apiServerStartMs: orch.startMillis,
          populateMs,
          populateConcurrency: CONCURRENCY,
          initialSyncMs,
          initialSync: { milestonesMs: milestones(daemon.output(), spawnedAt), ...atReady },
          peakRssMiB,
          rssAtEndMiB: end.rssMiB,
          propagation: {
            flips: FLIPS,
            warmupFlips: WARMUP,
            clients: CLIENTS,
            debounceMs: DEBOUNCE_MS,
            p50Ms: round1(percentile(flips, 50)),
            p99Ms: round1(percentile(flips, 99)),
            maxMs: round1(Math.max(...flips)),
            perClientP50Ms: round1(percentile(perClient, 50)),
            perClientP99Ms: round1(percentile(perClient, 99)),
            allClientsMs: flips,
            edsPushes: countersAfter.edsPushes - countersBefore.edsPushes,
            inboundUpdates: {
              full: countersAfter.inboundFull - countersBefore.inboundFull,
              eds: countersAfter.inboundEds - countersBefore.inboundEds,
            },
            wrongEndpoints,
          },
          targets: {
            initialSyncUnder5s: initialSyncMs < SYNC_TARGET_MS,
            rssUnder600MiB: peakRssMiB < RSS_TARGET_MIB,
            propagationP99UnderDebouncePlus100Ms: percentile(flips, 99) < DEBOUNCE_MS + 100,
            propagationCorrect: wrongEndpoints.length === 0,
          },
          notes: [
            "A flip is two API requests (Pod status, then EndpointSlice), timed from before the first: the real server's write and watch latency is in the figure.",
            "kube-apiserver and etcd run beside the daemon on the same cores; the clients run in the benchmark process.",
          ],
        },
        null,
        2,
      ),
    )
  } catch (error) {
    process.stderr.write(
      `bench-orch failed: ${String(error)}\n--- daemon output (tail) ---\n${daemon.output().slice(-4000)}\n`,
    )
    process.exitCode = 1
  } finally {
    await Effect.runPromise(Scope.close(watchScope, Exit.void))
    await daemon.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  process.exit(process.exitCode ?? 0)
}

void (API_SERVER === "real" ? mainReal() : main())
