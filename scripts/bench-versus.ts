/**
 * mesh-discovery side by side with the reference control plane (pilot-discovery, built from its Go
 * module by scripts/build-reference.sh), on one real API server holding one workload (issue 39).
 * Prints a table on stdout (progress on stderr) and, as its last line, one JSON object.
 *
 *   npm run bench:versus -- [--scale 1] [--procs 2] [--only both|mesh|reference|none]
 *                           [--flips 200] [--flip-rate 10] [--config-changes 20] [--cpu-prof DIR]
 *                           [--sidecars 1000] [--grpc-clients 1000] [--full-config-timeout 600]
 *                           [--server-log DIR] [--concurrency 32]
 *                           [--stop-after ready|all] [--repeat 1] [--hold FILE]
 *
 * (`--sidecars`/`--grpc-clients` are scaled by `--scale` too; `--full-config-timeout` is in
 * seconds; `BENCH_VERSUS_DEBUG=1` logs every write and every tracked response.)
 *
 * The workload (scripts/bench-versus-workload.ts), times `--scale`: 1,000 Services with 10 Pods
 * each and their EndpointSlices, 200 VirtualServices and DestinationRules, 50 AuthorizationPolicies,
 * 20 Gateways, written once through the API (the mesh resources once per API group family, so each
 * server reads its own copy). Then, one control plane at a time on that state:
 *
 * - spawn → ready (its readiness endpoint answers 200), its CPU seconds and peak RSS then;
 * - 1,000 sidecar ADS clients and 1,000 proxyless gRPC clients (times `--scale`) connect from
 *   `--procs` child processes (scripts/bench-versus-clients.ts); the time until every one holds
 *   full config, the server's CPU for it (per client) and its peak RSS;
 * - `--flips` endpoint changes at `--flip-rate` per second (a pod's readiness and its EndpointSlice
 *   endpoint, as kubelet and the EndpointSlice controller write them): per change, the time from
 *   the first write to the last affected client's EDS receipt of that service's cluster;
 * - `--config-changes` VirtualService weight changes, one at a time: the time from the write to the
 *   last affected client's RDS receipt (sidecars: the port's route; gRPC clients watching it: its route);
 * - per phase: bytes the clients received per change, the server's CPU per change, the machine's
 *   1-minute load average (mean of 1 s samples: the other processes on the machine show there).
 *
 * Between the two runs the API server's state is put back (pods ready, weights as written), so both
 * start from the same objects. `--cpu-prof DIR` writes a V8 CPU profile of mesh-discovery into DIR.
 *
 * `--stop-after ready` stops each server once it is ready (no clients, no changes: the table's
 * other rows stay empty), for working on start-up at scale. `--repeat N` runs each server N times
 * on the one workload (alternating), logs every run and reports the run with the median time to
 * ready: one workload write (some 40 s at scale 1) serves several samples. `--hold FILE` writes the
 * API server's admin kubeconfig to FILE once the runs are done and keeps the API server and its
 * state up until SIGINT/SIGTERM, so servers started by hand (a profiler, a changed build) see the
 * same objects without writing them again.
 */
import { type ChildProcess, fork } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { parseAllDocuments } from "yaml"
import { meshCrds } from "../src/services/install/crds.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { type RealOrchestrator, realOrchestratorWith } from "../test/support/real-orchestrator.js"
import { arg, now, percentile, round1 } from "./bench-support.js"
import {
  type ClientPlan,
  clusterOf,
  type FromClients,
  grpcHosts,
  probeGrpcRoute,
  probeSidecar,
  runClients,
  type ToClients,
} from "./bench-versus-clients.js"
import {
  type ControlPlane,
  cpuSecondsOf,
  DEBOUNCE,
  loadAverage,
  peakRssMiBOf,
  referenceBinary,
  referenceCrdsYaml,
  referenceVersion,
  startMesh,
  startReference,
} from "./bench-versus-servers.js"
import {
  collection,
  type Groups,
  host,
  meshObjects,
  NODES,
  NS,
  node,
  type Obj,
  PODS_PER_SERVICE,
  pod,
  podStatus,
  service,
  slice,
  sliceName,
  virtualService,
  type Workload,
  workloadAt,
} from "./bench-versus-workload.js"

