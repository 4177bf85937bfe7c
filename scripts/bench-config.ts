/**
 * Config-store benchmark (issue 3): generates a `--configDir` of 5,000 resources (1,000
 * ServiceEntries, 1,000 VirtualServices, 1,000 DestinationRules and 2,000 mixed WorkloadEntries,
 * Sidecars, PeerAuthentications, AuthorizationPolicies, Gateways, RequestAuthentications and
 * Telemetries; multi-document files of 10 resources each) in a temp dir, loads it through the real
 * file store, then changes one file and measures how long until the change is reflected in the
 * snapshot, the ServiceEntry registry's services and a PushContext built from them. Prints JSON.
 *   node dist/scripts/bench-config.mjs [--runs N] [--keep]
 * Targets: full load < 2 s; one-file change reflected in the PushContext < 50 ms.
 * Wall and CPU (process.cpuUsage, user+system) times are both reported: the machine is shared.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Layer, Logger, LogLevel, Queue } from "effect"
import { makeFileConfigStore } from "../src/layers/config-store/file-store.js"
import { layer as metricsLayer } from "../src/layers/metrics.js"
import type { ConfigSnapshot } from "../src/services/config-store/snapshot.js"
import { type Allocation, emptyAllocation } from "../src/services/registry/auto-allocate.js"
import { type ConversionCache, convertServiceEntries } from "../src/services/registry/service-entry.js"
import { defaultPushContextOptions, makePushContext, type PushContext } from "../src/services/xds/model/push-context.js"

const args = process.argv.slice(2)
const runs = Number(args[args.indexOf("--runs") + 1] || 5) || 5
const keep = args.includes("--keep")

const PER_FILE = 10
const NAMESPACES = 20
const ns = (i: number) => `team-${i % NAMESPACES}`

// --- documents ----------------------------------------------------------------------------------

const serviceEntry = (i: number, rev = 0) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: svc-${i}
  namespace: ${ns(i)}
  labels:
    app: svc-${i}
    rev: "r${rev}"
spec:
  hosts:
  - svc-${i}.example.com
  location: MESH_EXTERNAL
  ports:
  - number: 80
    name: http
    protocol: HTTP
  - number: 443
    name: https
    protocol: TLS
  resolution: ${i % 3 === 0 ? "STATIC" : "DNS"}
${
  i % 3 === 0
    ? `  endpoints:
  - address: 10.${(i >> 8) & 255}.${i & 255}.1
    ports:
      http: 8080
    labels:
      version: v1
  - address: 10.${(i >> 8) & 255}.${i & 255}.2
    labels:
      version: v2
`
    : `  endpoints:
  - address: us-${rev}.svc-${i}.example.com
`
}`

const virtualService = (i: number) => `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: vs-${i}
  namespace: ${ns(i)}
spec:
  hosts:
  - svc-${i}.example.com
  gateways:
  - mesh
  http:
  - name: canary
    match:
    - headers:
        x-canary:
          exact: "true"
      uri:
        prefix: /api/
    route:
    - destination:
        host: svc-${i}.example.com
        subset: v2
        port:
          number: 80
      weight: 100
  - name: default
    retries:
      attempts: 3
      perTryTimeout: 2s
      retryOn: 5xx,connect-failure
    timeout: 10s
    route:
    - destination:
        host: svc-${i}.example.com
        subset: v1
      weight: 90
    - destination:
        host: svc-${i}.example.com
        subset: v2
      weight: 10
`

const destinationRule = (i: number) => `apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: dr-${i}
  namespace: ${ns(i)}
spec:
  host: svc-${i}.example.com
  trafficPolicy:
    loadBalancer:
      simple: LEAST_REQUEST
    connectionPool:
      tcp:
        maxConnections: 100
        connectTimeout: 30ms
      http:
        http1MaxPendingRequests: 64
        maxRequestsPerConnection: 10
    outlierDetection:
      consecutive5xxErrors: 7
      interval: 5m
      baseEjectionTime: 15m
    tls:
      mode: SIMPLE
  subsets:
  - name: v1
    labels:
      version: v1
  - name: v2
    labels:
      version: v2
    trafficPolicy:
      loadBalancer:
        simple: ROUND_ROBIN
`

const workloadEntry = (i: number) => `apiVersion: networking.mesh.io/v1
kind: WorkloadEntry
metadata:
  name: vm-${i}
  namespace: ${ns(i)}
spec:
  address: 192.168.${(i >> 8) & 255}.${i & 255}
  labels:
    app: vm-${i % 50}
    version: v1
  ports:
    http: 8080
  serviceAccount: vm-sa
  network: vm-net
`

const sidecar = (i: number) => `apiVersion: networking.mesh.io/v1
kind: Sidecar
metadata:
  name: sidecar-${i}
  namespace: ${ns(i)}
spec:
  workloadSelector:
    labels:
      app: app-${i}
  egress:
  - hosts:
    - ./*
    - mesh-system/*
  outboundTrafficPolicy:
    mode: REGISTRY_ONLY
`

const peerAuthentication = (i: number) => `apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata:
  name: pa-${i}
  namespace: ${ns(i)}
spec:
  selector:
    matchLabels:
      app: app-${i}
  mtls:
    mode: STRICT
  portLevelMtls:
    "8080":
      mode: PERMISSIVE
`

const authorizationPolicy = (i: number) => `apiVersion: security.mesh.io/v1
kind: AuthorizationPolicy
metadata:
  name: authz-${i}
  namespace: ${ns(i)}
spec:
  selector:
    matchLabels:
      app: app-${i}
  action: ALLOW
  rules:
  - from:
    - source:
        principals:
        - cluster.local/ns/${ns(i)}/sa/client-${i}
        namespaces:
        - ${ns(i + 1)}
    to:
    - operation:
        methods:
        - GET
        - POST
        paths:
        - /api/*
    when:
    - key: request.headers[x-tenant]
      values:
      - tenant-${i}
`

const gateway = (i: number) => `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata:
  name: gw-${i}
  namespace: ${ns(i)}
spec:
  selector:
    app: ingressgateway
  servers:
  - port:
      number: 80
      name: http-${i}
      protocol: HTTP
    hosts:
    - "*/gw-${i}.example.com"
    tls:
      httpsRedirect: true
  - port:
      number: 443
      name: https-${i}
      protocol: HTTPS
    hosts:
    - "*/gw-${i}.example.com"
    tls:
      mode: SIMPLE
      credentialName: gw-${i}-cert
