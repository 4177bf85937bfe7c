/**
 * The control plane (`components.pilot`): mesh-discovery's ServiceAccount, its cluster-wide and
 * namespaced RBAC (exactly what it reads and writes: the registry and config informers, the
 * status writer, the webhook CA-bundle patchers, leader-election leases, the CA's secrets and
 * ConfigMaps, token reviews), the mesh and injector ConfigMaps, Deployment, Service, HPA, PDB.
 */
import { stringify } from "yaml"
import { Labels, Ports } from "../constants.js"
import { defaultInjectionConfig } from "../injection/config.js"
import { defaultInjectionValues } from "../injection/values.js"
import { MESH_CONFIG_KEY } from "../mesh-config/configmap.js"
import type { Obj } from "../orchestrator/json.js"
import { componentLabels, type InstallNames } from "./names.js"
import { deepMerge } from "./overlay.js"
import type { ResolvedOperator } from "./resolve.js"
import { fieldEnv, hpaFor, imageOf, mergeEnv, meta, pdbFor, podSettings, replicasOf } from "./workload.js"

// The injector config users write: the parsed ConfigMap templates are our runtime form, not a key.
const { executableTemplates: _parsed, ...injectorConfigText } = defaultInjectionConfig

const MESH_GROUPS = ["networking", "security", "telemetry", "extensions"]
const configGroups = MESH_GROUPS.flatMap((g) => [`${g}.mesh.io`, `${g}.istio.io`])
const READ = ["get", "list", "watch"]

export const discoveryClusterRules: ReadonlyArray<Obj> = [
  { apiGroups: configGroups, resources: ["*"], verbs: READ },
  { apiGroups: configGroups, resources: ["*/status"], verbs: ["get", "update", "patch"] },
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["*"], verbs: READ },
  { apiGroups: ["gateway.networking.k8s.io"], resources: ["*/status"], verbs: ["get", "update", "patch"] },
  { apiGroups: [""], resources: ["pods", "services", "endpoints", "namespaces", "nodes", "secrets"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  // Ingresses served as Gateways (mesh config ingressControllerMode), their status written back.
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "ingressclasses"], verbs: READ },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["update", "patch"] },
  { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: READ },
  {
    apiGroups: ["admissionregistration.k8s.io"],
    resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"],
    verbs: [...READ, "update", "patch"],
  },
  // The Gateway-API deployment controller follows and server-side applies each Gateway's
  // Deployment, Service and ServiceAccount in any namespace (found missing on a real API server).
  { apiGroups: ["apps"], resources: ["deployments"], verbs: [...READ, "create", "update", "patch", "delete"] },
  {
    apiGroups: [""],
    resources: ["services", "serviceaccounts"],
    verbs: [...READ, "create", "update", "patch", "delete"],
  },
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
  // The root certificate is published as a ConfigMap in every namespace.
  { apiGroups: [""], resources: ["configmaps"], verbs: [...READ, "create", "update"] },
]

export const discoveryNamespaceRules: ReadonlyArray<Obj> = [
  { apiGroups: [""], resources: ["secrets"], verbs: [...READ, "create", "update", "delete"] },
  { apiGroups: [""], resources: ["configmaps"], verbs: [...READ, "create", "update", "delete"] },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] },
]

/** The ClusterRole/Role pair and their bindings for a service account. */
export const rbacFor = (
  sa: string,
  namespace: string,
  clusterRole: string,
  role: string | undefined,
  labels: Readonly<Record<string, string>>,
  clusterRules: ReadonlyArray<Obj>,
  namespaceRules: ReadonlyArray<Obj>,
): ReadonlyArray<Obj> => {
  const subjects = [{ kind: "ServiceAccount", name: sa, namespace }]
  const rbac = "rbac.authorization.k8s.io"
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRole",
      metadata: meta(clusterRole, undefined, labels),
      rules: structuredClone(clusterRules),
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: meta(clusterRole, undefined, labels),
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: clusterRole },
      subjects,
    },
    ...(role === undefined || namespaceRules.length === 0
      ? []
      : [
          {
            apiVersion: `${rbac}/v1`,
            kind: "Role",
            metadata: meta(role, namespace, labels),
            rules: structuredClone(namespaceRules),
          },
          {
            apiVersion: `${rbac}/v1`,
            kind: "RoleBinding",
            metadata: meta(role, namespace, labels),
            roleRef: { apiGroup: rbac, kind: "Role", name: role },
            subjects,
          },
        ]),
  ]
}