const SCALE = Number(arg("scale", "1"))
const SIDECARS = Math.max(1, Math.round(Number(arg("sidecars", "1000")) * SCALE))
const GRPC_CLIENTS = Math.max(1, Math.round(Number(arg("grpc-clients", "1000")) * SCALE))
const PROCS = Number(arg("procs", "2"))
const ONLY = arg("only", "both")
const FLIPS = Number(arg("flips", "200"))
const FLIP_RATE = Number(arg("flip-rate", "10"))
const CONFIG_CHANGES = Number(arg("config-changes", "20"))
const CPU_PROF = arg("cpu-prof", "")
const CONCURRENCY = Number(arg("concurrency", "32"))
/** How long the clients may take to hold full config, and a change to reach them all. */
const FULL_CONFIG_TIMEOUT_MS = Number(arg("full-config-timeout", "600")) * 1000
const CHANGE_TIMEOUT_MS = 120_000
/** `--server-log DIR`: each server's output (head and tail) is written there when it stops. */
const SERVER_LOG = arg("server-log", "")
/** `ready`: each run ends once the server is ready; `all` (default): every phase. */
const STOP_AFTER = arg("stop-after", "all")
const REPEAT = Math.max(1, Number(arg("repeat", "1")))
const HOLD = arg("hold", "")

const DEBUG = process.env.BENCH_VERSUS_DEBUG === "1"
const log = (line: string) => process.stderr.write(`bench-versus: ${line}\n`)
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// ------------------------------------------------------------------------------------------------
// The cluster

const inBatches = async <A>(items: ReadonlyArray<A>, work: (item: A) => Promise<unknown>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!)
    }),
  )
}

const create = (orch: RealOrchestrator, o: Obj) => orch.ok("POST", collection(o), { body: o })
const MERGE = "application/merge-patch+json"

const waitEstablished = async (orch: RealOrchestrator) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    const list = await orch.ok("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
    const all = (list.items as Array<Obj>).every((c) =>
      (c.status?.conditions as Array<Obj> | undefined)?.some((k) => k.type === "Established" && k.status === "True"),
    )
    if (all) return
    if (Date.now() > deadline) throw new Error("CRDs not established in 120 s")
    await sleep(200)
  }
}

/**
 * The mesh resources are written once, in the reference's groups: mesh-discovery reads them as
 * their upstream aliases, as it reads a cluster moved from the reference; both servers parse the
 * same objects, and both see the same config changes.
 */
const WRITTEN_GROUPS: Groups = "reference"

const populate = async (orch: RealOrchestrator, w: Workload) => {
  for (const name of [NS, "mesh-system", "istio-system"])
    await create(orch, { apiVersion: "v1", kind: "Namespace", metadata: { name } })
  // The ServiceAccount admission plugin refuses Pods whose account does not exist.
  await create(orch, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: NS } })
  await create(orch, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "mesh", namespace: "mesh-system" },
    data: { mesh: "trustDomain: cluster.local\n" },
  })
  const referenceCrds = parseAllDocuments(referenceCrdsYaml())
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o?.kind === "CustomResourceDefinition")
  await inBatches([...(meshCrds({}) as ReadonlyArray<Obj>), ...referenceCrds], (crd) => create(orch, crd))
  await waitEstablished(orch)
  // The Nodes the pods name (both servers read a pod's locality from its node).
  await inBatches(
    Array.from({ length: NODES }, (_, n) => n),
    (n) => create(orch, node(n)),
  )
  const indices = Array.from({ length: w.services }, (_, i) => i)
  await inBatches(indices, (i) => create(orch, service(i)))
  log(`${w.services} services`)
  const pods = indices.flatMap((i) => Array.from({ length: PODS_PER_SERVICE }, (_, p) => [i, p] as const))
  let done = 0
  await inBatches(pods, async ([i, p]) => {
    const created = await create(orch, pod(i, p))
    // A create drops status: the kubelet's part, through the status subresource.
    await orch.ok("PUT", `${collection(created)}/${created.metadata.name}/status`, {
      body: { ...created, status: podStatus(i, p, true) },
    })
    if (++done % 2000 === 0) log(`${done} pods`)
  })
  await inBatches(indices, (i) => create(orch, slice(i)))
  await inBatches(meshObjects(WRITTEN_GROUPS, w), (o) => create(orch, o))
}

