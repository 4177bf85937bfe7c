/**
 * The proxy container's environment, the reference's set renamed: the pod's identity through the
 * downward API, the proxy config, the metadata the control plane reads (`MESH_META_*`: ports,
 * app containers, cluster, interception mode, workload, owner, mesh id) and the proxy config's
 * proxyMetadata entries (where DNS capture, `MESH_META_DNS_CAPTURE`, is switched on).
 */
import { DEFAULT_CLUSTER_ID, DEFAULT_TRUST_DOMAIN } from "../constants.js"
import { asObject, asObjects, type Obj, stringAt } from "../orchestrator/json.js"
import { normalRevision } from "./decision.js"
import type { EnvVar } from "./env-var.js"
import { otelResourceAttributes } from "./otel-resource-attributes.js"
import { ownerUri, type WorkloadOwner } from "./owner.js"
import { podNetwork, workloadNameLabel } from "./pod-metadata.js"
import type { PodSettings } from "./pod-settings.js"
import { proxyConfigEnvValue } from "./proxy-config.js"

const field = (name: string, fieldPath: string): EnvVar => ({ name, valueFrom: { fieldRef: { fieldPath } } })
const literal = (name: string, value: string): EnvVar => ({ name, value })

/** The pod's identity as the agent reads it. */
export const downwardApiEnv: ReadonlyArray<EnvVar> = [
  field("POD_NAME", "metadata.name"),
  field("POD_NAMESPACE", "metadata.namespace"),
  field("INSTANCE_IP", "status.podIP"),
  field("SERVICE_ACCOUNT", "spec.serviceAccountName"),
  field("HOST_IP", "status.hostIP"),
]

/** The CA address: the values' `global.caAddress`, else this revision's discovery service. */
export const caAddress = (settings: PodSettings, revision: string): string =>
  settings.values.caAddress !== ""
    ? settings.values.caAddress
    : `meshd${normalRevision(revision) === "default" ? "" : `-${revision}`}.${settings.values.meshNamespace}.svc:15012`

/** The pod's declared container ports, as the reference's `ISTIO_META_POD_PORTS` lists them. */
export const podPortsJson = (containers: ReadonlyArray<Obj>): string =>
  JSON.stringify(containers.flatMap((c) => asObjects(c.ports)))

export interface ProxyEnvInputs {
  readonly settings: PodSettings
  readonly appContainers: ReadonlyArray<Obj>
  readonly podContainers: ReadonlyArray<Obj>
  readonly owner: WorkloadOwner
  readonly namespace: string
  readonly revision: string
  readonly meshConfig: Obj
  /** The injector's `COMPLIANCE_POLICY` ("" for none). */
  readonly compliancePolicy: string
  /** Whether traffic is captured (MESH_META_INTERCEPTION_MODE is meaningless otherwise). */
  readonly capture: boolean
}

/**
 * `COMPLIANCE_POLICY` of the injector, handed to the agent (`fips-140-3` also sets the GODEBUG the
 * reference's Go agent reads, so the pod is the same whichever agent runs in it).
 */
const complianceEnv = (policy: string): ReadonlyArray<EnvVar> =>
  policy === ""
    ? []
    : [literal("COMPLIANCE_POLICY", policy), ...(policy === "fips-140-3" ? [literal("GODEBUG", "fips140=only")] : [])]

/**
 * `sidecar`: the sidecar template's extras — probes sent to localhost when the mesh config's
 * inbound traffic policy is LOCALHOST (the application may listen on loopback only), and the
 * OpenTelemetry resource attributes.
 */
export const proxyEnv = (inputs: ProxyEnvInputs, sidecar = false): ReadonlyArray<EnvVar> => {
  const { settings, owner } = inputs
  const values = settings.values
  const network = podNetwork(settings)
  const trustDomain = stringAt(inputs.meshConfig.trustDomain) || values.trustDomain || DEFAULT_TRUST_DOMAIN
  const meshId = values.meshId !== "" ? values.meshId : trustDomain
  const owned = ownerUri(owner, inputs.namespace)
  const metadata = settings.proxyConfig.proxyMetadata
  // The sidecar lets the pod's workload-name label name its workload.
  const workloadName = (sidecar ? workloadNameLabel(settings) : undefined) || owner.name
  const localhostProbes = asObject(inputs.meshConfig.inboundTrafficPolicy).mode === "LOCALHOST"
  const otel = sidecar
    ? otelResourceAttributes(
        inputs.meshConfig,
        settings.annotations,
        settings.labels,
        inputs.namespace,
        inputs.podContainers,
      )
    : ""
  return [
    ...(sidecar && localhostProbes ? [literal("REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION", "true")] : []),
    literal("CA_ADDR", caAddress(settings, inputs.revision)),
    ...downwardApiEnv,
    { name: "MESH_CPU_LIMIT", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
    literal("PROXY_CONFIG", proxyConfigEnvValue(settings.proxyConfig)),
    literal("MESH_META_POD_PORTS", podPortsJson(inputs.podContainers)),
    literal("MESH_META_APP_CONTAINERS", inputs.appContainers.map((c) => stringAt(c.name) ?? "").join(",")),
    ...complianceEnv(inputs.compliancePolicy),
    literal("MESH_META_CLUSTER_ID", values.clusterName !== "" ? values.clusterName : DEFAULT_CLUSTER_ID),
    field("MESH_META_NODE_NAME", "spec.nodeName"),
    ...(inputs.capture ? [literal("MESH_META_INTERCEPTION_MODE", settings.interceptionMode)] : []),
    ...(network !== "" ? [literal("MESH_META_NETWORK", network)] : []),
    ...(workloadName !== "" ? [literal("MESH_META_WORKLOAD_NAME", workloadName)] : []),
    ...(owned !== undefined ? [literal("MESH_META_OWNER", owned)] : []),
    literal("MESH_META_MESH_ID", meshId),
    literal("TRUST_DOMAIN", trustDomain),
    ...(otel === "" ? [] : [literal("OTEL_RESOURCE_ATTRIBUTES", otel)]),
    ...proxyMetadataEnv(metadata),
  ]
}

/** proxyMetadata entries in key order (the reference ranges over a Go map, which sorts). */
export const proxyMetadataEnv = (metadata: Readonly<Record<string, string>>): ReadonlyArray<EnvVar> =>
  Object.keys(metadata)
    .sort()
    .map((key) => literal(key, metadata[key] ?? ""))

/** Sets (replacing a same-named entry) or appends environment variables. */
export const withEnv = (env: unknown, added: ReadonlyArray<EnvVar>): ReadonlyArray<Obj> => {
  const out: Array<Obj> = [...asObjects(env)]
  for (const entry of added) {
    const at = out.findIndex((e) => e.name === entry.name)
    if (at >= 0) out[at] = { ...entry }
    else out.push({ ...entry })
  }
  return out
}

export const envValue = (container: Obj, name: string): string | undefined =>
  stringAt(asObjects(container.env).find((e) => e.name === name)?.value)