/** The injector's `values`: the built-in defaults with the operator's values and hub/tag over them. */
const injectorValues = (op: ResolvedOperator, names: InstallNames): Obj =>
  deepMerge(deepMerge(defaultInjectionValues as unknown as Obj, (op.spec.values ?? {}) as Obj), {
    revision: names.revision,
    global: { hub: op.hub, tag: op.tag, istioNamespace: op.namespace },
    meshConfig: op.spec.meshConfig ?? {},
  })

const configMaps = (op: ResolvedOperator, names: InstallNames, labels: Record<string, string>): ReadonlyArray<Obj> => [
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(names.meshConfigMap, op.namespace, labels),
    data: { [MESH_CONFIG_KEY]: stringify(op.spec.meshConfig ?? {}, { sortMapEntries: true }) },
  },
  {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: meta(names.injectorConfigMap, op.namespace, labels),
    data: {
      config: stringify(injectorConfigText, { sortMapEntries: true }),
      values: JSON.stringify(injectorValues(op, names), null, 2),
    },
  },
]

const servicePorts = [
  { name: "grpc-xds", port: Ports.xdsPlaintext, protocol: "TCP" },
  { name: "https-dns", port: Ports.xdsTls, protocol: "TCP" },
  { name: "https-webhook", port: 443, targetPort: Ports.webhooks, protocol: "TCP" },
  { name: "http-monitoring", port: Ports.monitoring, protocol: "TCP" },
]