/** Pod p of service i becomes (not) ready, as kubelet and then the EndpointSlice controller write it. */
const setReady = async (orch: RealOrchestrator, i: number, ready: boolean) => {
  await orch.ok("PATCH", `/api/v1/namespaces/${NS}/pods/svc-${i}-0/status`, {
    body: { status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] } },
    contentType: MERGE,
  })
  await orch.ok("PATCH", `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices/${sliceName(i)}`, {
    body: { endpoints: slice(i, ready ? new Set() : new Set([0])).endpoints },
    contentType: MERGE,
  })
}

const setWeight = (orch: RealOrchestrator, i: number, v1Weight: number) => {
  const vs = virtualService(WRITTEN_GROUPS, i, v1Weight)
  return orch.ok("PATCH", `${collection(vs)}/${vs.metadata.name}`, { body: { spec: vs.spec }, contentType: MERGE })
}

// ------------------------------------------------------------------------------------------------
// Client processes

interface Clients {
  readonly ready: Promise<{ at: number; bytes: number }>
  readonly bytes: () => Promise<number>
  /** Arms every child for a change; resolves when all are armed, with the promise of its convergence. */
  readonly track: (
    typeUrl: string,
    names: ReadonlyArray<string>,
  ) => Promise<{ readonly converged: Promise<{ last: number; clients: number }> }>
  /** Clients holding full config by the children's last progress reports. */
  readonly readySoFar: () => number
  readonly kill: () => void
}

const startClients = (plans: ReadonlyArray<ClientPlan>): Clients => {
  const self = fileURLToPath(import.meta.url)
  const children: Array<ChildProcess> = plans.map(() =>
    fork(self, ["--role", "clients"], { stdio: ["ignore", "inherit", "inherit", "ipc"] }),
  )
  let failed: ((e: Error) => void) | undefined
  const failure = new Promise<never>((_, reject) => {
    failed = reject
  })
  failure.catch(() => {})
  const readies: Array<Promise<{ at: number; bytes: number }>> = []
  const progress: Array<number> = children.map(() => 0)
  const bytesWaiters: Array<Array<(n: number) => void>> = children.map(() => [])
  const armWaiters = new Map<number, { left: number; resolve: () => void }>()
  const convergeWaiters = new Map<
    number,
    { left: number; last: number; clients: number; resolve: (r: { last: number; clients: number }) => void }
  >()
  children.forEach((child, c) => {
    let readyResolve: (r: { at: number; bytes: number }) => void = () => {}
    readies.push(new Promise((r) => (readyResolve = r)))
    child.on("message", (m: FromClients) => {
      if (m.type === "ready") {
        progress[c] = m.ready
        readyResolve({ at: m.at, bytes: m.bytes })
      } else if (m.type === "progress") progress[c] = m.ready
      else if (m.type === "bytes") bytesWaiters[c]!.shift()?.(m.bytes)
      else if (m.type === "failed") failed?.(new Error(`client process ${c}: ${m.message}`))
      else if (m.type === "armed") {
        const w = armWaiters.get(m.id)
        if (w !== undefined && --w.left === 0) w.resolve()
      } else if (m.type === "converged") {
        const w = convergeWaiters.get(m.id)
        if (w === undefined) return
        w.last = Math.max(w.last, m.last)
        w.clients += m.clients
        if (--w.left === 0) {
          convergeWaiters.delete(m.id)
          w.resolve({ last: w.last, clients: w.clients })
        }
      }
    })
    child.once("exit", (code) => failed?.(new Error(`client process ${c} exited (${code})`)))
    child.send({ type: "plan", plan: plans[c]! } satisfies ToClients)
  })
  let ids = 0
  return {
    ready: Promise.race([
      Promise.all(readies).then((all) => ({
        at: Math.max(...all.map((r) => r.at)),
        bytes: all.reduce((n, r) => n + r.bytes, 0),
      })),
      failure,
    ]),
    bytes: async () => {
      const all = await Promise.all(
        children.map(
          (child, c) =>
            new Promise<number>((resolve) => {
              bytesWaiters[c]!.push(resolve)
              child.send({ type: "bytes" } satisfies ToClients)
            }),
        ),
      )
      return all.reduce((a, b) => a + b, 0)
    },
    track: async (typeUrl, names) => {
      const id = ++ids
      const converged = new Promise<{ last: number; clients: number }>((resolve) =>
        convergeWaiters.set(id, { left: children.length, last: 0, clients: 0, resolve }),
      )
      await Promise.race([
        new Promise<void>((resolve) => {
          armWaiters.set(id, { left: children.length, resolve })
          for (const child of children)
            child.send({ type: "track", id, typeUrl, names: [...names] } satisfies ToClients)
        }),
        failure,
      ])
      armWaiters.delete(id)
      return { converged: Promise.race([converged, failure]) }
    },
    readySoFar: () => progress.reduce((a, b) => a + b, 0),
    kill: () => {
      failed = undefined
      for (const child of children) child.kill("SIGKILL")
    },
  }
}

