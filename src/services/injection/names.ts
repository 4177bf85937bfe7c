/**
 * Every name the injector reads or writes: annotations, labels, containers, volumes, paths,
 * environment variables. One module so that a rename is one edit. Each pod-facing key is
 * spelled in the mesh domain; the reference's spelling (`*.istio.io`, `istio-injection`) is
 * accepted as an alias when reading (see `upstreamSpelling`).
 */
import { MESH_DOMAIN, Annotations as SharedAnnotations, Labels as SharedLabels } from "../constants.js"

/** The reference's domain, accepted as an alias of every mesh-domain key. */
export const UPSTREAM_DOMAIN = "istio.io"

/** Pod annotations the injector reads (or writes, for the capture ones under CNI). */
export const InjectAnnotations = {
  inject: SharedAnnotations.sidecarInject,
  status: SharedAnnotations.sidecarStatus,
  templates: `inject.${MESH_DOMAIN}/templates`,
  proxyConfig: `proxy.${MESH_DOMAIN}/config`,
  proxyImage: `sidecar.${MESH_DOMAIN}/proxyImage`,
  proxyCPU: `sidecar.${MESH_DOMAIN}/proxyCPU`,
  proxyMemory: `sidecar.${MESH_DOMAIN}/proxyMemory`,
  proxyCPULimit: `sidecar.${MESH_DOMAIN}/proxyCPULimit`,
  proxyMemoryLimit: `sidecar.${MESH_DOMAIN}/proxyMemoryLimit`,
  interceptionMode: `sidecar.${MESH_DOMAIN}/interceptionMode`,
  includeOutboundIPRanges: `traffic.sidecar.${MESH_DOMAIN}/includeOutboundIPRanges`,
  excludeOutboundIPRanges: `traffic.sidecar.${MESH_DOMAIN}/excludeOutboundIPRanges`,
  includeInboundPorts: `traffic.sidecar.${MESH_DOMAIN}/includeInboundPorts`,
  excludeInboundPorts: `traffic.sidecar.${MESH_DOMAIN}/excludeInboundPorts`,
  includeOutboundPorts: `traffic.sidecar.${MESH_DOMAIN}/includeOutboundPorts`,
  excludeOutboundPorts: `traffic.sidecar.${MESH_DOMAIN}/excludeOutboundPorts`,
  excludeInterfaces: `traffic.sidecar.${MESH_DOMAIN}/excludeInterfaces`,
  /** Virtual interfaces (KubeVirt VMs) whose inbound traffic is captured as outbound: capture `-k`. */
  rerouteVirtualInterfaces: `${MESH_DOMAIN}/reroute-virtual-interfaces`,
  /** The older spelling of rerouteVirtualInterfaces, read when that is absent. */
  kubevirtInterfaces: `traffic.sidecar.${MESH_DOMAIN}/kubevirtInterfaces`,
  rewriteAppHTTPProbers: `sidecar.${MESH_DOMAIN}/rewriteAppHTTPProbers`,
  holdApplicationUntilProxyStarts: `sidecar.${MESH_DOMAIN}/holdApplicationUntilProxyStarts`,
  nativeSidecar: `sidecar.${MESH_DOMAIN}/nativeSidecar`,
  logLevel: `sidecar.${MESH_DOMAIN}/logLevel`,
  componentLogLevel: `sidecar.${MESH_DOMAIN}/componentLogLevel`,
  agentLogLevel: `sidecar.${MESH_DOMAIN}/agentLogLevel`,
  mergeMetrics: `prometheus.${MESH_DOMAIN}/merge-metrics`,
  /** The agent's status port (`0`: no status port, so no readiness probe and no probe rewriting). */
  statusPort: `status.sidecar.${MESH_DOMAIN}/port`,
  readinessInitialDelaySeconds: `readiness.status.sidecar.${MESH_DOMAIN}/initialDelaySeconds`,
  readinessPeriodSeconds: `readiness.status.sidecar.${MESH_DOMAIN}/periodSeconds`,
  readinessFailureThreshold: `readiness.status.sidecar.${MESH_DOMAIN}/failureThreshold`,
  /** JSON: volume name → volume source, added to the pod. */
  userVolume: `sidecar.${MESH_DOMAIN}/userVolume`,
  /** JSON: volume name → mount (mountPath, readOnly, ...), added to the proxy container. */
  userVolumeMount: `sidecar.${MESH_DOMAIN}/userVolumeMount`,
  /** A ConfigMap whose `custom_bootstrap.json` is merged over the proxy's bootstrap. */
  bootstrapOverride: `sidecar.${MESH_DOMAIN}/bootstrapOverride`,
  /**
   * Written on first injection when the pod declared containers customising injected ones (JSON
   * `{"containers": [...], "initContainers": [...]}`): re-injection puts them back.
   */
  overrides: `proxy.${MESH_DOMAIN}/overrides`,
  /** Written on injected pods: the revision that injected them. */
  revision: SharedLabels.revision,
} as const

