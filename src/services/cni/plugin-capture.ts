/**
 * The capture settings of one pod, from its `traffic.sidecar.mesh.io/*` annotations (the
 * injector writes them under CNI) and its proxy container, with the reference plugin's
 * defaults, and their translation into the same IptablesConfig / ApplyOptions that
 * `mesh-agent mesh-iptables` builds its rules from.
 */
import { Duration, Either } from "effect"
import { MESH_DOMAIN, Ports } from "../constants.js"
import { aliasedReader } from "../injection/aliased-metadata.js"
import { cidrList, portListOrWildcard } from "../injection/annotation-values.js"
import { InjectAnnotations } from "../injection/names.js"
import { DEFAULT_PROXY_UID, defaultIptablesConfig, type IptablesConfig, ipFamilyOf } from "../iptables/config.js"
import type { ApplyOptions } from "../iptables/service.js"
import { type PodFacts, parseGoBool } from "./plugin-pod.js"
import { CniError, CniErrorCodes } from "./plugin-protocol.js"

export interface CaptureSettings {
  readonly interceptionMode: "REDIRECT" | "TPROXY"
  readonly proxyUid: string
  readonly proxyGid: string
  readonly includeOutboundIPRanges: string
  readonly excludeOutboundIPRanges: string
  readonly includeInboundPorts: string
  readonly excludeInboundPorts: string
  readonly includeOutboundPorts: string
  readonly excludeOutboundPorts: string
  readonly excludeInterfaces: string
  readonly rerouteVirtualInterfaces: string
  readonly dnsCapture: boolean
  readonly dualStack: boolean
  readonly dropInvalid: boolean
}

/** Capture keys that are not the injector's (only the plugin reads them). */
export const PluginAnnotations = {
  rerouteVirtualInterfaces: `${MESH_DOMAIN}/reroute-virtual-interfaces`,
  /** Deprecated spelling of the above; read only when it is absent. */
  kubevirtInterfaces: `traffic.sidecar.${MESH_DOMAIN}/kubevirtInterfaces`,
} as const

/** Proxy environment variables that switch capture features (mesh spelling, then the reference's). */
export const ProxyCaptureEnv = {
  dnsCapture: ["MESH_META_DNS_CAPTURE", "ISTIO_META_DNS_CAPTURE"],
  dualStack: ["MESH_DUAL_STACK", "ISTIO_DUAL_STACK"],
  dropInvalid: ["INVALID_DROP"],
} as const

/** The reference plugin's defaults for absent annotations. */
export const CaptureDefaults = {
  includeOutboundIPRanges: "*",
  excludeOutboundIPRanges: "",
  includeInboundPorts: "*",
  /** The agent status port, as the reference defaults both exclusions. */
  excludeInboundPorts: String(Ports.agentStatus),
  excludeOutboundPorts: String(Ports.agentStatus),
  includeOutboundPorts: "",
} as const

/** The proxy's own inbound ports (status, readiness, metrics): never captured inbound. */
export const ALWAYS_EXCLUDED_INBOUND_PORTS: ReadonlyArray<string> = [
  String(Ports.agentStatus),
  String(Ports.proxyReadiness),
  String(Ports.proxyMetrics),
]

const LINUX_INTERFACE = /^[^\s/:]{1,15}$/

const interfaceList = (text: string): Either.Either<string, string> => {
  const names = text.split(",").map((name) => name.trim())
  if (text.trim() === "") return Either.right("")
  const bad = names.find((name) => !LINUX_INTERFACE.test(name))
  return bad === undefined ? Either.right(names.join(",")) : Either.left(`"${bad}" is not an interface name`)
}

const cidrListOrWildcard = (text: string): Either.Either<string, string> =>
  text.trim() === "*" ? Either.right("*") : cidrList(text)

const dedup = (items: ReadonlyArray<string>) => [...new Set(items)]

/** The first value of an environment variable under any of its spellings. */
const envBool = (env: Readonly<Record<string, string>>, names: ReadonlyArray<string>): boolean | undefined => {
  for (const name of names) if (Object.hasOwn(env, name)) return parseGoBool(env[name]!)
  return undefined
}

/** A positive id from the proxy's securityContext, else the proxy user's default 1337. */
const idOr = (id: number | undefined) =>
  id !== undefined && Number.isInteger(id) && id > 0 ? String(id) : DEFAULT_PROXY_UID

/**
 * Reads the pod's capture settings; an annotation with a value the rules cannot take fails
 * (error 101) rather than silently capturing differently from what the pod asked.
 */