const plansFor = (address: string, w: Workload, sidecarNames: ClientPlan["sidecarNames"], grpcRoute: string) =>
  Array.from({ length: PROCS }, (_, p): ClientPlan => {
    const share = (count: number) => {
      const per = Math.ceil(count / PROCS)
      return { from: p * per, count: Math.max(0, Math.min(per, count - p * per)) }
    }
    const s = share(SIDECARS)
    const g = share(GRPC_CLIENTS)
    return {
      address,
      sidecarFrom: s.from,
      sidecars: s.count,
      grpcFrom: g.from,
      grpcClients: g.count,
      services: w.services,
      routed: w.routed,
      sidecarNames,
      grpcRouteTemplate: grpcRoute,
    }
  })

// ------------------------------------------------------------------------------------------------
// One control plane's run

/** Samples the 1-minute load average every second until stopped; the mean. */
const loadSampler = () => {
  const samples = [loadAverage()]
  const timer = setInterval(() => samples.push(loadAverage()), 1000)
  return () => {
    clearInterval(timer)
    return round1(samples.reduce((a, b) => a + b, 0) / samples.length)
  }
}

interface ChangePhase {
  readonly changes: number
  readonly converged: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly bytesPerChange: number
  readonly cpuMsPerChange: number
  readonly load: number
}

export interface RunResult {
  readonly readyMs: number
  readonly readyCpuS: number
  readonly readyRssMiB: number
  readonly readyLoad: number
  /** What a sidecar is sent (undefined with `--stop-after ready`, as are the rows below). */
  readonly probe:
    | {
        readonly clusters: number
        readonly listeners: number
        readonly edsNames: number
        readonly routes: ReadonlyArray<string>
        readonly grpcRoute: string
      }
    | undefined
  /** Clients holding full config when that phase ended (all of them, unless it timed out). */
  readonly clientsWithFullConfig: number | undefined
  /** Undefined from here on when not every client held full config in time (the changes are not run then). */
  readonly fullConfigMs: number | undefined
  readonly fullConfigCpuS: number | undefined
  readonly cpuMsPerFullConfig: number | undefined
  readonly fullConfigRssMiB: number | undefined
  readonly bytesPerClient: number | undefined
  readonly fullConfigLoad: number | undefined
  readonly endpointChanges: ChangePhase | undefined
  readonly configChanges: ChangePhase | undefined
  readonly peakRssMiB: number
}

const phaseOf = async (
  plane: ControlPlane,
  clients: Clients,
  count: number,
  /** Makes change k; resolves once it is written, with when it reached every affected client. */
  issue: (k: number) => Promise<{ readonly converged: Promise<{ last: number; clients: number } | undefined> }>,
  spacingMs: number,
  sequential: boolean,
): Promise<ChangePhase> => {
  const stopLoad = loadSampler()
  const bytes0 = await clients.bytes()
  const cpu0 = cpuSecondsOf(plane.pid)
  const started = now()
  const latencies: Array<number> = []
  const pending: Array<Promise<void>> = []
  for (let k = 0; k < count; k++) {
    const due = started + k * spacingMs
    if (now() < due) await sleep(due - now())
    const at = now()
    const { converged } = await issue(k)
    const measured = converged.then((r) => {
      if (r !== undefined && r.clients > 0) latencies.push(r.last - at)
    })
    if (sequential) {
      await measured
      await sleep(spacingMs)
    } else pending.push(measured)
  }
  await Promise.all(pending)
  const cpu = cpuSecondsOf(plane.pid) - cpu0
  const bytes = (await clients.bytes()) - bytes0
  return {
    changes: count,
    converged: latencies.length,
    p50Ms: round1(percentile(latencies, 50)),
    p99Ms: round1(percentile(latencies, 99)),
    maxMs: round1(Math.max(0, ...latencies)),
    bytesPerChange: Math.round(bytes / Math.max(1, count)),
    cpuMsPerChange: round1((cpu * 1000) / Math.max(1, count)),
    load: stopLoad(),
  }
}