export type InjectAnnotation = keyof typeof InjectAnnotations

/** Labels the injector reads (pod and namespace) or writes (pod). */
export const InjectLabels = {
  inject: SharedAnnotations.sidecarInject,
  revision: SharedLabels.revision,
  /** Namespace label selecting the default revision (`enabled`) or opting out (`disabled`). */
  namespaceInjection: "mesh-injection",
  /** Pod or namespace label: `ambient` puts the pod behind the node proxy, `none` keeps it out. */
  dataplaneMode: `${MESH_DOMAIN}/dataplane-mode`,
  tlsMode: `security.${MESH_DOMAIN}/tlsMode`,
  canonicalName: `service.${MESH_DOMAIN}/canonical-name`,
  canonicalRevision: `service.${MESH_DOMAIN}/canonical-revision`,
  /** Overrides the workload name the sidecar reports (MESH_META_WORKLOAD_NAME). */
  workloadName: `service.${MESH_DOMAIN}/workload-name`,
  network: SharedLabels.network,
} as const

/** The reference's spelling of a mesh key: `sidecar.mesh.io/x` → `sidecar.istio.io/x`, `mesh-injection` → `istio-injection`. */
export const upstreamSpelling = (key: string): string =>
  key === InjectLabels.namespaceInjection ? "istio-injection" : key.replace(MESH_DOMAIN, UPSTREAM_DOMAIN)

/** Orchestrator-defined names (not the mesh's), so never aliased. */
export const OrchestratorNames = {
  defaultContainer: "kubectl.kubernetes.io/default-container",
  defaultLogsContainer: "kubectl.kubernetes.io/default-logs-container",
  appName: "app.kubernetes.io/name",
  appVersion: "app.kubernetes.io/version",
  app: "app",
  version: "version",
  podTemplateHash: "pod-template-hash",
  /** Argo Rollouts' ReplicaSet hash label. */
  rolloutsPodTemplateHash: "rollouts-pod-template-hash",
  /** OpenShift: the DeploymentConfig whose ReplicationController made the pod. */
  deploymentConfig: "deploymentconfig",
  prometheusScrape: "prometheus.io/scrape",
  prometheusPort: "prometheus.io/port",
  prometheusPath: "prometheus.io/path",
  /** Multus: the extra networks of a pod, where the mesh CNI network is added when CNI is not chained. */
  multusNetworks: "k8s.v1.cni.cncf.io/networks",
} as const

/** The Multus network (NetworkAttachmentDefinition) that runs the mesh CNI plugin. */
export const MULTUS_MESH_NETWORK = "mesh-cni"
/** Its namespace: pods name it `<namespace>/<name>`, so one definition serves every namespace. */
export const MULTUS_MESH_NETWORK_NAMESPACE = "default"

/** Namespaces the injector never touches (the reference's ignored system namespaces). */
/** The dataplane-mode value of pods the node proxy serves. */
export const AMBIENT_MODE = "ambient"

export const IGNORED_NAMESPACES: ReadonlyArray<string> = ["kube-system", "kube-public"]

export const ContainerNames = {
  proxy: "mesh-proxy",
  init: "mesh-init",
  /** Under CNI: checks the plugin's capture rules are in place before the pod's containers start. */
  validation: "mesh-validation",
  grpcBootstrapInit: "grpc-bootstrap-init",
} as const

/** Proxy container names that mark a pod as already carrying a sidecar (ours and the reference's). */
export const PROXY_CONTAINER_NAMES: ReadonlyArray<string> = [ContainerNames.proxy, "istio-proxy"]

