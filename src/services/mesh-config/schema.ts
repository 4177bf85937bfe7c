/**
 * The mesh configuration (`--meshConfig`) and mesh networks (`--networksConfig`): the subset of
 * the reference's MeshConfig / MeshNetworks the mesh reads, with its field names. Durations stay
 * in their text form (`45s`); every field is optional on input, defaults come from defaults.ts.
 * Unknown fields are accepted and ignored (reported as warnings), as the reference does.
 */
import { Schema } from "effect"
import {
  checked,
  DurationOrZero,
  Duration as DurationText,
  Enum,
  exportToProblems,
  Int32,
  opt,
  PortNumber,
  type Report,
  StringList,
  StringMap,
  Struct,
} from "../config-model/schemas/common.js"

const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?):(\d{1,5})$/

/** `host:port` with a valid port, as the reference checks proxy addresses. */
export const hostPortProblem = (value: string): string | undefined => {
  const match = HOST_PORT.exec(value)
  if (match === null) return `invalid address "${value}": expected host:port`
  const port = Number(match[3])
  return port >= 1 && port <= 65535 ? undefined : `invalid address "${value}": port ${port} out of range [1, 65535]`
}

const TRUST_DOMAIN = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/

export const trustDomainProblem = (value: string): string | undefined =>
  value === ""
    ? "trust domain must not be empty"
    : value.length > 255 || !TRUST_DOMAIN.test(value)
      ? `invalid trust domain "${value}": letters, digits, '-', '_' and '.' only`
      : undefined

export const ProxyConfig = Schema.Struct({
  configPath: opt(Schema.String),
  binaryPath: opt(Schema.String),
  serviceCluster: opt(Schema.String),
  drainDuration: opt(DurationText),
  parentShutdownDuration: opt(DurationText),
  terminationDrainDuration: opt(DurationOrZero),
  discoveryAddress: opt(Schema.String),
  statNameLength: opt(Int32),
  concurrency: opt(Int32),
  proxyBootstrapTemplatePath: opt(Schema.String),
  interceptionMode: opt(Enum("REDIRECT", "TPROXY", "NONE")),
  tracing: opt(Struct),
  envoyAccessLogService: opt(Struct),
  envoyMetricsService: opt(Struct),
  proxyAdminPort: opt(PortNumber),
  controlPlaneAuthPolicy: opt(Enum("NONE", "MUTUAL_TLS", "INHERIT")),
  customConfigFile: opt(Schema.String),
  statusPort: opt(PortNumber),
  extraStatTags: opt(StringList),
  proxyMetadata: opt(StringMap),
  runtimeValues: opt(StringMap),
  holdApplicationUntilProxyStarts: opt(Schema.Boolean),
  caCertificatesPem: opt(StringList),
  image: opt(Struct),
  privateKeyProvider: opt(Struct),
  proxyStatsMatcher: opt(Struct),
  gatewayTopology: opt(Struct),
  meshId: opt(Schema.String),
  readinessProbe: opt(Struct),
  proxyHeaders: opt(Struct),
}).pipe(
  checked((pc, report) => {
    if (pc.configPath !== undefined && pc.configPath === "") report(["configPath"], "config path must be set")
    if (pc.discoveryAddress !== undefined) {
      const problem = hostPortProblem(pc.discoveryAddress)
      if (problem !== undefined) report(["discoveryAddress"], problem)
    }
    if (pc.statNameLength !== undefined && pc.statNameLength < 0) {
      report(["statNameLength"], "statNameLength must be greater than or equal to 0")
    }
    if (pc.concurrency !== undefined && pc.concurrency < 0) {
      report(["concurrency"], "concurrency must be greater than or equal to 0")
    }
    if (pc.proxyAdminPort !== undefined && pc.statusPort !== undefined && pc.proxyAdminPort === pc.statusPort) {
      report(["statusPort"], `statusPort ${pc.statusPort} conflicts with proxyAdminPort`)
    }
  }),
)
export type ProxyConfig = typeof ProxyConfig.Type

const ExtensionProvider = Schema.Struct({ name: Schema.String }, { key: Schema.String, value: Schema.Unknown })

const exportToField = (field: string) => (list: ReadonlyArray<string> | undefined, report: Report) =>
  exportToProblems(list, (path, message) => report([field, ...path.slice(1)], message))

