/**
 * `mesh-agent mesh-iptables`: sets up the sidecar's traffic capture (spec part 2 §4.2 flags,
 * §4.4 variables). The work lives in src/layers/iptables and is imported only when the command
 * runs, so `--help` stays light.
 */
import { Command, Options } from "@effect/cli"
import { Config, Effect } from "effect"
import { agentSpecificEnv } from "../../services/config/agent-env.js"
import { type EnvTable, env, envVarConfig } from "../../services/config/env.js"
import type { MeshIptablesEnv, MeshIptablesSettings } from "../../services/iptables/settings.js"
import type { LogSettings } from "../../services/logging/options.js"
import { agentScopes } from "../../services/logging/scopes.js"
import { boolFlag, durationFlag, invalidFlag, textFlag, uint16Flag, withNote } from "../shared/options.js"

/**
 * The variables mesh-iptables reads (spec part 2 §4.4): the agent table's entries where it has
 * them, plus the capture-only ones it does not list.
 */
export const iptablesEnv = {
  MESH_OUTBOUND_OWNER_GROUPS: env.string("*", "Owner groups whose outbound traffic is captured; * = all"),
  MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE: env.string(
    "",
    "Owner groups whose outbound traffic is not captured; only with *",
  ),
  MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: env.string("127.0.0.1/32", "IPv4 loopback CIDR excluded from outbound capture"),
  INBOUND_INTERCEPTION_MODE: env.string("", "Default of --mesh-inbound-interception-mode"),
  INBOUND_TPROXY_MARK: env.string("1337", "Default of --mesh-inbound-tproxy-mark"),
  MESH_META_DNS_CAPTURE: agentSpecificEnv.MESH_META_DNS_CAPTURE,
  IPTABLES_TRACE_LOGGING: agentSpecificEnv.IPTABLES_TRACE_LOGGING,
  DRY_RUN_FILE_PATH: agentSpecificEnv.DRY_RUN_FILE_PATH,
  INSTANCE_IP: agentSpecificEnv.INSTANCE_IP,
  PROXY_USER: agentSpecificEnv.PROXY_USER,
} as const satisfies EnvTable

/** A text flag whose default comes from an environment variable of the table. */
const envTextFlag = (name: string, variable: "INBOUND_INTERCEPTION_MODE" | "INBOUND_TPROXY_MARK") =>
  Options.text(name).pipe(
    Options.optional,
    Options.mapEffect((given) =>
      given._tag === "Some"
        ? Effect.succeed(given.value)
        : Effect.mapError(envVarConfig(variable, iptablesEnv[variable]), (error) => invalidFlag(String(error))),
    ),
    // Help shows the default in force (the variable's, e.g. 1337) rather than "none".
    withNote({ default: iptablesEnv[variable].default, env: variable }),
  )

const describe = Options.withDescription

