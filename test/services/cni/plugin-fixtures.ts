/**
 * Pods as the injector leaves them under CNI (a `mesh-proxy` sidecar, the status annotation,
 * the capture annotations), for the plugin's tests; each test changes what it is about.
 */
import type { PluginPod, PodContainer } from "../../../src/services/cni/plugin-pod.js"

export const proxyContainer = (overrides: Partial<PodContainer> = {}): PodContainer => ({
  name: "mesh-proxy",
  args: ["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local"],
  env: [{ name: "MESH_META_CLUSTER_ID", value: "Orchestrator" }],
  securityContext: { runAsUser: 1337, runAsGroup: 1337 },
  ...overrides,
})

export const injectedPod = (
  options: {
    readonly name?: string
    readonly namespace?: string
    readonly annotations?: Record<string, string>
    readonly labels?: Record<string, string>
    readonly containers?: ReadonlyArray<PodContainer>
    readonly initContainers?: ReadonlyArray<PodContainer>
  } = {},
): PluginPod & { apiVersion: string; kind: string; [key: string]: unknown } => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: options.name ?? "app-1",
    namespace: options.namespace ?? "default",
    labels: options.labels ?? { app: "app" },
    annotations: {
      "sidecar.mesh.io/status": '{"initContainers":["mesh-validation"],"containers":["mesh-proxy"]}',
      "sidecar.mesh.io/interceptionMode": "REDIRECT",
      "traffic.sidecar.mesh.io/includeOutboundIPRanges": "*",
      "traffic.sidecar.mesh.io/includeInboundPorts": "*",
      "traffic.sidecar.mesh.io/excludeInboundPorts": "15020",
      ...options.annotations,
    },
  },
  spec: {
    containers: options.containers ?? [{ name: "app" }, proxyContainer()],
    initContainers: options.initContainers ?? [{ name: "mesh-validation" }],
  },
})
