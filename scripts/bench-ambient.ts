/**
 * The node proxy's workload API, in process (issue 40): what one push costs mesh-discovery with
 * `--pods` ambient pods behind `--services` Services (10 pods each, spread over 20 ambient
 * namespaces, one waypoint per namespace bound to half of them), `--policies`
 * AuthorizationPolicies (namespace-wide and selector-scoped) and `--flips` readiness flips.
 * Prints JSON.
 *
 *   node dist/scripts/bench-ambient.mjs [--pods 10000] [--services 1000] [--policies 50] [--flips 20]
 *
 * - full: the PushContext, the ambient index and the wildcard Address and Authorization
 *   responses' specs (`index`), then every message encoded through the resource cache (`encode`);
 * - flip: one pod's readiness toggled (its new facts object, its endpoints gone or back, as the
 *   registry hands them over), the next PushContext built from the previous one as the push
 *   fan-out does, the index and specs again, and the cache asked for every resource: the messages
 *   and bytes encoded again are the cache's misses. Every other flip takes the previous one back.
 * Wall and CPU (process.cpuUsage, user+system) milliseconds: the machine may be shared.
 * The flipped pod's decoded status is checked, so a stale index fails the run.
 */
import { loadXdsProtos } from "../src/layers/xds/protos.js"
import type { AmbientInput, AmbientPod } from "../src/services/ambient/input.js"
import type { ConfigResource } from "../src/services/config-model/resource.js"
import type { AuthorizationPolicySpec } from "../src/services/config-model/schemas/authorization-policy.js"
import type { Endpoint, Service } from "../src/services/registry/model.js"
import { makeResourceCache, type ResourceCache } from "../src/services/xds/cache/resource-cache.js"
import type { ResourceSpec } from "../src/services/xds/cache/resource-spec.js"
import {
  defaultPushContextOptions,
  emptyPushContextInput,
  makePushContext,
  type PushContext,
  type PushContextInput,
} from "../src/services/xds/model/push-context.js"
import { TypeUrl } from "../src/services/xds/protocol/type-urls.js"
import { generateWorkloadApi } from "../src/services/xds/workloadgen/generator.js"
import { arg, percentile, round1 } from "./bench-support.js"

const PODS = Number(arg("pods", "10000"))
const SERVICES = Number(arg("services", "1000"))
const POLICIES = Number(arg("policies", "50"))
const FLIPS = Number(arg("flips", "20"))
const NAMESPACES = 20

const ns = (i: number) => `team-${i % NAMESPACES}`
const ip = (base: number, i: number) => `10.${base + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`
const meta = (name: string, namespace: string, labels: Record<string, string> = {}) => ({
  name,
  namespace,
  labels,
  annotations: {},
})

/** Service `s` is in namespace `s % 20`; pod `p` belongs to service `p % services`. */
const serviceOf = (s: number): Service => ({
  hostname: `svc-${s}.${ns(s)}.svc.cluster.local`,
  namespace: ns(s),
  ports: [
    { name: "http", port: 80, protocol: "HTTP", targetPort: 8080 },
    { name: "grpc", port: 9090, protocol: "GRPC" },
  ],
  addresses: [ip(96, s)],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: s % 2 === 0 ? { "mesh.io/use-waypoint": "waypoint" } : {},
  registry: "Orchestrator",
  clusterId: "cluster-1",
  selector: { app: `svc-${s}` },
  serviceAccounts: [`spiffe://cluster.local/ns/${ns(s)}/sa/svc-${s}`],
  source: `Service/${ns(s)}/svc-${s}`,
})

const podOf = (p: number): AmbientPod => {
  const s = p % SERVICES
  const name = `svc-${s}-7d9f8c-${p}`
  return {
    uid: `uid-${p}`,
    name,
    namespace: ns(s),
    labels: { app: `svc-${s}`, version: "v1", "pod-template-hash": "7d9f8c", tier: p % 3 === 0 ? "front" : "back" },
    annotations: { "ambient.mesh.io/redirection": "enabled" },
    serviceAccount: `svc-${s}`,
    node: `node-${p % 50}`,
    addresses: [ip(1, p)],
    hostNetwork: false,
    ready: true,
    locality: "region-a/zone-b/",
    namedPorts: { http: 8080, grpc: 9090 },
    owner: { kind: "ReplicaSet", name: `svc-${s}-7d9f8c` },
  }
}