export const iptablesFlags = {
  captureAllDns: boolFlag("capture-all-dns").pipe(
    describe("Capture all DNS traffic on port 53, not only to the DNS server IP; effective only with --redirect-dns"),
  ),
  cleanupOnly: boolFlag("cleanup-only").pipe(describe("Forced cleanup without creating chains or rules")),
  cniMode: boolFlag("cni-mode").pipe(describe("Run as CNI plugin")),
  dropInvalid: boolFlag("drop-invalid").pipe(describe("Drop invalid packets")),
  dryRun: boolFlag("dry-run").pipe(Options.withAlias("n"), describe("Call no external dependencies")),
  dualStack: boolFlag("dual-stack").pipe(describe("Apply IPv4 and IPv6 redirects")),
  envoyPort: textFlag("envoy-port", "15001").pipe(
    Options.withAlias("p"),
    describe("Port to which all TCP traffic from the pod is redirected"),
  ),
  forceApply: boolFlag("force-apply").pipe(describe("Apply iptables changes even if they seem to be in place")),
  inboundCapturePort: textFlag("inbound-capture-port", "15006").pipe(
    Options.withAlias("z"),
    describe("Port to which all inbound TCP traffic to the pod is redirected"),
  ),
  inboundTunnelPort: textFlag("inbound-tunnel-port", "15008").pipe(
    Options.withAlias("e"),
    describe("Tunnel port for inbound TCP traffic"),
  ),
  iptablesProbePort: uint16Flag("iptables-probe-port", 15002).pipe(describe("Port the failure detection listens on")),
  iptablesTraceLogging: boolFlag("iptables-trace-logging", false, "IPTABLES_TRACE_LOGGING").pipe(
    describe("Insert a LOG rule before each rule to trace the packets that hit it"),
  ),
  meshExcludeInterfaces: textFlag("mesh-exclude-interfaces").pipe(
    Options.withAlias("c"),
    describe("Comma separated list of NICs whose traffic is never captured"),
  ),
  meshInboundInterceptionMode: envTextFlag("mesh-inbound-interception-mode", "INBOUND_INTERCEPTION_MODE").pipe(
    Options.mapEffect((mode) =>
      mode === "" || mode === "REDIRECT" || mode === "TPROXY"
        ? Effect.succeed(mode)
        : Effect.fail(invalidFlag(`--mesh-inbound-interception-mode: "${mode}" is neither REDIRECT nor TPROXY`)),
    ),
    Options.withAlias("m"),
    describe("The mode used to redirect inbound connections: REDIRECT or TPROXY"),
  ),
  meshInboundPorts: textFlag("mesh-inbound-ports").pipe(
    Options.withAlias("b"),
    describe("Comma separated list of inbound ports redirected to the proxy; * redirects all; empty disables"),
  ),
  meshInboundTproxyMark: envTextFlag("mesh-inbound-tproxy-mark", "INBOUND_TPROXY_MARK").pipe(
    Options.withAlias("t"),
    describe("The mark of packets redirected by TPROXY"),
  ),
  meshInboundTproxyRouteTable: textFlag("mesh-inbound-tproxy-route-table", "133").pipe(
    Options.withAlias("r"),
    describe("The routing table of TPROXY-marked packets"),
  ),
  meshLocalExcludePorts: textFlag("mesh-local-exclude-ports").pipe(
    Options.withAlias("d"),
    describe("Comma separated list of inbound ports excluded from redirection; only with * inbound ports"),
  ),
  meshLocalOutboundPortsExclude: textFlag("mesh-local-outbound-ports-exclude").pipe(
    Options.withAlias("o"),
    describe("Comma separated list of outbound ports excluded from redirection"),
  ),
  meshOutboundPorts: textFlag("mesh-outbound-ports").pipe(
    Options.withAlias("q"),
    describe("Comma separated list of outbound ports explicitly redirected to the proxy"),
  ),
  meshServiceCidr: textFlag("mesh-service-cidr").pipe(
    Options.withAlias("i"),
    describe("Comma separated list of IP ranges in CIDR form redirected to the proxy; * redirects all; empty disables"),
  ),
  meshServiceExcludeCidr: textFlag("mesh-service-exclude-cidr").pipe(
    Options.withAlias("x"),
    describe("Comma separated list of IP ranges in CIDR form excluded from redirection; only with * service CIDRs"),
  ),
  orchVirtInterfaces: textFlag("orch-virt-interfaces").pipe(
    Options.withAlias("k"),
    describe("Comma separated list of virtual interfaces whose inbound traffic is treated as outbound"),
  ),
  networkNamespace: textFlag("network-namespace").pipe(describe("The network namespace to apply the rules in")),
  probeTimeout: durationFlag("probe-timeout", "5s").pipe(describe("Failure detection timeout")),
  proxyGid: textFlag("proxy-gid").pipe(
    Options.withAlias("g"),
    describe("Specify the GID of the user for which the redirection is not applied (same as the UID if unset)"),
  ),
  proxyUid: textFlag("proxy-uid").pipe(
    Options.withAlias("u"),
    describe("Specify the UID of the user for which the redirection is not applied (usually the proxy container's)"),
  ),
  reconcile: boolFlag("reconcile").pipe(describe("Reconcile drifted pre-existing iptables rules instead of failing")),
  redirectDns: boolFlag("redirect-dns", false, "MESH_META_DNS_CAPTURE").pipe(
    describe("Enable capture of DNS traffic by the agent"),
  ),
  runValidation: boolFlag("run-validation").pipe(describe("Validate the iptables rules")),
  skipRuleApply: boolFlag("skip-rule-apply").pipe(describe("Skip applying the iptables rules")),
}

/** The environment-only inputs, read through the typed env table. */
export const iptablesEnvConfig: Config.Config<MeshIptablesEnv & { readonly proxyUser: string }> = Config.all({
  ownerGroupsInclude: envVarConfig("MESH_OUTBOUND_OWNER_GROUPS", iptablesEnv.MESH_OUTBOUND_OWNER_GROUPS),
  ownerGroupsExclude: envVarConfig(
    "MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE",
    iptablesEnv.MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE,
  ),
  hostIpv4LoopbackCidr: envVarConfig("MESH_OUTBOUND_IPV4_LOOPBACK_CIDR", iptablesEnv.MESH_OUTBOUND_IPV4_LOOPBACK_CIDR),
  dryRunFilePath: envVarConfig("DRY_RUN_FILE_PATH", iptablesEnv.DRY_RUN_FILE_PATH),
  instanceIp: envVarConfig("INSTANCE_IP", iptablesEnv.INSTANCE_IP),
  proxyUser: envVarConfig("PROXY_USER", iptablesEnv.PROXY_USER),
})

export const iptablesCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("mesh-iptables", { ...iptablesFlags, logging }, ({ logging: settings, ...flags }) =>
    Effect.gen(function* () {
      const { proxyUser, ...envValues } = yield* iptablesEnvConfig
      const [{ runMeshIptables }, { layer: loggingLayer }, { withScope }] = yield* Effect.promise(() =>
        Promise.all([
          import("../../layers/iptables/run.js"),
          import("../../layers/logging.js"),
          import("../../services/logging/logging.js"),
        ]),
      )
      const meshSettings: MeshIptablesSettings = flags
      yield* runMeshIptables(meshSettings, envValues, proxyUser).pipe(
        withScope("iptables"),
        Effect.provide(loggingLayer(settings, agentScopes)),
      )
    }),
  ).pipe(Command.withDescription("Sets up port forwarding for the sidecar"))