const withTimeout = <A>(p: Promise<A>, ms: number, what: string): Promise<A | undefined> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => {
        log(`${what}: not every affected client received it in ${ms / 1000} s`)
        resolve(undefined)
      }, ms)
    }),
  ])
}

const runOne = async (
  plane: ControlPlane,
  orch: RealOrchestrator,
  w: Workload,
  started: number,
): Promise<RunResult> => {
  const stopReadyLoad = loadSampler()
  const ads = await plane.ready()
  const readyMs = Math.round(now() - started)
  const readyCpuS = cpuSecondsOf(plane.pid)
  const readyRssMiB = peakRssMiBOf(plane.pid)
  const readyLoad = stopReadyLoad()
  log(`${plane.name}: ready in ${readyMs} ms, ${readyCpuS} CPU s, ${readyRssMiB} MiB`)
  if (STOP_AFTER === "ready")
    return {
      readyMs,
      readyCpuS,
      readyRssMiB,
      readyLoad,
      probe: undefined,
      clientsWithFullConfig: undefined,
      fullConfigMs: undefined,
      fullConfigCpuS: undefined,
      cpuMsPerFullConfig: undefined,
      fullConfigRssMiB: undefined,
      bytesPerClient: undefined,
      fullConfigLoad: undefined,
      endpointChanges: undefined,
      configChanges: undefined,
      peakRssMiB: readyRssMiB,
    }

  // What the proxies subscribe to, learned from this server as a proxy learns it.
  const probe = await Effect.runPromise(probeSidecar(ads))
  const grpcRoute = await Effect.runPromise(probeGrpcRoute(ads))
  const edsNames = probe.names[TypeUrl.Endpoint]!
  log(
    `${plane.name}: a sidecar gets ${probe.clusters} clusters (${edsNames.length} EDS), ${probe.listeners} listeners, routes ${probe.names[TypeUrl.Route]!.join(",")}; gRPC route ${grpcRoute}`,
  )

  const stopFullLoad = loadSampler()
  const cpu0 = cpuSecondsOf(plane.pid)
  const t0 = now()
  const clients = startClients(plansFor(ads, w, probe.names, grpcRoute))
  try {
    const ready = await withTimeout(clients.ready, FULL_CONFIG_TIMEOUT_MS, `${plane.name} full config`)
    const fullConfigCpuS = round1((cpuSecondsOf(plane.pid) - cpu0) * 100) / 100
    const fullConfigRssMiB = peakRssMiBOf(plane.pid)
    const fullConfigLoad = stopFullLoad()
    const partial = {
      readyMs,
      readyCpuS,
      readyRssMiB,
      readyLoad,
      probe: {
        clusters: probe.clusters,
        listeners: probe.listeners,
        edsNames: edsNames.length,
        routes: probe.names[TypeUrl.Route]!,
        grpcRoute,
      },
      fullConfigCpuS,
      fullConfigRssMiB,
      fullConfigLoad,
    }
    if (ready === undefined) {
      const held = clients.readySoFar()
      log(
        `${plane.name}: ${held} of ${SIDECARS + GRPC_CLIENTS} clients hold full config after ${FULL_CONFIG_TIMEOUT_MS / 1000} s; no changes measured`,
      )
      return {
        ...partial,
        clientsWithFullConfig: held,
        fullConfigMs: undefined,
        cpuMsPerFullConfig: undefined,
        bytesPerClient: undefined,
        endpointChanges: undefined,
        configChanges: undefined,
        peakRssMiB: peakRssMiBOf(plane.pid),
      }
    }
    const fullConfigMs = Math.round(ready.at - t0)
    log(`${plane.name}: ${SIDECARS} sidecars + ${GRPC_CLIENTS} gRPC clients hold full config after ${fullConfigMs} ms`)
    await sleep(2000)

    // Endpoint changes: pod 0 of service k (version v1) flips; its default and v1 clusters change.
    const flipped = new Map<number, boolean>()
    const endpointChanges = await phaseOf(
      plane,
      clients,
      FLIPS,
      async (k) => {
        const i = k % w.services
        const ready = flipped.get(i) === false
        const names = [clusterOf(i), ...(i < w.routed ? [clusterOf(i, "v1")] : [])]
        const { converged } = await clients.track(TypeUrl.Endpoint, names)
        await setReady(orch, i, ready)
        if (DEBUG) log(`endpoint change ${k}: service ${i} ready=${ready} written`)
        flipped.set(i, ready)
        return {
          converged: withTimeout(converged, CHANGE_TIMEOUT_MS, `${plane.name} endpoint change ${k} (left out)`),
        }
      },
      1000 / FLIP_RATE,
      false,
    )
    log(`${plane.name}: endpoint changes p50 ${endpointChanges.p50Ms} ms, p99 ${endpointChanges.p99Ms} ms`)
    await sleep(2000)

    // Config changes: a VirtualService's weights; sidecars' port route and its gRPC watchers' route change.
    const weights = new Map<number, number>()
    const configChanges = await phaseOf(
      plane,
      clients,
      CONFIG_CHANGES,
      async (k) => {
        const i = k % w.routed
        const weight = (weights.get(i) ?? 90) === 90 ? 80 : 90
        const grpcWatchers = new Set<number>()
        for (let c = 0; c < GRPC_CLIENTS; c++) if (grpcHosts(c, w.services).includes(i)) grpcWatchers.add(c)
        const names = [
          ...probe.names[TypeUrl.Route]!.filter((r) => r === "80" || r.includes(host(i))),
          ...(grpcWatchers.size > 0 ? [grpcRoute.replace("{host}", host(i))] : []),
        ]
        const { converged } = await clients.track(TypeUrl.Route, names)
        await setWeight(orch, i, weight)
        weights.set(i, weight)
        return { converged: withTimeout(converged, CHANGE_TIMEOUT_MS, `${plane.name} config change ${k} (left out)`) }
      },
      500,
      true,
    )
    log(`${plane.name}: config changes p50 ${configChanges.p50Ms} ms, p99 ${configChanges.p99Ms} ms`)
    const bytes = ready.bytes
    const result: RunResult = {
      ...partial,
      clientsWithFullConfig: SIDECARS + GRPC_CLIENTS,
      fullConfigMs,
      cpuMsPerFullConfig: round1((fullConfigCpuS * 1000) / (SIDECARS + GRPC_CLIENTS)),
      bytesPerClient: Math.round(bytes / (SIDECARS + GRPC_CLIENTS)),
      endpointChanges,
      configChanges,
      peakRssMiB: peakRssMiBOf(plane.pid),
    }
    // Put the state back for the other server.
    await inBatches(
      [...flipped].filter(([, ready]) => !ready),
      ([i]) => setReady(orch, i, true),
    )
    await inBatches(
      [...weights].filter(([, weight]) => weight !== 90),
      ([i]) => setWeight(orch, i, 90),
    )
    return result
  } finally {
    clients.kill()
  }
}