export const MeshConfig = Schema.Struct({
  proxyListenPort: opt(PortNumber),
  proxyInboundListenPort: opt(PortNumber),
  proxyHttpPort: opt(PortNumber),
  connectTimeout: opt(DurationText),
  protocolDetectionTimeout: opt(DurationOrZero),
  tcpKeepalive: opt(Struct),
  ingressClass: opt(Schema.String),
  ingressService: opt(Schema.String),
  ingressControllerMode: opt(Enum("UNSPECIFIED", "OFF", "DEFAULT", "STRICT")),
  ingressSelector: opt(Schema.String),
  enableTracing: opt(Schema.Boolean),
  accessLogFile: opt(Schema.String),
  accessLogFormat: opt(Schema.String),
  accessLogEncoding: opt(Enum("TEXT", "JSON")),
  enableEnvoyAccessLogService: opt(Schema.Boolean),
  disableEnvoyListenerLog: opt(Schema.Boolean),
  defaultConfig: opt(ProxyConfig),
  outboundTrafficPolicy: opt(Schema.Struct({ mode: opt(Enum("REGISTRY_ONLY", "ALLOW_ANY")) })),
  inboundTrafficPolicy: opt(Schema.Struct({ mode: opt(Enum("PASSTHROUGH", "LOCALHOST")) })),
  enableAutoMtls: opt(Schema.Boolean),
  trustDomain: opt(Schema.String),
  trustDomainAliases: opt(StringList),
  rootNamespace: opt(Schema.String),
  defaultServiceExportTo: opt(StringList),
  defaultVirtualServiceExportTo: opt(StringList),
  defaultDestinationRuleExportTo: opt(StringList),
  dnsRefreshRate: opt(DurationText),
  localityLbSetting: opt(Struct),
  enablePrometheusMerge: opt(Schema.Boolean),
  serviceSettings: opt(Schema.Array(Struct)),
  caCertificates: opt(Schema.Array(Struct)),
  certificates: opt(Schema.Array(Struct)),
  extensionProviders: opt(Schema.Array(ExtensionProvider)),
  defaultProviders: opt(
    Schema.Struct({ tracing: opt(StringList), metrics: opt(StringList), accessLogging: opt(StringList) }),
  ),
  discoverySelectors: opt(Schema.Array(Struct)),
  pathNormalization: opt(Struct),
  h2UpgradePolicy: opt(Enum("DO_NOT_UPGRADE", "UPGRADE")),
  verifyCertificateAtClient: opt(Schema.Boolean),
  meshMTLS: opt(Struct),
  tlsDefaults: opt(Struct),
  outboundClusterStatName: opt(Schema.String),
  inboundClusterStatName: opt(Schema.String),
  serviceScopeConfigs: opt(Schema.Array(Struct)),
}).pipe(
  checked((mc, report) => {
    if (mc.trustDomain !== undefined) {
      const problem = trustDomainProblem(mc.trustDomain)
      if (problem !== undefined) report(["trustDomain"], problem)
    }
    mc.trustDomainAliases?.forEach((alias, i) => {
      const problem = trustDomainProblem(alias)
      if (problem !== undefined) report(["trustDomainAliases", i], problem)
    })
    if (
      mc.rootNamespace !== undefined &&
      mc.rootNamespace !== "" &&
      !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(mc.rootNamespace)
    ) {
      report(["rootNamespace"], `invalid namespace "${mc.rootNamespace}"`)
    }
    exportToField("defaultServiceExportTo")(mc.defaultServiceExportTo, report)
    exportToField("defaultVirtualServiceExportTo")(mc.defaultVirtualServiceExportTo, report)
    exportToField("defaultDestinationRuleExportTo")(mc.defaultDestinationRuleExportTo, report)
    const names = new Set<string>()
    mc.extensionProviders?.forEach((provider, i) => {
      if (provider.name === "") report(["extensionProviders", i, "name"], "empty extension provider name")
      else if (names.has(provider.name)) {
        report(["extensionProviders", i, "name"], `duplicate extension provider name ${provider.name}`)
      }
      names.add(provider.name)
    })
    if (
      mc.proxyListenPort !== undefined &&
      mc.proxyInboundListenPort !== undefined &&
      mc.proxyListenPort === mc.proxyInboundListenPort
    ) {
      report(["proxyInboundListenPort"], "proxyInboundListenPort must differ from proxyListenPort")
    }
  }),
)
/** A mesh configuration as given in a file: every field optional. */
export type MeshConfigInput = typeof MeshConfig.Type

const NetworkEndpoint = Schema.Struct({ fromCidr: opt(Schema.String), fromRegistry: opt(Schema.String) })
const NetworkGateway = Schema.Struct({
  registryServiceName: opt(Schema.String),
  address: opt(Schema.String),
  port: PortNumber,
  locality: opt(Schema.String),
})

export const MeshNetworks = Schema.Struct({
  networks: opt(
    Schema.Record({
      key: Schema.String,
      value: Schema.Struct({
        endpoints: opt(Schema.Array(NetworkEndpoint)),
        gateways: opt(Schema.Array(NetworkGateway)),
      }),
    }),
  ),
}).pipe(
  checked((mn, report) => {
    for (const [name, network] of Object.entries(mn.networks ?? {})) {
      network.endpoints?.forEach((e, i) => {
        const set = [e.fromCidr, e.fromRegistry].filter((v) => v !== undefined && v !== "").length
        if (set !== 1) report(["networks", name, "endpoints", i], "exactly one of fromCidr or fromRegistry must be set")
      })
      network.gateways?.forEach((g, i) => {
        const set = [g.registryServiceName, g.address].filter((v) => v !== undefined && v !== "").length
        if (set !== 1) {
          report(["networks", name, "gateways", i], "exactly one of registryServiceName or address must be set")
        }
      })
    }
  }),
)
export type MeshNetworks = typeof MeshNetworks.Type
