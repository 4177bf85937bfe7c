/**
 * The `init` template: traffic capture. Without CNI, the `mesh-init` init container runs
 * `mesh-agent mesh-iptables` as root with NET_ADMIN/NET_RAW, its flags from the
 * `traffic.sidecar.mesh.io/*` annotations (else the values); the proxy's own inbound ports
 * (metrics 15090, readiness 15021, agent status 15020) are always excluded from inbound capture.
 * With CNI enabled, the CNI plugin sets the rules: the same settings are written as annotations
 * it reads, and instead of the privileged container an unprivileged `mesh-validation` checks
 * that the plugin's rules are in place (with the plugin as a Multus network, the pod also asks
 * for that network, `<namespace>/<name>`). Interception mode NONE captures nothing.
 */

import type { Obj } from "../../orchestrator/json.js"
import type { Fragment, Template } from "../fragment.js"
import { emptyFragment } from "../fragment.js"
import { appendMultusNetwork } from "../multus.js"
import {
  ContainerNames,
  InjectAnnotations,
  MULTUS_MESH_NETWORK,
  MULTUS_MESH_NETWORK_NAMESPACE,
  OrchestratorNames,
  PROXY_METRICS_PORT,
  PROXY_UID,
  READINESS_PORT,
} from "../names.js"
import type { PodSettings } from "../pod-settings.js"
import { resourcesField } from "../proxy-container.js"
import { proxyMetadataEnv } from "../proxy-env.js"

const portOf = (meshConfig: Obj, field: string, fallback: number): string =>
  String(typeof meshConfig[field] === "number" ? meshConfig[field] : fallback)

/** The user's inbound exclusions with the agent status port in front (unless listed, or 0). */
export const excludedInboundPorts = (settings: PodSettings): string => {
  const status = String(settings.statusPort)
  const listed = settings.capture.excludeInboundPorts
  const ports = listed === "" ? [] : listed.split(",")
  if (status === "0" || ports.includes(status)) return ports.join(",")
  return [status, ...ports].join(",")
}

const iptablesArgs = (settings: PodSettings, meshConfig: Obj): ReadonlyArray<string> => {
  const c = settings.capture
  const excluded = excludedInboundPorts(settings)
  return [
    "mesh-iptables",
    "-p",
    portOf(meshConfig, "proxyListenPort", 15001),
    "-z",
    portOf(meshConfig, "proxyInboundListenPort", 15006),
    "-u",
    String(PROXY_UID),
    "-m",
    settings.interceptionMode,
    "-i",
    c.includeOutboundIPRanges,
    "-x",
    c.excludeOutboundIPRanges,
    "-b",
    c.includeInboundPorts,
    "-d",
    [String(PROXY_METRICS_PORT), String(READINESS_PORT), ...(excluded === "" ? [] : [excluded])].join(","),
    ...(c.includeOutboundPorts === undefined ? [] : ["-q", c.includeOutboundPorts]),
    ...(c.excludeOutboundPorts === undefined ? [] : ["-o", c.excludeOutboundPorts]),
    ...(c.virtualInterfaces === undefined ? [] : ["-k", c.virtualInterfaces]),
    ...(c.excludeInterfaces === undefined ? [] : ["-c", c.excludeInterfaces]),
    `--log_output_level=${settings.agentLogLevel}`,
    ...(settings.values.logAsJson ? ["--log_as_json"] : []),
  ]
}

/**
 * `mesh-init` applies the rules as root with NET_ADMIN/NET_RAW. Under CNI the plugin applies
 * them, and `mesh-validation` only checks they are in place (`--run-validation
 * --skip-rule-apply`), holding the pod back until they are; it needs no capability and runs as
 * the proxy's uid (in TPROXY, 1337: the proxy itself is root there).
 */
const captureContainer = (settings: PodSettings, meshConfig: Obj, validation: boolean): Obj => {
  const values = settings.values
  const metadata = proxyMetadataEnv(settings.proxyConfig.proxyMetadata)
  return {
    name: validation ? ContainerNames.validation : ContainerNames.init,
    image: settings.proxyInitImage,
    args: [...iptablesArgs(settings, meshConfig), ...(validation ? ["--run-validation", "--skip-rule-apply"] : [])],
    ...(values.imagePullPolicy === "" ? {} : { imagePullPolicy: values.imagePullPolicy }),
    // proxyMetadata reaches mesh-iptables too: MESH_META_DNS_CAPTURE turns on DNS redirection.
    ...(metadata.length > 0 ? { env: metadata } : {}),
    ...resourcesField(settings),
    securityContext: validation
      ? {
          allowPrivilegeEscalation: values.privileged,
          privileged: values.privileged,
          capabilities: { drop: ["ALL"] },
          readOnlyRootFilesystem: true,
          runAsGroup: PROXY_UID,
          runAsUser: PROXY_UID,
          runAsNonRoot: true,
        }
      : {
          allowPrivilegeEscalation: values.privileged,
          privileged: values.privileged,
          capabilities: { add: ["NET_ADMIN", "NET_RAW"], drop: ["ALL"] },
          readOnlyRootFilesystem: false,
          runAsGroup: 0,
          runAsNonRoot: false,
          runAsUser: 0,
        },
  }
}

/** The annotations the CNI plugin reads, with the values' defaults made explicit. */
const cniAnnotations = (settings: PodSettings): Readonly<Record<string, string>> => {
  const c = settings.capture
  const out: Record<string, string> = { [InjectAnnotations.interceptionMode]: settings.interceptionMode }
  const set = (key: string, value: string | undefined) => {
    if (value !== undefined && value !== "") out[key] = value
  }
  set(InjectAnnotations.includeOutboundIPRanges, c.includeOutboundIPRanges)
  set(InjectAnnotations.excludeOutboundIPRanges, c.excludeOutboundIPRanges)
  set(InjectAnnotations.includeInboundPorts, c.includeInboundPorts)
  out[InjectAnnotations.excludeInboundPorts] = excludedInboundPorts(settings)
  if (c.includeOutboundPorts !== undefined) out[InjectAnnotations.includeOutboundPorts] = c.includeOutboundPorts
  if (c.excludeOutboundPorts !== undefined) out[InjectAnnotations.excludeOutboundPorts] = c.excludeOutboundPorts
  // The effective list under the spelling the plugin reads first (the pod keeps its own key too).
  set(InjectAnnotations.rerouteVirtualInterfaces, c.virtualInterfaces)
  set(InjectAnnotations.excludeInterfaces, c.excludeInterfaces)
  return out
}

/** The pod's Multus networks with the mesh CNI network (`default/mesh-cni`, as the reference names its own) added once. */
export const withMeshNetwork = (existing: string | undefined): string =>
  appendMultusNetwork(existing ?? "", `${MULTUS_MESH_NETWORK_NAMESPACE}/${MULTUS_MESH_NETWORK}`)

export const captureTemplate: Template = (context): Fragment => {
  const settings = context.settings
  const cni = settings.values.cniEnabled
  const initContainers =
    settings.interceptionMode === "NONE" ? [] : [captureContainer(settings, context.meshConfig, cni)]
  if (!cni) return { ...emptyFragment, initContainers }
  const multus = settings.values.cniMultus
    ? { [OrchestratorNames.multusNetworks]: withMeshNetwork(settings.annotations[OrchestratorNames.multusNetworks]) }
    : {}
  return { ...emptyFragment, initContainers, annotations: { ...cniAnnotations(settings), ...multus } }
}