export const captureSettingsOf = (pod: PodFacts): Either.Either<CaptureSettings, CniError> => {
  const annotations = aliasedReader(pod.annotations, "annotation")
  const problems: Array<string> = []
  const read = (key: string, fallback: string, check: (text: string) => Either.Either<string, string>): string => {
    const found = annotations.get(key)
    if (found === undefined) return fallback
    return Either.match(check(found.value), {
      onLeft: (problem) => {
        problems.push(`${found.key}="${found.value}": ${problem}`)
        return fallback
      },
      onRight: (value) => value,
    })
  }
  const mode = read(InjectAnnotations.interceptionMode, "REDIRECT", (text) =>
    text === "REDIRECT" || text === "TPROXY" ? Either.right(text) : Either.left("must be REDIRECT or TPROXY"),
  ) as CaptureSettings["interceptionMode"]
  const excludeInbound = read(
    InjectAnnotations.excludeInboundPorts,
    CaptureDefaults.excludeInboundPorts,
    portListOrWildcard,
  )
  const reroute =
    annotations.get(PluginAnnotations.rerouteVirtualInterfaces) !== undefined
      ? read(PluginAnnotations.rerouteVirtualInterfaces, "", interfaceList)
      : read(PluginAnnotations.kubevirtInterfaces, "", interfaceList)
  const env = pod.proxy?.env ?? {}
  const settings: CaptureSettings = {
    interceptionMode: mode,
    proxyUid: idOr(pod.proxy?.runAsUser),
    proxyGid: idOr(pod.proxy?.runAsGroup),
    includeOutboundIPRanges: read(
      InjectAnnotations.includeOutboundIPRanges,
      CaptureDefaults.includeOutboundIPRanges,
      cidrListOrWildcard,
    ),
    excludeOutboundIPRanges: read(
      InjectAnnotations.excludeOutboundIPRanges,
      CaptureDefaults.excludeOutboundIPRanges,
      cidrList,
    ),
    includeInboundPorts: read(
      InjectAnnotations.includeInboundPorts,
      CaptureDefaults.includeInboundPorts,
      portListOrWildcard,
    ),
    // The proxy's own ports are appended whatever the annotation says.
    excludeInboundPorts: dedup(
      [...excludeInbound.split(","), ...ALWAYS_EXCLUDED_INBOUND_PORTS].filter((p) => p !== ""),
    ).join(","),
    includeOutboundPorts: read(
      InjectAnnotations.includeOutboundPorts,
      CaptureDefaults.includeOutboundPorts,
      portListOrWildcard,
    ),
    excludeOutboundPorts: read(
      InjectAnnotations.excludeOutboundPorts,
      CaptureDefaults.excludeOutboundPorts,
      portListOrWildcard,
    ),
    excludeInterfaces: read(InjectAnnotations.excludeInterfaces, "", interfaceList),
    rerouteVirtualInterfaces: reroute,
    dnsCapture: envBool(env, ProxyCaptureEnv.dnsCapture) ?? false,
    dualStack: envBool(env, ProxyCaptureEnv.dualStack) ?? false,
    dropInvalid: envBool(env, ProxyCaptureEnv.dropInvalid) ?? false,
  }
  return problems.length === 0
    ? Either.right(settings)
    : Either.left(
        new CniError({
          code: CniErrorCodes.invalidPodAnnotation,
          msg: "invalid capture annotation on the pod",
          details: problems.join("; "),
        }),
      )
}

/**
 * The builder's input, as mesh-iptables would get it from the same settings. In CNI mode DNS
 * capture takes all port-53 traffic (the pod's resolv.conf is not readable from the node).
 * IPv6 rules are added for dual stack or when the pod's first address is IPv6.
 */
export const iptablesConfigOf = (settings: CaptureSettings, podAddresses: ReadonlyArray<string>): IptablesConfig => ({
  ...defaultIptablesConfig,
  proxyUid: settings.proxyUid,
  proxyGid: settings.proxyGid,
  inboundInterceptionMode: settings.interceptionMode,
  inboundPortsInclude: settings.includeInboundPorts,
  inboundPortsExclude: settings.excludeInboundPorts,
  outboundPortsInclude: settings.includeOutboundPorts,
  outboundPortsExclude: settings.excludeOutboundPorts,
  outboundIpRangesInclude: settings.includeOutboundIPRanges,
  outboundIpRangesExclude: settings.excludeOutboundIPRanges,
  excludeInterfaces: settings.excludeInterfaces,
  rerouteVirtualInterfaces: settings.rerouteVirtualInterfaces,
  redirectDns: settings.dnsCapture,
  captureAllDns: settings.dnsCapture,
  dropInvalid: settings.dropInvalid,
  enableIpv6: settings.dualStack || (podAddresses.length > 0 && ipFamilyOf(podAddresses[0]!) === 6),
})

/**
 * Applying in the pod's namespace (a path: entered with nsenter). A repeated ADD for the same
 * sandbox replaces drifted rules instead of failing, and leaves rules in place untouched.
 */
export const applyOptionsOf = (config: IptablesConfig, netns: string): ApplyOptions => ({
  config,
  dryRun: false,
  cleanupOnly: false,
  reconcile: true,
  forceApply: false,
  skipRuleApply: false,
  runValidation: false,
  probePort: Ports.iptablesProbe,
  probeTimeout: Duration.seconds(5),
  networkNamespace: netns,
  cniMode: true,
  dryRunFilePath: "",
})