const endpointsOf = (pod: AmbientPod, s: number): ReadonlyArray<Endpoint> =>
  serviceOf(s).ports.map((port) => ({
    hostname: `svc-${s}.${ns(s)}.svc.cluster.local`,
    namespace: pod.namespace,
    servicePortName: port.name,
    address: pod.addresses[0]!,
    port: port.targetPort ?? port.port,
    labels: pod.labels,
    serviceAccount: `spiffe://cluster.local/ns/${pod.namespace}/sa/${pod.serviceAccount}`,
    locality: pod.locality,
    network: "",
    weight: 1,
    healthStatus: "HEALTHY",
    clusterId: "cluster-1",
  }))

const policyOf = (i: number): ConfigResource<AuthorizationPolicySpec> => ({
  group: "security.mesh.io",
  version: "v1",
  kind: "AuthorizationPolicy",
  meta: meta(`policy-${i}`, ns(i)),
  spec: {
    action: i % 5 === 0 ? "DENY" : "ALLOW",
    ...(i % 2 === 0 ? { selector: { matchLabels: { tier: "front" } } } : {}),
    rules: [
      {
        from: [{ source: { namespaces: [ns(i + 1)], principals: [`cluster.local/ns/${ns(i)}/sa/svc-${i}`] } }],
        to: [{ operation: { ports: ["8080"] } }],
      },
    ],
  },
})

/** A waypoint per namespace (class `mesh-waypoint`), with one pod; namespaces are ambient. */
const waypointOf = (n: number) => ({
  group: "gateway.networking.k8s.io",
  version: "v1",
  kind: "KubernetesGateway",
  meta: meta("waypoint", ns(n), { "mesh.io/waypoint-for": "all" }),
  spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
})

const waypointPod = (n: number): AmbientPod => ({
  ...podOf(0),
  uid: `uid-waypoint-${n}`,
  name: `waypoint-5c4b-${n}`,
  namespace: ns(n),
  labels: { "gateway.networking.k8s.io/gateway-name": "waypoint" },
  serviceAccount: "waypoint",
  addresses: [ip(200, n)],
  owner: { kind: "ReplicaSet", name: "waypoint-5c4b" },
})

const byNamespaceAndName = (a: AmbientPod, b: AmbientPod) =>
  a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0

const services = Array.from({ length: SERVICES }, (_, s) => serviceOf(s))
const pods = [
  ...Array.from({ length: PODS }, (_, p) => podOf(p)),
  ...Array.from({ length: NAMESPACES }, (_, n) => waypointPod(n)),
].sort(byNamespaceAndName)
const endpointsByPod = new Map<AmbientPod, ReadonlyArray<Endpoint>>()
for (const pod of pods)
  if (pod.labels.app !== undefined) endpointsByPod.set(pod, endpointsOf(pod, Number(pod.labels.app.slice(4))))
const namespaceLabels = new Map<string, Readonly<Record<string, string>>>([
  ["mesh-system", { "topology.mesh.io/network": "network-1" }],
  ...Array.from({ length: NAMESPACES }, (_, n) => [ns(n), { "mesh.io/dataplane-mode": "ambient" }] as const),
])
// The config store hands unchanged resources over as the same objects: made once.
const gateways = Array.from({ length: NAMESPACES }, (_, n) => waypointOf(n))
const policies = Array.from({ length: POLICIES }, (_, i) => policyOf(i))
const ambientOf = (list: ReadonlyArray<AmbientPod>): AmbientInput => ({
  settings: { clusterId: "cluster-1", autoAllowWaypointPolicy: true, systemNamespace: "mesh-system" },
  pods: list,
  namespaceLabels,
  gateways: gateways as never,
  gatewayClasses: [],
  workloadEntries: [],
})
const inputOf = (list: ReadonlyArray<AmbientPod>, ambient: AmbientInput): PushContextInput => ({
  ...emptyPushContextInput,
  services,
  endpoints: list.flatMap((pod) => (pod.ready ? (endpointsByPod.get(pod) ?? []) : [])),
  authorizationPolicies: policies,
  ambient,
})

const codec = loadXdsProtos().codec
const cpuMs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

interface Step {
  readonly specs: ReadonlyArray<ResourceSpec>
  readonly authorizations: ReadonlyArray<ResourceSpec>
  readonly contextMs: number
  readonly indexMs: number
  readonly encodeMs: number
  readonly cpuMs: number
  readonly messages: number
  readonly bytes: number
}