// ------------------------------------------------------------------------------------------------
// Report

const ROWS: ReadonlyArray<[string, (r: RunResult) => number | undefined]> = [
  ["spawn → ready (ms)", (r) => r.readyMs],
  ["  CPU at ready (s)", (r) => r.readyCpuS],
  ["  peak RSS at ready (MiB)", (r) => r.readyRssMiB],
  ["  load average", (r) => r.readyLoad],
  ["all clients hold full config (ms)", (r) => r.fullConfigMs],
  ["  clients holding it then", (r) => r.clientsWithFullConfig],
  ["  server CPU for it (s)", (r) => r.fullConfigCpuS],
  ["  server CPU per client (ms)", (r) => r.cpuMsPerFullConfig],
  ["  peak RSS then (MiB)", (r) => r.fullConfigRssMiB],
  ["  bytes per client", (r) => r.bytesPerClient],
  ["  load average", (r) => r.fullConfigLoad],
  ["endpoint change → last client p50 (ms)", (r) => r.endpointChanges?.p50Ms],
  ["  p99 (ms)", (r) => r.endpointChanges?.p99Ms],
  ["  max (ms)", (r) => r.endpointChanges?.maxMs],
  ["  changes that reached every client", (r) => r.endpointChanges?.converged],
  ["  bytes sent per change", (r) => r.endpointChanges?.bytesPerChange],
  ["  server CPU per change (ms)", (r) => r.endpointChanges?.cpuMsPerChange],
  ["  load average", (r) => r.endpointChanges?.load],
  ["config change → last client p50 (ms)", (r) => r.configChanges?.p50Ms],
  ["  p99 (ms)", (r) => r.configChanges?.p99Ms],
  ["  max (ms)", (r) => r.configChanges?.maxMs],
  ["  changes that reached every client", (r) => r.configChanges?.converged],
  ["  bytes sent per change", (r) => r.configChanges?.bytesPerChange],
  ["  server CPU per change (ms)", (r) => r.configChanges?.cpuMsPerChange],
  ["  load average", (r) => r.configChanges?.load],
  ["peak RSS over the run (MiB)", (r) => r.peakRssMiB],
]

