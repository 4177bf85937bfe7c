/**
 * The side-by-side benchmark's cluster (scripts/bench-versus.ts): the issue's workload as
 * orchestrator objects, written once to the real API server and read by both control planes.
 *
 * Services, Pods and EndpointSlices are core objects both servers watch. The mesh's own resources
 * can be written for either API group family (`Groups`); the benchmark writes them once, in the
 * reference's (networking.istio.io, security.istio.io), which mesh-discovery reads as the
 * upstream aliases of its own: both servers read the same objects. Built as a script entry of
 * its own, it does nothing when run.
 */

export const NS = "bench"
/** The pod's container port behind every Service's port 80 (named `http`: both servers treat it as HTTP). */
export const TARGET_PORT = 8080
export const PORT = 80
export const PODS_PER_SERVICE = 10
/** Nodes the pods are spread over, in 3 regions and 10 zones. */
export const NODES = 50

export interface Workload {
  readonly services: number
  /** VirtualServices and as many DestinationRules (services 0..n-1 get both). */
  readonly routed: number
  readonly authorizationPolicies: number
  readonly gateways: number
}

/** The issue's workload times `scale` (at least one of each). */
export const workloadAt = (scale: number): Workload => {
  const of = (n: number) => Math.max(1, Math.round(n * scale))
  return { services: of(1000), routed: of(200), authorizationPolicies: of(50), gateways: of(20) }
}

/** Which of the two API group families an object is written for. */
export type Groups = "mesh" | "reference"
const networking = (g: Groups) => (g === "mesh" ? "networking.mesh.io/v1" : "networking.istio.io/v1")
const security = (g: Groups) => (g === "mesh" ? "security.mesh.io/v1" : "security.istio.io/v1")

// biome-ignore lint/suspicious/noExplicitAny: orchestrator objects are plain JSON
export type Obj = Record<string, any>

export const host = (i: number) => `svc-${i}.${NS}.svc.cluster.local`
/** Pod n's address: 10.1.0.1 onwards, 250 per /24. */
export const podIp = (n: number) => `10.${1 + Math.floor(n / 62_500)}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`

export const node = (n: number): Obj => ({
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

export const service = (i: number): Obj => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: `svc-${i}`, namespace: NS, labels: { app: `svc-${i}` } },
  spec: {
    selector: { app: `svc-${i}` },
    ports: [{ name: "http", port: PORT, targetPort: TARGET_PORT, protocol: "TCP" }],
  },
})

/** Pod p of service i without its status (a create drops it; the status subresource sets it). */
export const pod = (i: number, p: number): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: `svc-${i}-${p}`,
    namespace: NS,
    labels: { app: `svc-${i}`, version: p % 2 === 0 ? "v1" : "v2" },
  },
  spec: {
    nodeName: `node-${(i * PODS_PER_SERVICE + p) % NODES}`,
    serviceAccountName: "default",
    containers: [{ name: "app", image: "example/app:1", ports: [{ containerPort: TARGET_PORT }] }],
  },
})

export const podStatus = (i: number, p: number, ready: boolean): Obj => {
  const ip = podIp(i * PODS_PER_SERVICE + p)
  return {
    phase: "Running",
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
  }
}

export const sliceName = (i: number) => `svc-${i}-abcde`

/** Service i's one EndpointSlice; `notReady` holds the pod indices whose endpoints are not ready. */
export const slice = (i: number, notReady: ReadonlySet<number> = new Set()): Obj => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: sliceName(i), namespace: NS, labels: { "kubernetes.io/service-name": `svc-${i}` } },
  addressType: "IPv4",
  endpoints: Array.from({ length: PODS_PER_SERVICE }, (_, p) => ({
    addresses: [podIp(i * PODS_PER_SERVICE + p)],
    conditions: { ready: !notReady.has(p), serving: true, terminating: false },
    nodeName: `node-${(i * PODS_PER_SERVICE + p) % NODES}`,
    targetRef: { kind: "Pod", namespace: NS, name: `svc-${i}-${p}` },
  })),
  ports: [{ name: "http", port: TARGET_PORT, protocol: "TCP" }],
})

export const destinationRule = (g: Groups, i: number): Obj => ({
  apiVersion: networking(g),
  kind: "DestinationRule",
  metadata: { name: `svc-${i}`, namespace: NS },
  spec: {
    host: host(i),
    trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } },
    subsets: [
      { name: "v1", labels: { version: "v1" } },
      { name: "v2", labels: { version: "v2" } },
    ],
  },
})

/** Service i's VirtualService; `v1Weight` of 100 goes to subset v1, the rest to v2. */
export const virtualService = (g: Groups, i: number, v1Weight = 90): Obj => ({
  apiVersion: networking(g),
  kind: "VirtualService",
  metadata: { name: `svc-${i}`, namespace: NS },
  spec: {
    hosts: [host(i)],
    http: [
      {
        route: [
          { destination: { host: host(i), subset: "v1" }, weight: v1Weight },
          { destination: { host: host(i), subset: "v2" }, weight: 100 - v1Weight },
        ],
      },
    ],
  },
})

export const authorizationPolicy = (g: Groups, k: number, services: number): Obj => ({
  apiVersion: security(g),
  kind: "AuthorizationPolicy",
  metadata: { name: `allow-${k}`, namespace: NS },
  spec: {
    selector: { matchLabels: { app: `svc-${k % services}` } },
    action: "ALLOW",
    rules: [
      {
        from: [{ source: { principals: [`cluster.local/ns/${NS}/sa/default`] } }],
        to: [{ operation: { methods: ["GET", "POST"], paths: [`/api/${k}/*`] } }],
      },
    ],
  },
})

export const gateway = (g: Groups, k: number): Obj => ({
  apiVersion: networking(g),
  kind: "Gateway",
  metadata: { name: `gw-${k}`, namespace: NS },
  spec: {
    selector: { app: "ingressgateway" },
    servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: [`gw-${k}.example.com`] }],
  },
})

/** Every mesh resource of one group family, in the order they are written. */
export const meshObjects = (g: Groups, w: Workload): ReadonlyArray<Obj> => [
  ...Array.from({ length: w.routed }, (_, i) => destinationRule(g, i)),
  ...Array.from({ length: w.routed }, (_, i) => virtualService(g, i)),
  ...Array.from({ length: w.authorizationPolicies }, (_, k) => authorizationPolicy(g, k, w.services)),
  ...Array.from({ length: w.gateways }, (_, k) => gateway(g, k)),
]

/** The API path of an object's collection. */
export const collection = (o: Obj): string => {
  const apiVersion: string = o.apiVersion ?? "v1"
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion]
  const kind = String(o.kind).toLowerCase()
  // English plurals of the kinds written here: "policy" → "policies", "gateway" → "gateways".
  const plural = /[^aeiou]y$/.test(kind) ? `${kind.slice(0, -1)}ies` : `${kind}s`
  const ns = o.metadata.namespace === undefined ? "" : `/namespaces/${o.metadata.namespace}`
  return `${group === "" ? "/api" : `/apis/${group}`}/${version}${ns}/${plural}`
}