/** One push's work for the node proxies: the context, the index and specs, the cache's answers. */
const push = (cache: ResourceCache, next: () => PushContext): Step & { readonly context: PushContext } => {
  const before = cache.stats()
  const cpu0 = cpuMs()
  const t0 = performance.now()
  const context = next()
  const t1 = performance.now()
  const wildcard = { wildcard: true, names: [] }
  const specs = generateWorkloadApi(context, cache, TypeUrl.Address, wildcard).resources
  const authorizations = generateWorkloadApi(context, cache, TypeUrl.Authorization, wildcard).resources
  const t2 = performance.now()
  cache.resolve(TypeUrl.Address, specs)
  cache.resolve(TypeUrl.Authorization, authorizations)
  const t3 = performance.now()
  const after = cache.stats()
  return {
    context,
    specs,
    authorizations,
    contextMs: t1 - t0,
    indexMs: t2 - t1,
    encodeMs: t3 - t2,
    cpuMs: cpuMs() - cpu0,
    messages: after.misses - before.misses,
    bytes: after.encodedBytes - before.encodedBytes,
  }
}

const cache = makeResourceCache(codec, { enabled: true, maxSize: 100000, enableCds: true, enableRds: true })
let currentPods = pods
// The inputs are what the registry and the pod source hand over: made before the clock starts.
const first = inputOf(currentPods, ambientOf(currentPods))
const full = push(cache, () => makePushContext(first, defaultPushContextOptions, "0"))
let context = full.context

const flips: Array<Step> = []
for (let k = 0; k < FLIPS; k++) {
  // Every other flip takes the last one back: both directions are measured.
  const at = (Math.floor(k / 2) * 7919) % currentPods.length
  const old = currentPods[at]!
  const flipped: AmbientPod = { ...old, ready: !old.ready }
  const ends = endpointsByPod.get(old)
  if (ends !== undefined) endpointsByPod.set(flipped, ends)
  currentPods = currentPods.map((p, i) => (i === at ? flipped : p))
  const previous = context
  const input = inputOf(currentPods, ambientOf(currentPods))
  const step = push(cache, () => makePushContext(input, defaultPushContextOptions, `${k + 1}`, previous))
  context = step.context
  flips.push(step)
  const uid = `cluster-1//Pod/${flipped.namespace}/${flipped.name}`
  const spec = step.specs.find((s) => s.name === uid)
  const encoded = spec === undefined ? undefined : cache.resolve(TypeUrl.Address, [spec])[0]
  if (encoded === undefined) throw new Error(`flip ${k}: ${uid} is not served`)
  const decoded = codec.decode(TypeUrl.Address, encoded.resource.value) as { workload?: { status?: string } }
  // HEALTHY is the enum's zero: absent once decoded.
  const status = decoded.workload?.status ?? "HEALTHY"
  if (status !== (flipped.ready ? "HEALTHY" : "UNHEALTHY"))
    throw new Error(`flip ${k}: ${uid} is served ${status}, its pod is ${flipped.ready ? "ready" : "not ready"}`)
}

const p50 = (pick: (s: Step) => number) => round1(percentile(flips.map(pick), 50))
const max = (pick: (s: Step) => number) => round1(Math.max(0, ...flips.map(pick)))
const summary = (pick: (s: Step) => number) => ({ p50: p50(pick), max: max(pick) })

console.log(
  JSON.stringify(
    {
      pods: pods.length,
      services: SERVICES,
      policies: POLICIES,
      addresses: full.specs.length,
      authorizations: full.authorizations.length,
      full: {
        contextMs: round1(full.contextMs),
        indexMs: round1(full.indexMs),
        encodeMs: round1(full.encodeMs),
        cpuMs: round1(full.cpuMs),
        messagesEncoded: full.messages,
        bytesEncoded: full.bytes,
      },
      flip: {
        runs: flips.length,
        contextMs: summary((s) => s.contextMs),
        indexMs: summary((s) => s.indexMs),
        encodeMs: summary((s) => s.encodeMs),
        cpuMs: summary((s) => s.cpuMs),
        messagesEncoded: summary((s) => s.messages),
        bytesEncoded: summary((s) => s.bytes),
      },
    },
    null,
    2,
  ),
)