export const VolumeNames = {
  workloadSocket: "workload-socket",
  credentialSocket: "credential-socket",
  workloadCerts: "workload-certs",
  proxyConfig: "mesh-envoy",
  data: "mesh-data",
  podInfo: "mesh-podinfo",
  token: "mesh-token",
  caCert: "meshd-ca-cert",
  /** The CA's certificate revocation list (an optional ConfigMap: the pod starts without it). */
  caCrl: "mesh-ca-crl",
  /** The proxyless agent's xDS/SDS channel with the gRPC application. */
  grpcXds: "mesh-xds",
  grpcBootstrap: "grpc-io-proxyless-bootstrap",
  customBootstrap: "custom-bootstrap-volume",
  /** `global.mountMtlsCerts`: the user's own key and certificates (Secret `mesh.<service account>`). */
  mtlsCerts: "mesh-certs",
} as const

export const Paths = {
  workloadSocket: "/var/run/secrets/workload-spiffe-uds",
  credentialSocket: "/var/run/secrets/credential-uds",
  workloadCerts: "/var/run/secrets/workload-spiffe-credentials",
  caCert: "/var/run/secrets/mesh",
  caCrl: "/var/run/secrets/mesh/crl",
  data: "/var/lib/mesh/data",
  proxyConfig: "/etc/mesh/proxy",
  tokens: "/var/run/secrets/tokens",
  podInfo: "/etc/mesh/pod",
  grpcAgentBootstrap: "/etc/mesh/proxy/grpc-bootstrap.json",
  grpcSimpleDir: "/var/lib/grpc/data/",
  grpcSimpleBootstrap: "/var/lib/grpc/data/bootstrap.json",
  customBootstrapDir: "/etc/mesh/custom-bootstrap",
  customBootstrapFile: "/etc/mesh/custom-bootstrap/custom_bootstrap.json",
  mtlsCerts: "/etc/certs/",
} as const

/** The Secret `global.mountMtlsCerts` mounts: `mesh.<service account>` (`mesh.default` without one). */
export const mtlsCertsSecret = (serviceAccount: string): string =>
  `mesh.${serviceAccount === "" ? "default" : serviceAccount}`

/** The CA revocation list's ConfigMap unless the values' `pilot.crlConfigMapName` names another. */
export const CRL_CONFIGMAP = "mesh-ca-crl"

/** The CA root ConfigMap every namespace receives (services/ca/root-cert-configmap.ts). */
export const ROOT_CERT_CONFIGMAP = "mesh-ca-root-cert"
/** The projected token file name under Paths.tokens (what the agent reads, identity.ts). */
export const TOKEN_FILE = "mesh-token"

export const ProxyEnv = {
  appProbers: "MESH_ORCH_APP_PROBERS",
  prometheusAnnotations: "MESH_PROMETHEUS_ANNOTATIONS",
  dnsCapture: "MESH_META_DNS_CAPTURE",
  generator: "MESH_META_GENERATOR",
  bootstrapOverride: "MESH_BOOTSTRAP_OVERRIDE",
  statusPort: "STATUS_PORT",
} as const

/** The agent's status port when nothing sets another (mesh-agent's STATUS_PORT default). */
export const DEFAULT_STATUS_PORT = 15020

/** Metadata environment prefixes: the mesh's, and the reference's (renamed when found in proxyMetadata). */
export const META_PREFIXES = { mesh: "MESH_META_", meshJson: "MESH_METAJSON_", upstream: "ISTIO_META_" } as const

/** The proxy's uid/gid, excluded from capture by the iptables rules. */
export const PROXY_UID = 1337

/** The agent's readiness port (served by the agent itself, also in proxyless mode). */
export const READINESS_PORT = 15021
export const READINESS_PATH = "/healthz/ready"
export const PROXY_METRICS_PORT = 15090

/** Built-in template names. */
export const TemplateNames = {
  sidecar: "sidecar",
  init: "init",
  gateway: "gateway",
  grpcAgent: "grpc-agent",
  grpcSimple: "grpc-simple",
} as const

export const BUILTIN_TEMPLATES: ReadonlyArray<string> = Object.values(TemplateNames)