const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? null : Math.round((a / b) * 100) / 100

const table = (mesh: RunResult | undefined, reference: RunResult | undefined): string => {
  const cell = (v: number | undefined | null) => (v === undefined || v === null ? "-" : String(v))
  const lines = [["", "mesh-discovery", "pilot-discovery", "mesh/ref"]]
  for (const [label, f] of ROWS) {
    const m = mesh === undefined ? undefined : f(mesh)
    const r = reference === undefined ? undefined : f(reference)
    lines.push([label, cell(m), cell(r), cell(ratio(m, r))])
  }
  const widths = [0, 1, 2, 3].map((c) => Math.max(...lines.map((l) => l[c]!.length)))
  return lines
    .map((l) => l.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  "))
    .join("\n")
}

const NOTES = [
  "Same API server and objects for both: the mesh resources exist once, in the reference's API groups (networking/security.istio.io), which mesh-discovery reads as the upstream aliases of its own (its networking/security.mesh.io CRDs are installed and empty), as in a cluster moved from the reference.",
  "mesh-discovery reads its mesh config from the ConfigMap mesh-system/mesh, pilot-discovery from --meshConfig (a file): both only set trustDomain: cluster.local.",
  "pilot-discovery runs without an injection template (its injector is skipped) and with no webhook configurations to patch; both keep their CA and leader election on (one replica: it leads at once).",
  `Both debounce with PILOT_DEBOUNCE_AFTER=${DEBOUNCE}; clients use plaintext ADS (neither authenticates plaintext).`,
  "mesh-discovery runs with PILOT_XDS_SEND_TIMEOUT=0s (no write deadline), as the reference has none: with its 5 s default, streams to client processes starved on a loaded machine are closed and reconnect without end.",
  "Sidecars subscribe to the EDS clusters and routes the server's own CDS/LDS name (probed per server), so each server is asked for what a proxy would ask it for; gRPC route names likewise.",
  "The API server, etcd, the client processes and the server share this machine's 2 cores with other work: see the load averages.",
]

// ------------------------------------------------------------------------------------------------

/** The run whose time to ready is the median of the runs (the lower middle one of an even count). */
const medianByReady = (runs: ReadonlyArray<RunResult>): RunResult =>
  [...runs].sort((a, b) => a.readyMs - b.readyMs)[Math.floor((runs.length - 1) / 2)]!

/** `--hold`: the admin kubeconfig into HOLD, then the API server keeps its state until a signal. */
const hold = async (orch: RealOrchestrator) => {
  writeFileSync(HOLD, readFileSync(orch.kubeconfig))
  log(`holding the API server (${orch.url}); its admin kubeconfig is ${HOLD}; SIGINT or SIGTERM ends it`)
  await new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve())
    process.once("SIGTERM", () => resolve())
  })
}

