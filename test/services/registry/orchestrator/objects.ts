/** Orchestrator objects for the registry tests, as the API server serves them. */
import type { InformerEvent } from "../../../../src/services/orchestrator/informer.js"
import type {
  OrchEndpointSlice,
  OrchEndpoints,
  OrchNode,
  OrchObject,
  OrchPod,
  OrchService,
  ServicePortSpec,
} from "../../../../src/services/orchestrator/objects.js"

export const service = (
  name: string,
  spec: OrchService["spec"] = {},
  meta: Partial<OrchService["metadata"]> = {},
): OrchService => ({
  metadata: { name, namespace: "default", creationTimestamp: "2024-01-01T00:00:00Z", ...meta },
  spec: {
    type: "ClusterIP",
    clusterIP: "10.96.0.10",
    selector: { app: name },
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }] as ReadonlyArray<ServicePortSpec>,
    ...spec,
  },
})

export interface SliceEndpoint {
  readonly ip: string
  readonly pod?: string
  readonly ready?: boolean
  readonly serving?: boolean
  readonly terminating?: boolean
  readonly node?: string
}

export const slice = (
  name: string,
  serviceName: string,
  endpoints: ReadonlyArray<SliceEndpoint>,
  ports: OrchEndpointSlice["ports"] = [{ name: "http", port: 8080, protocol: "TCP" }],
  namespace = "default",
): OrchEndpointSlice => ({
  metadata: { name, namespace, labels: { "kubernetes.io/service-name": serviceName } },
  addressType: "IPv4",
  endpoints: endpoints.map((e) => ({
    addresses: [e.ip],
    conditions: {
      ready: e.ready ?? true,
      ...(e.serving !== undefined ? { serving: e.serving } : {}),
      ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
    },
    ...(e.node !== undefined ? { nodeName: e.node } : {}),
    ...(e.pod !== undefined ? { targetRef: { kind: "Pod", namespace, name: e.pod } } : {}),
  })),
  ports,
})

export const endpointsObject = (
  name: string,
  ready: ReadonlyArray<SliceEndpoint>,
  notReady: ReadonlyArray<SliceEndpoint> = [],
  namespace = "default",
): OrchEndpoints => {
  const address = (e: SliceEndpoint) => ({
    ip: e.ip,
    ...(e.pod !== undefined ? { targetRef: { kind: "Pod", namespace, name: e.pod } } : {}),
  })
  return {
    metadata: { name, namespace },
    subsets: [
      {
        addresses: ready.map(address),
        notReadyAddresses: notReady.map(address),
        ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      },
    ],
  }
}

export const pod = (
  name: string,
  ip: string,
  options: {
    labels?: Record<string, string>
    node?: string
    serviceAccount?: string
    ready?: boolean
    namespace?: string
    containerPorts?: ReadonlyArray<{ name: string; containerPort: number }>
  } = {},
): OrchPod => ({
  metadata: { name, namespace: options.namespace ?? "default", labels: options.labels ?? { app: "reviews" } },
  spec: {
    nodeName: options.node ?? "node-1",
    serviceAccountName: options.serviceAccount ?? "reviews",
    containers: [{ name: "app", ports: options.containerPorts ?? [] }],
  },
  status: {
    phase: "Running",
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: "Ready", status: options.ready === false ? "False" : "True" }],
  },
})

export const node = (name: string, labels: Record<string, string>): OrchNode => ({ metadata: { name, labels } })

export const added = <T extends OrchObject>(...objects: ReadonlyArray<T>): ReadonlyArray<InformerEvent<T>> =>
  objects.map((object) => ({ type: "added", object }))
export const updated = <T extends OrchObject>(...objects: ReadonlyArray<T>): ReadonlyArray<InformerEvent<T>> =>
  objects.map((object) => ({ type: "updated", object }))
export const deleted = <T extends OrchObject>(...objects: ReadonlyArray<T>): ReadonlyArray<InformerEvent<T>> =>
  objects.map((object) => ({ type: "deleted", object }))
