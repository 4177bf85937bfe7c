/**
 * Ingress and egress gateways (`components.ingressGateways[]`, `egressGateways[]`): for each
 * enabled one a ServiceAccount, a Role to read its TLS secrets, a Deployment running the proxy
 * as a router, a Service (LoadBalancer for ingress, ClusterIP for egress), an HPA and a PDB.
 */
import { Labels, Ports } from "../constants.js"
import type { Obj } from "../orchestrator/json.js"
import { componentLabels, type InstallNames } from "./names.js"
import type { GatewayComponent } from "./operator.js"
import type { ResolvedOperator } from "./resolve.js"
import { fieldEnv, hpaFor, imageOf, mergeEnv, meta, pdbFor, podSettings, replicasOf } from "./workload.js"

type Direction = "ingress" | "egress"

const ports = () => [
  { name: "status-port", port: Ports.proxyReadiness, targetPort: Ports.proxyReadiness, protocol: "TCP" },
  { name: "http2", port: 80, targetPort: 8080, protocol: "TCP" },
  { name: "https", port: 443, targetPort: 8443, protocol: "TCP" },
]

const gatewayObjects = (
  op: ResolvedOperator,
  names: InstallNames,
  gw: GatewayComponent,
  direction: Direction,
): ReadonlyArray<Obj> => {
  const ns = gw.namespace ?? op.namespace
  const k8s = gw.k8s
  const labels = componentLabels(names, direction === "ingress" ? "IngressGateways" : "EgressGateways")
  const selector = { app: gw.name, mesh: `${direction}gateway`, ...gw.label }
  const podLabels = { ...selector, [Labels.revision]: names.revisionLabel, "sidecar.mesh.io/inject": "false" }
  const hpa = hpaFor(gw.name, ns, labels, { enabled: true, min: 1, max: 5, cpuUtilization: 80 }, k8s)
  const global = op.spec.values?.global
  const env = mergeEnv(
    [
      fieldEnv("POD_NAME", "metadata.name"),
      fieldEnv("POD_NAMESPACE", "metadata.namespace"),
      fieldEnv("INSTANCE_IP", "status.podIP"),
      fieldEnv("SERVICE_ACCOUNT", "spec.serviceAccountName"),
      { name: "MESH_META_CLUSTER_ID", value: global?.multiCluster?.clusterName || "Orchestrator" },
      { name: "CA_ADDR", value: `${names.discovery}.${op.namespace}.svc:${Ports.xdsTls}` },
    ],
    k8s?.env,
  )
  const deployment: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(gw.name, ns, labels),
    spec: {
      ...replicasOf(hpa, k8s, 1),
      selector: { matchLabels: selector },
      template: {
        metadata: {
          labels: podLabels,
          annotations: {
            "prometheus.io/port": String(Ports.agentStatus),
            "prometheus.io/scrape": "true",
            ...k8s?.podAnnotations,
          },
        },
        spec: {
          serviceAccountName: `${gw.name}-service-account`,
          ...podSettings(k8s),
          containers: [
            {
              name: "mesh-proxy",
              image: imageOf(gw.hub ?? op.hub, global?.proxy?.image ?? "proxyv2", String(gw.tag ?? op.tag)),
              args: ["proxy", "router", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning"],
              ports: [
                { name: "http-envoy-prom", containerPort: 15090, protocol: "TCP" },
                { name: "status-port", containerPort: Ports.proxyReadiness, protocol: "TCP" },
                { name: "http2", containerPort: 8080, protocol: "TCP" },
                { name: "https", containerPort: 8443, protocol: "TCP" },
              ],
              readinessProbe: structuredClone(k8s?.readinessProbe) ?? {
                httpGet: { path: "/healthz/ready", port: Ports.proxyReadiness },
                periodSeconds: 2,
                failureThreshold: 30,
              },
              env,
              resources: structuredClone(k8s?.resources) ?? {
                requests: { cpu: "100m", memory: "128Mi" },
                limits: { cpu: "2000m", memory: "1024Mi" },
              },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, runAsNonRoot: true },
              volumeMounts: structuredClone(k8s?.volumeMounts ?? []),
            },
          ],
          volumes: structuredClone(k8s?.volumes ?? []),
        },
      },
    },
  }
  const service: Obj = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      ...meta(gw.name, ns, { ...labels, ...selector }),
      ...(k8s?.serviceAnnotations !== undefined ? { annotations: { ...k8s.serviceAnnotations } } : {}),
    },
    spec: {
      type: direction === "ingress" ? "LoadBalancer" : "ClusterIP",
      selector: { ...selector },
      ports: ports(),
      ...structuredClone(k8s?.service ?? {}),
    },
  }
  const sa = `${gw.name}-service-account`
  const rbac = "rbac.authorization.k8s.io"
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(sa, ns, labels) },
    {
      apiVersion: `${rbac}/v1`,
      kind: "Role",
      metadata: meta(`${gw.name}-sds`, ns, labels),
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "watch", "list"] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: meta(`${gw.name}-sds`, ns, labels),
      roleRef: { apiGroup: rbac, kind: "Role", name: `${gw.name}-sds` },
      subjects: [{ kind: "ServiceAccount", name: sa }],
    },
    deployment,
    service,
    ...(hpa !== undefined ? [hpa] : []),
    ...((global?.defaultPodDisruptionBudget?.enabled ?? true) ? [pdbFor(gw.name, ns, labels, selector, k8s)] : []),
  ]
}

export const gatewayObjectsOf = (op: ResolvedOperator, names: InstallNames): ReadonlyArray<Obj> => [
  ...(op.spec.components?.ingressGateways ?? [])
    .filter((g) => g.enabled === true)
    .flatMap((g) => gatewayObjects(op, names, g, "ingress")),
  ...(op.spec.components?.egressGateways ?? [])
    .filter((g) => g.enabled === true)
    .flatMap((g) => gatewayObjects(op, names, g, "egress")),
]