const main = async () => {
  if (STOP_AFTER !== "ready" && STOP_AFTER !== "all") throw new Error(`--stop-after ${STOP_AFTER}: ready or all`)
  const w = workloadAt(SCALE)
  const planes: ReadonlyArray<"mesh" | "reference"> =
    ONLY === "both" ? ["mesh", "reference"] : ONLY === "none" ? [] : [ONLY as "mesh" | "reference"]
  const reference = planes.includes("reference") ? referenceBinary() : ""
  const scope = await Effect.runPromise(Scope.make())
  const results: Partial<Record<"mesh" | "reference", RunResult>> = {}
  const commands: Array<string> = []
  try {
    const orch = await Effect.runPromise(realOrchestratorWith().pipe(Scope.extend(scope)))
    log(`kube-apiserver ${orch.versions.kube} ready; writing the workload (scale ${SCALE})`)
    const populated = now()
    await populate(orch, w)
    log(`workload written in ${Math.round(now() - populated)} ms`)
    if (CPU_PROF !== "") mkdirSync(CPU_PROF, { recursive: true })
    const runs: Record<"mesh" | "reference", Array<RunResult>> = { mesh: [], reference: [] }
    for (const [n, name] of Array.from({ length: REPEAT }, (_, n) => planes.map((p) => [n, p] as const)).flat()) {
      if (REPEAT > 1) log(`${name}: run ${n + 1} of ${REPEAT}`)
      const started = now()
      const plane =
        name === "mesh"
          ? await startMesh({ kubeconfig: orch.kubeconfig, cpuProfDir: CPU_PROF })
          : await startReference(reference, { kubeconfig: orch.kubeconfig, cpuProfDir: "" })
      commands.push(plane.command)
      try {
        const result = await runOne(plane, orch, w, started)
        runs[name].push(result)
        // Each server's figures as soon as they are known: a run cut short still shows the first.
        log(`${name}: ${JSON.stringify(result)}`)
        results[name] = medianByReady(runs[name])
      } catch (error) {
        process.stderr.write(`--- ${name} output (tail) ---\n${plane.output().slice(-8000)}\n`)
        throw error
      } finally {
        await plane.stop()
        if (SERVER_LOG !== "") {
          mkdirSync(SERVER_LOG, { recursive: true })
          writeFileSync(join(SERVER_LOG, `${name}${REPEAT > 1 ? `-${n + 1}` : ""}.log`), plane.output())
        }
      }
      await sleep(3000)
    }
    if (REPEAT > 1)
      for (const name of planes)
        log(`${name}: ready in ${runs[name].map((r) => `${r.readyMs} ms/${r.readyCpuS} CPU s`).join(", ")}`)
    if (HOLD !== "") await hold(orch)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const m = results.mesh
  const r = results.reference
  process.stdout.write(
    `\nmesh-discovery vs pilot-discovery (istio.io/istio ${referenceVersion()}), scale ${SCALE}: ${w.services} services, ${w.services * PODS_PER_SERVICE} pods, ${w.routed} VirtualServices + DestinationRules, ${w.authorizationPolicies} AuthorizationPolicies, ${w.gateways} Gateways; ${SIDECARS} sidecars + ${GRPC_CLIENTS} gRPC clients\n\n`,
  )
  process.stdout.write(`${table(m, r)}\n\n`)
  for (const note of NOTES) process.stdout.write(`- ${note}\n`)
  process.stdout.write(
    `${JSON.stringify({
      scale: SCALE,
      workload: w,
      sidecars: SIDECARS,
      grpcClients: GRPC_CLIENTS,
      referenceVersion: referenceVersion(),
      ratios: {
        pushP99: ratio(m?.endpointChanges?.p99Ms, r?.endpointChanges?.p99Ms),
        configPushP99: ratio(m?.configChanges?.p99Ms, r?.configChanges?.p99Ms),
        peakRss: ratio(m?.peakRssMiB, r?.peakRssMiB),
        cpuPerFullConfig: ratio(m?.cpuMsPerFullConfig, r?.cpuMsPerFullConfig),
        ready: ratio(m?.readyMs, r?.readyMs),
        fullConfig: ratio(m?.fullConfigMs, r?.fullConfigMs),
        cpuPerEndpointChange: ratio(m?.endpointChanges?.cpuMsPerChange, r?.endpointChanges?.cpuMsPerChange),
        bytesPerEndpointChange: ratio(m?.endpointChanges?.bytesPerChange, r?.endpointChanges?.bytesPerChange),
      },
      mesh: m ?? null,
      reference: r ?? null,
      commands,
    })}\n`,
  )
  process.exit(0)
}

if (arg("role", "main") === "clients") await runClients()
else
  await main().catch((error) => {
    process.stderr.write(
      `bench-versus failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
    process.exit(1)
  })
