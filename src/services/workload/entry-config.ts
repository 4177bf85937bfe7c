/**
 * `meshctl x workload entry configure`, the pure part: the files a VM's mesh-agent needs,
 * computed from a WorkloadGroup and the cluster's mesh config.
 *
 * - `cluster.env`: the variables the VM's start-up reads (service, namespace, account, which
 *   inbound ports to capture, which local ports never to capture).
 * - `mesh.yaml`: `defaultConfig` (the mesh's proxy config) with the discovery address and
 *   `proxyMetadata` naming the workload (cluster, network, labels, auto-registration group).
 * - `hosts`: the control plane's host name at the gateway that reaches it from outside.
 * Names follow the reference with the mesh's spellings (`MESH_META_*` for its `ISTIO_META_*`).
 */
import { Either } from "effect"
import { isMap, parseAllDocuments, stringify } from "yaml"
import { parseConfigDocuments } from "../config-model/parse.js"
import type { WorkloadGroupSpec } from "../config-model/schemas/workload-entry.js"
import { Ports } from "../constants.js"
import { InjectLabels, OrchestratorNames, upstreamSpelling } from "../injection/names.js"
import { DISCOVERY_NAME } from "../install/names.js"
import type { MeshConfig } from "../mesh-config/mesh-config.js"

export interface WorkloadGroupInfo {
  readonly name: string
  readonly namespace: string
  readonly spec: WorkloadGroupSpec
}

/**
 * The text with `defaultNamespace` set on documents that name none (the validator would put them
 * in `default`); unparseable text is left for the validator to report.
 */
const withDefaultNamespace = (text: string, defaultNamespace: string): string => {
  const docs = parseAllDocuments(text)
  if (docs.some((d) => d.errors.length > 0)) return text
  let changed = false
  for (const doc of docs) {
    const metadata = doc.get("metadata")
    if (isMap(metadata) && !metadata.has("namespace")) {
      metadata.set("namespace", defaultNamespace)
      changed = true
    }
  }
  return changed ? docs.map((d) => d.toString()).join("---\n") : text
}

/** The first WorkloadGroup of a file (namespace defaulting to `-n`), validated as the config store would. */
export const workloadGroupFromText = (
  file: string,
  text: string,
  defaultNamespace: string,
): Either.Either<WorkloadGroupInfo, string> => {
  const parsed = parseConfigDocuments(file, withDefaultNamespace(text, defaultNamespace))
  const group = parsed.resources.find((r) => r.kind === "WorkloadGroup")
  if (group === undefined) {
    const issue = parsed.issues[0]
    return Either.left(
      issue !== undefined
        ? `${file}: not a valid WorkloadGroup: ${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`
        : `${file}: no WorkloadGroup found`,
    )
  }
  return Either.right({
    name: group.meta.name,
    namespace: group.meta.namespace !== "" ? group.meta.namespace : defaultNamespace,
    spec: group.spec as WorkloadGroupSpec,
  })
}

/** What `entry configure` lacks to run: an output directory, and the group (file or name and namespace). */
export const missingEntryInputs = (flags: {
  readonly output: string
  readonly file: string
  readonly name: string
  readonly namespace: string
}): string | undefined => {
  if (flags.output === "") return "expecting an output directory (--output/-o)"
  if (flags.file === "" && (flags.name === "" || flags.namespace === ""))
    return "expecting a WorkloadGroup artifact file (--file) or its location on the API server (--name and --namespace/-n)"
  return undefined
}

/** The control plane's host as a VM resolves it: `meshd[-<revision>].<namespace>.svc`. */
export const discoveryHost = (systemNamespace: string, revision: string): string =>
  `${DISCOVERY_NAME}${revision === "" || revision === "default" ? "" : `-${revision}`}.${systemNamespace}.svc`

export const discoveryAddress = (systemNamespace: string, revision: string): string =>
  `${discoveryHost(systemNamespace, revision)}:${Ports.xdsTls}`

/** `--ingressService`: `<service>[.<namespace>]`, the namespace defaulting to the system one. */
export const ingressServiceRef = (
  flag: string,
  systemNamespace: string,
): { readonly name: string; readonly namespace: string } => {
  const dot = flag.indexOf(".")
  return dot < 0
    ? { name: flag, namespace: systemNamespace }
    : { name: flag.slice(0, dot), namespace: flag.slice(dot + 1) }
}

const firstSet = (...candidates: ReadonlyArray<string | undefined>): string | undefined =>
  candidates.find((c) => c !== undefined && c !== "")

/** Canonical service name and revision from the group's labels, as the injector derives them for pods. */
export const canonicalService = (
  labels: Readonly<Record<string, string>>,
  groupName: string,
): { readonly name: string; readonly revision: string } => ({
  name:
    firstSet(
      labels[InjectLabels.canonicalName],
      labels[upstreamSpelling(InjectLabels.canonicalName)],
      labels[OrchestratorNames.appName],
      labels[OrchestratorNames.app],
    ) ?? groupName,
  revision:
    firstSet(
      labels[InjectLabels.canonicalRevision],
      labels[upstreamSpelling(InjectLabels.canonicalRevision)],
      labels[OrchestratorNames.appVersion],
      labels[OrchestratorNames.version],
    ) ?? "latest",
})