export const controlPlaneObjects = (op: ResolvedOperator, names: InstallNames): ReadonlyArray<Obj> => {
  const pilot = op.spec.components?.pilot
  if (pilot?.enabled !== true) return []
  const values = op.spec.values?.pilot
  const global = op.spec.values?.global
  const k8s = pilot.k8s
  const ns = pilot.namespace ?? op.namespace
  const labels = componentLabels(names, "Pilot")
  const selector = { app: "meshd", [Labels.revision]: names.revisionLabel }
  const podLabels = { ...selector, mesh: "pilot", "sidecar.mesh.io/inject": "false" }
  const hpa = hpaFor(
    names.discovery,
    ns,
    labels,
    {
      enabled: values?.autoscaleEnabled ?? true,
      min: values?.autoscaleMin ?? 1,
      max: values?.autoscaleMax ?? 5,
      cpuUtilization: values?.cpu?.targetAverageUtilization ?? 80,
    },
    k8s,
  )
  const env = mergeEnv(
    [
      { name: "REVISION", value: names.revisionLabel },
      fieldEnv("POD_NAME", "metadata.name"),
      fieldEnv("POD_NAMESPACE", "metadata.namespace"),
      fieldEnv("SERVICE_ACCOUNT", "spec.serviceAccountName"),
      { name: "INJECTION_WEBHOOK_CONFIG_NAME", value: names.injectionWebhook },
      { name: "VALIDATION_WEBHOOK_CONFIG_NAME", value: names.validationWebhook },
      { name: "PILOT_TRACE_SAMPLING", value: String(values?.traceSampling ?? 1) },
      { name: "CLUSTER_ID", value: global?.multiCluster?.clusterName || "Orchestrator" },
      ...Object.entries(values?.env ?? {}).map(([name, value]) => ({ name, value: String(value) })),
    ],
    k8s?.env,
  )
  const deployment: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(names.discovery, ns, labels),
    spec: {
      ...replicasOf(hpa, k8s, values?.replicaCount ?? 1),
      selector: { matchLabels: selector },
      strategy: structuredClone(k8s?.strategy) ?? { rollingUpdate: { maxSurge: "100%", maxUnavailable: "25%" } },
      template: {
        metadata: {
          labels: podLabels,
          annotations: {
            "prometheus.io/port": String(Ports.monitoring),
            "prometheus.io/scrape": "true",
            ...k8s?.podAnnotations,
          },
        },
        spec: {
          serviceAccountName: names.discovery,
          ...podSettings(k8s),
          containers: [
            {
              name: "discovery",
              image: imageOf(pilot.hub ?? op.hub, values?.image ?? "pilot", String(pilot.tag ?? op.tag)),
              ...((k8s?.imagePullPolicy ?? global?.imagePullPolicy)
                ? { imagePullPolicy: k8s?.imagePullPolicy ?? global?.imagePullPolicy }
                : {}),
              args: [
                "discovery",
                `--monitoringAddr=:${Ports.monitoring}`,
                ...(global?.logAsJson === true ? ["--log_as_json"] : []),
                "--domain",
                "cluster.local",
                "--keepaliveMaxServerConnectionAge",
                "30m",
              ],
              ports: [
                { name: "http-debug", containerPort: Ports.http, protocol: "TCP" },
                { name: "grpc-xds", containerPort: Ports.xdsPlaintext, protocol: "TCP" },
                { name: "tls-xds", containerPort: Ports.xdsTls, protocol: "TCP" },
                { name: "https-webhooks", containerPort: Ports.webhooks, protocol: "TCP" },
                { name: "http-monitoring", containerPort: Ports.monitoring, protocol: "TCP" },
              ],
              readinessProbe: structuredClone(k8s?.readinessProbe) ?? {
                httpGet: { path: "/ready", port: Ports.http },
                initialDelaySeconds: 1,
                periodSeconds: 3,
                timeoutSeconds: 5,
              },
              env,
              resources: structuredClone(k8s?.resources ?? values?.resources ?? {}),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [
                { name: "mesh-config", mountPath: "/etc/mesh/config" },
                { name: "inject", mountPath: "/var/lib/mesh/inject", readOnly: true },
                { name: "local-certs", mountPath: "/var/run/secrets/mesh-dns" },
                ...structuredClone(k8s?.volumeMounts ?? []),
              ],
            },
          ],
          volumes: [
            { name: "local-certs", emptyDir: { medium: "Memory" } },
            { name: "mesh-config", configMap: { name: names.meshConfigMap } },
            { name: "inject", configMap: { name: names.injectorConfigMap } },
            ...structuredClone(k8s?.volumes ?? []),
          ],
        },
      },
    },
  }
  const service: Obj = {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      ...meta(names.discovery, ns, { ...labels, app: "meshd", mesh: "pilot" }),
      ...(k8s?.serviceAnnotations !== undefined ? { annotations: { ...k8s.serviceAnnotations } } : {}),
    },
    spec: { ports: structuredClone(servicePorts), selector: { ...selector }, ...structuredClone(k8s?.service ?? {}) },
  }
  const pdbEnabled = global?.defaultPodDisruptionBudget?.enabled ?? true
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: meta(names.discovery, ns, labels) },
    ...rbacFor(
      names.discovery,
      ns,
      names.clusterRole,
      names.role,
      labels,
      discoveryClusterRules,
      discoveryNamespaceRules,
    ),
    ...configMaps({ ...op, namespace: ns }, names, labels),
    deployment,
    service,
    ...(hpa !== undefined ? [hpa] : []),
    ...(pdbEnabled ? [pdbFor(names.discovery, ns, labels, selector, k8s)] : []),
  ]
}