`

const requestAuthentication = (i: number) => `apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata:
  name: ra-${i}
  namespace: ${ns(i)}
spec:
  selector:
    matchLabels:
      app: app-${i}
  jwtRules:
  - issuer: https://issuer-${i}.example.com
    jwksUri: https://issuer-${i}.example.com/.well-known/jwks.json
`

const telemetry = (i: number) => `apiVersion: telemetry.mesh.io/v1
kind: Telemetry
metadata:
  name: tel-${i}
  namespace: ${ns(i)}
spec:
  selector:
    matchLabels:
      app: app-${i}
  tracing:
  - randomSamplingPercentage: 10
`

const MIXED: ReadonlyArray<readonly [string, (i: number) => string, number]> = [
  ["workload-entries", workloadEntry, 500],
  ["sidecars", sidecar, 300],
  ["peer-authentications", peerAuthentication, 300],
  ["authorization-policies", authorizationPolicy, 400],
  ["gateways", gateway, 200],
  ["request-authentications", requestAuthentication, 150],
  ["telemetries", telemetry, 150],
]

/** Writes `count` resources from `make` into files of PER_FILE documents under `dir/sub`. */
const writeKind = (dir: string, sub: string, make: (i: number) => string, count: number): Array<string> => {
  fs.mkdirSync(path.join(dir, sub), { recursive: true })
  const files: Array<string> = []
  for (let start = 0; start < count; start += PER_FILE) {
    const docs: Array<string> = []
    for (let i = start; i < Math.min(count, start + PER_FILE); i++) docs.push(make(i))
    const file = path.join(dir, sub, `${sub}-${String(start / PER_FILE).padStart(4, "0")}.yaml`)
    fs.writeFileSync(file, `---\n${docs.join("---\n")}`)
    files.push(file)
  }
  return files
}

const serviceEntryFile = (index: number, rev: number): string => {
  const docs: Array<string> = []
  for (let i = index * PER_FILE; i < (index + 1) * PER_FILE; i++)
    docs.push(serviceEntry(i, i === index * PER_FILE ? rev : 0))
  return `---\n${docs.join("---\n")}`
}

// --- measurement --------------------------------------------------------------------------------

interface Sample {
  readonly wall_ms: number
  readonly cpu_ms: number
}

const round = (n: number) => Math.round(n * 10) / 10

/** Runs `self`, measuring wall time and this process's CPU time (user + system). */
const measure = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, Sample], E, R> =>
  Effect.suspend(() => {
    const cpu = process.cpuUsage()
    const start = performance.now()
    return Effect.map(self, (value) => {
      const wall = performance.now() - start
      const used = process.cpuUsage(cpu)
      return [value, { wall_ms: round(wall), cpu_ms: round((used.user + used.system) / 1000) }] as const
    })
  })

const median = (samples: ReadonlyArray<Sample>): Sample => {
  const pick = (f: (s: Sample) => number) => {
    const sorted = samples.map(f).sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)] ?? 0
  }
  return { wall_ms: pick((s) => s.wall_ms), cpu_ms: pick((s) => s.cpu_ms) }
}

const gc = (globalThis as { gc?: () => void }).gc

const main = Effect.gen(function* () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-bench-config-"))
  yield* Effect.addFinalizer(() => Effect.sync(() => keep || fs.rmSync(dir, { recursive: true, force: true })))
  const seFiles = writeKind(dir, "service-entries", serviceEntry, 1000)
  writeKind(dir, "virtual-services", virtualService, 1000)
  writeKind(dir, "destination-rules", destinationRule, 1000)
  for (const [sub, make, count] of MIXED) writeKind(dir, sub, make, count)
  const fileCount = fs.readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith(".yaml")).length

  // Registry + PushContext, built as the ServiceEntry registry and the ADS server build them.
  let allocation: Allocation = emptyAllocation
  const cache: ConversionCache = new Map()
  const registryOptions = { clusterId: "Kubernetes", trustDomain: "cluster.local", autoAllocate: true }
  /** Time spent in the registry conversion and in makePushContext, per call (last call). */
  const split = { registry_ms: 0, push_context_ms: 0 }
  /** The last context built: the next one reuses its views of unchanged resources. */
  let previous: PushContext | undefined
  const pushContextOf = (snapshot: ConfigSnapshot): PushContext => {
    const t0 = performance.now()
    const conversion = convertServiceEntries(
      snapshot.list("ServiceEntry"),
      snapshot.list("WorkloadEntry"),
      registryOptions,
      allocation,
      cache,
    )
    allocation = conversion.allocation
    const t1 = performance.now()
    const push = makePushContext(
      {
        services: conversion.services,
        endpoints: conversion.endpoints,
        virtualServices: snapshot.list("VirtualService"),
        destinationRules: snapshot.list("DestinationRule"),
        peerAuthentications: snapshot.list("PeerAuthentication"),
      },
      defaultPushContextOptions,
      "1",
      previous,
    )
    previous = push
    split.registry_ms = round(t1 - t0)
    split.push_context_ms = round(performance.now() - t1)
    return push
  }

  gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  // Full load: makeFileConfigStore reads, validates and applies the whole directory before returning.
  const [store, load] = yield* measure(makeFileConfigStore({ configDir: dir }))
  const snapshot = yield* store.store.snapshot
  const [firstPush, firstPushSample] = yield* measure(Effect.sync(() => pushContextOf(snapshot)))
  gc?.()
  const heapUsed = process.memoryUsage().heapUsed
  const issues = [...snapshot.files.values()].reduce((n, f) => n + f.issues.length, 0)

  const target = seFiles[37] as string
  const expected = (r: number) => `us-${r}.svc-370.example.com`
  let seen = true
  const check = (push: PushContext, r: number) => {
    if (push.endpointsByHost.get("svc-370.example.com")?.[0]?.address !== expected(r)) seen = false
  }

  // One-file change without the debounce: write, reload({ paths }), rebuild registry + PushContext.
  const direct: Array<Sample> = []
  const directStore: Array<Sample> = []
  const splits: Array<typeof split> = []
  for (let r = 1; r <= runs; r++) {
    const [push, sample] = yield* measure(
      Effect.gen(function* () {
        fs.writeFileSync(target, serviceEntryFile(37, r))
        const [snap, storeSample] = yield* measure(store.reload({ full: false, paths: new Set([target]) }))
        directStore.push(storeSample)
        return pushContextOf(snap)
      }),
    )
    direct.push(sample)
    splits.push({ ...split })
    check(push, r)
  }

  // One-file change through the watcher (its 100 ms debounce included): write, await the event.
  const watched: Array<Sample> = []
  const { events } = yield* store.store.subscribe
  yield* Effect.sleep("300 millis")
  for (let r = runs + 1; r <= 2 * runs; r++) {
    const [push, sample] = yield* measure(
      Effect.gen(function* () {
        fs.writeFileSync(target, serviceEntryFile(37, r))
        const event = yield* Queue.take(events)
        return pushContextOf(event.snapshot)
      }),
    )
    watched.push(sample)
    check(push, r)
    yield* Effect.sleep("300 millis")
  }

  const loadWithPush = {
    wall_ms: round(load.wall_ms + firstPushSample.wall_ms),
    cpu_ms: round(load.cpu_ms + firstPushSample.cpu_ms),
  }
  const changeDirect = median(direct)
  return {
    machine: { load_average: os.loadavg().map(round), cpus: os.cpus().length, node: process.version },
    input: {
      ...(keep ? { dir } : {}),
      files: fileCount,
      resources: 5000,
      per_file: PER_FILE,
      counts: {
        ServiceEntry: 1000,
        VirtualService: 1000,
        DestinationRule: 1000,
        ...Object.fromEntries(MIXED.map(([sub, , count]) => [sub, count])),
      },
    },
    resources_loaded: snapshot.size,
    issues,
    services: firstPush.services.length,
    full_load: load,
    first_push_context: firstPushSample,
    full_load_with_push_context: loadWithPush,
    one_file_change_no_debounce: {
      median_to_push_context: changeDirect,
      median_store_reload_only: median(directStore),
      median_registry_conversion_ms: median(splits.map((s) => ({ wall_ms: s.registry_ms, cpu_ms: 0 }))).wall_ms,
      median_make_push_context_ms: median(splits.map((s) => ({ wall_ms: s.push_context_ms, cpu_ms: 0 }))).wall_ms,
      runs: direct,
    },
    one_file_change_with_debounce: { median_to_push_context: median(watched), debounce_ms: 100, runs: watched },
    change_seen_in_push_context: seen,
    heap_used_mb: round(heapUsed / 2 ** 20),
    heap_delta_mb: round((heapUsed - heapBefore) / 2 ** 20),
    targets: {
      full_load_under_2s: loadWithPush.wall_ms < 2000,
      one_file_change_under_50ms: changeDirect.wall_ms < 50,
      zero_issues: issues === 0,
    },
  }
})

const quiet = Logger.minimumLogLevel(LogLevel.Warning)
// The store's watcher does not keep the process alive; this does while the benchmark runs.
const keepAlive = setInterval(() => {}, 1000)
const result = await Effect.runPromise(
  main.pipe(Effect.scoped, Effect.provide(Layer.merge(metricsLayer("bench"), quiet))),
)
clearInterval(keepAlive)
console.log(JSON.stringify(result, null, 2))