export interface EntryOptions {
  readonly clusterId: string
  readonly systemNamespace: string
  readonly revision: string
  readonly autoregister: boolean
  readonly captureDns: boolean
  readonly externalIP: string
  readonly internalIP: string
}

const envText = (vars: Readonly<Record<string, string>>): string =>
  Object.keys(vars)
    .sort()
    .map((k) => `${k}=${vars[k]}\n`)
    .join("")

/** Ports never captured on a VM: ssh (so a broken proxy cannot lock the VM out), metrics, status. */
export const localExcludePorts = (statusPort: number): string =>
  [...new Set([22, Ports.proxyMetrics, Ports.proxyReadiness, statusPort])].join(",")

/** `cluster.env`: one `KEY=value` a line, sorted. */
export const clusterEnv = (group: WorkloadGroupInfo, mesh: MeshConfig, options: EntryOptions): string => {
  const template = group.spec.template
  const ports = Object.values(template.ports ?? {})
  const canonical = canonicalService(group.spec.metadata?.labels ?? {}, group.name)
  const ip =
    options.internalIP !== ""
      ? { MESH_SVC_IP: options.internalIP }
      : options.externalIP !== ""
        ? { MESH_SVC_IP: options.externalIP, REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: "true" }
        : {}
  return envText({
    CANONICAL_SERVICE: canonical.name,
    CANONICAL_REVISION: canonical.revision,
    MESH_CP_AUTH: mesh.defaultConfig.controlPlaneAuthPolicy,
    // The group's ports are captured; with none declared, every inbound port is.
    MESH_INBOUND_PORTS: ports.length > 0 ? ports.join(",") : "*",
    MESH_LOCAL_EXCLUDE_PORTS: localExcludePorts(mesh.defaultConfig.statusPort),
    MESH_NAMESPACE: group.namespace,
    MESH_SERVICE: `${group.name}.${group.namespace}`,
    MESH_SERVICE_CIDR: "*",
    POD_NAMESPACE: group.namespace,
    SERVICE_ACCOUNT: template.serviceAccount ?? "default",
    ...ip,
    ...(options.revision !== "" && options.revision !== "default"
      ? { CA_ADDR: discoveryAddress(options.systemNamespace, options.revision) }
      : {}),
  })
}

/** The proxy metadata naming the VM's workload to the control plane. */
export const proxyMetadata = (
  group: WorkloadGroupInfo,
  mesh: MeshConfig,
  options: EntryOptions,
): Readonly<Record<string, string>> => {
  const template = group.spec.template
  const labels = group.spec.metadata?.labels ?? {}
  const canonical = canonicalService(labels, group.name)
  const ports = Object.entries(template.ports ?? {}).map(([name, port]) => ({
    name,
    containerPort: port,
    protocol: "TCP",
  }))
  return {
    ...mesh.defaultConfig.proxyMetadata,
    CANONICAL_SERVICE: canonical.name,
    CANONICAL_REVISION: canonical.revision,
    POD_NAMESPACE: group.namespace,
    SERVICE_ACCOUNT: template.serviceAccount ?? "default",
    TRUST_DOMAIN: mesh.trustDomain,
    MESH_META_CLUSTER_ID: options.clusterId,
    MESH_META_MESH_ID: mesh.defaultConfig.meshId ?? mesh.trustDomain,
    MESH_META_WORKLOAD_NAME: group.name,
    MESH_METAJSON_LABELS: JSON.stringify({
      ...labels,
      [InjectLabels.canonicalName]: canonical.name,
      [InjectLabels.canonicalRevision]: canonical.revision,
    }),
    ...((template.network ?? "") !== "" ? { MESH_META_NETWORK: template.network! } : {}),
    ...(ports.length > 0 ? { MESH_META_POD_PORTS: JSON.stringify(ports) } : {}),
    ...(options.captureDns ? { MESH_META_DNS_CAPTURE: "true" } : {}),
    ...(options.autoregister ? { MESH_META_AUTO_REGISTER_GROUP: group.name } : {}),
  }
}

/** `mesh.yaml`: `defaultConfig` as the agent reads it (its `MESH_CONFIG`/mesh file). */
export const meshYaml = (group: WorkloadGroupInfo, mesh: MeshConfig, options: EntryOptions): string => {
  const revisioned = options.revision !== "" && options.revision !== "default"
  return stringify({
    defaultConfig: {
      ...mesh.defaultConfig,
      ...(revisioned ? { discoveryAddress: discoveryAddress(options.systemNamespace, options.revision) } : {}),
      proxyMetadata: proxyMetadata(group, mesh, options),
    },
  })
}

/** `hosts`: the gateway IP for the control plane's host, or empty when no IP is known. */
export const hostsFile = (ingressIP: string, host: string): string => (ingressIP === "" ? "" : `${ingressIP} ${host}\n`)
