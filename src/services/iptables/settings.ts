/**
 * What `mesh-iptables` receives (its flags and environment variables) and how that becomes the
 * builder's IptablesConfig and the service's ApplyOptions. Machine facts (resolv.conf servers,
 * the proxy user's id) are passed in already read.
 */
import type { Duration } from "effect"
import { defaultIptablesConfig, type InterceptionMode, type IptablesConfig, ipFamilyOf } from "./config.js"
import type { ApplyOptions } from "./service.js"

export interface MeshIptablesSettings {
  readonly captureAllDns: boolean
  readonly cleanupOnly: boolean
  readonly cniMode: boolean
  readonly dropInvalid: boolean
  readonly dryRun: boolean
  readonly dualStack: boolean
  readonly envoyPort: string
  readonly forceApply: boolean
  readonly inboundCapturePort: string
  readonly inboundTunnelPort: string
  readonly iptablesProbePort: number
  readonly iptablesTraceLogging: boolean
  readonly meshExcludeInterfaces: string
  readonly meshInboundInterceptionMode: string
  readonly meshInboundPorts: string
  readonly meshInboundTproxyMark: string
  readonly meshInboundTproxyRouteTable: string
  readonly meshLocalExcludePorts: string
  readonly meshLocalOutboundPortsExclude: string
  readonly meshOutboundPorts: string
  readonly meshServiceCidr: string
  readonly meshServiceExcludeCidr: string
  readonly orchVirtInterfaces: string
  readonly networkNamespace: string
  readonly probeTimeout: Duration.Duration
  readonly proxyGid: string
  readonly proxyUid: string
  readonly reconcile: boolean
  readonly redirectDns: boolean
  readonly runValidation: boolean
  readonly skipRuleApply: boolean
}

/** The environment-only inputs (spec part 2 §4.4). */
export interface MeshIptablesEnv {
  readonly ownerGroupsInclude: string
  readonly ownerGroupsExclude: string
  readonly hostIpv4LoopbackCidr: string
  readonly dryRunFilePath: string
  readonly instanceIp: string
}

export interface MachineFacts {
  readonly dnsServersV4: ReadonlyArray<string>
  readonly dnsServersV6: ReadonlyArray<string>
  /** The proxy user's uid, used when --proxy-uid is empty. */
  readonly defaultProxyUid: string
}

export const interceptionModeOf = (text: string): InterceptionMode | undefined =>
  text === "" || text === "REDIRECT" ? "REDIRECT" : text === "TPROXY" ? "TPROXY" : undefined

/** IPv6 rules apply when the pod address is IPv6, or with --dual-stack. */
export const ipv6Enabled = (
  settings: Pick<MeshIptablesSettings, "dualStack">,
  env: Pick<MeshIptablesEnv, "instanceIp">,
) => settings.dualStack || ipFamilyOf(env.instanceIp.trim()) === 6

export const toIptablesConfig = (
  settings: MeshIptablesSettings,
  env: MeshIptablesEnv,
  facts: MachineFacts,
): IptablesConfig => {
  const proxyUid = settings.proxyUid !== "" ? settings.proxyUid : facts.defaultProxyUid
  return {
    ...defaultIptablesConfig,
    proxyPort: settings.envoyPort,
    inboundCapturePort: settings.inboundCapturePort,
    inboundTunnelPort: settings.inboundTunnelPort,
    proxyUid,
    // The proxy's group defaults to its user id, as in the reference.
    proxyGid: settings.proxyGid !== "" ? settings.proxyGid : proxyUid,
    inboundInterceptionMode: interceptionModeOf(settings.meshInboundInterceptionMode) ?? "REDIRECT",
    inboundTproxyMark: settings.meshInboundTproxyMark,
    inboundTproxyRouteTable: settings.meshInboundTproxyRouteTable,
    inboundPortsInclude: settings.meshInboundPorts,
    inboundPortsExclude: settings.meshLocalExcludePorts,
    ownerGroupsInclude: env.ownerGroupsInclude,
    ownerGroupsExclude: env.ownerGroupsExclude,
    outboundPortsInclude: settings.meshOutboundPorts,
    outboundPortsExclude: settings.meshLocalOutboundPortsExclude,
    outboundIpRangesInclude: settings.meshServiceCidr,
    outboundIpRangesExclude: settings.meshServiceExcludeCidr,
    rerouteVirtualInterfaces: settings.orchVirtInterfaces,
    excludeInterfaces: settings.meshExcludeInterfaces,
    redirectDns: settings.redirectDns,
    captureAllDns: settings.captureAllDns,
    dropInvalid: settings.dropInvalid,
    dnsServersV4: settings.redirectDns && !settings.captureAllDns ? facts.dnsServersV4 : [],
    dnsServersV6: settings.redirectDns && !settings.captureAllDns ? facts.dnsServersV6 : [],
    enableIpv6: ipv6Enabled(settings, env),
    traceLogging: settings.iptablesTraceLogging,
    hostIpv4LoopbackCidr: env.hostIpv4LoopbackCidr,
  }
}

export const toApplyOptions = (
  settings: MeshIptablesSettings,
  env: MeshIptablesEnv,
  facts: MachineFacts,
): ApplyOptions => ({
  config: toIptablesConfig(settings, env, facts),
  dryRun: settings.dryRun,
  cleanupOnly: settings.cleanupOnly,
  reconcile: settings.reconcile,
  forceApply: settings.forceApply,
  skipRuleApply: settings.skipRuleApply,
  runValidation: settings.runValidation,
  probePort: settings.iptablesProbePort,
  probeTimeout: settings.probeTimeout,
  networkNamespace: settings.networkNamespace,
  cniMode: settings.cniMode,
  dryRunFilePath: env.dryRunFilePath,
})
