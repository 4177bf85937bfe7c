/**
 * The flags of `install-cni` (spec part 2 §4.3). Each falls back to its environment variable
 * (§4.4), then to the default; booleans take their default from the environment table.
 */
import { Options } from "@effect/cli"
import { DEFAULT_CNI_BIN_DIR } from "../../services/cni/install-settings.js"
import { Annotations, Labels } from "../../services/constants.js"
import { boolFlag, type FlagValues, intFlag, textFlag, uint16Flag } from "../shared/options.js"

export const cniFlags = {
  ambientEnabled: boolFlag("ambient-enabled", false, "AMBIENT_ENABLED").pipe(
    Options.withDescription("Whether ambient controller is enabled"),
  ),
  chainedCniPlugin: boolFlag("chained-cni-plugin", true, "CHAINED_CNI_PLUGIN").pipe(
    Options.withDescription("Whether to install CNI plugin as a chained or standalone"),
  ),
  cniAgentRunDir: textFlag("cni-agent-run-dir", "/var/run/mesh-cni", "CNI_AGENT_RUN_DIR").pipe(
    Options.withDescription("Location of the node agent writable path on the node (used for sockets, etc)"),
  ),
  cniBinDir: textFlag("cni-bin-dir", DEFAULT_CNI_BIN_DIR, "CNI_BIN_DIR").pipe(
    Options.withDescription(
      "Directory on the container where the CNI plugin binary is installed (the host's CNI bin dir)",
    ),
  ),
  cniConfName: textFlag("cni-conf-name", "", "CNI_CONF_NAME").pipe(
    Options.withDescription("Name of the CNI configuration file"),
  ),
  cniNetworkConfig: textFlag("cni-network-config", "", "CNI_NETWORK_CONFIG").pipe(
    Options.withDescription("CNI configuration template as a string"),
  ),
  cniNetworkConfigFile: textFlag("cni-network-config-file", "", "CNI_NETWORK_CONFIG_FILE").pipe(
    Options.withDescription("CNI configuration template as a file"),
  ),
  meshOwnedCniConfig: boolFlag("mesh-owned-cni-config", false, "MESH_OWNED_CNI_CONFIG").pipe(
    Options.withDescription("Whether an mesh owned CNI config is enabled"),
  ),
  meshOwnedCniConfigFilename: textFlag("mesh-owned-cni-config-filename", "", "MESH_OWNED_CNI_CONFIG_FILENAME").pipe(
    Options.withDescription("The filename of the mesh owned CNI config"),
  ),
  orchCaFile: textFlag("orch-ca-file", "", "ORCH_CA_FILE").pipe(
    Options.withDescription("CA file for the generated orchestrator config. Default to the pod's CA file"),
  ),
  orchconfigMode: intFlag("orchconfig-mode", 384, { min: 0, max: 0o7777, env: "ORCHCONFIG_MODE" }).pipe(
    Options.withDescription("File mode of the orchestrator config file"),
  ),
  logLevel: textFlag("log-level", "warn", "LOG_LEVEL").pipe(
    Options.withDescription("Fallback value for log level in CNI config file, if not specified in helm template"),
  ),
  monitoringPort: uint16Flag("monitoring-port", 15014, "MONITORING_PORT").pipe(
    Options.withDescription("HTTP port to serve prometheus metrics"),
  ),
  mountedCniNetDir: textFlag("mounted-cni-net-dir", "/host/etc/cni/net.d", "MOUNTED_CNI_NET_DIR").pipe(
    Options.withDescription("Directory on the container where CNI networks are installed"),
  ),
  repairBrokenPodLabelKey: textFlag(
    "repair-broken-pod-label-key",
    Labels.cniUninitialized,
    "REPAIR_BROKEN_POD_LABEL_KEY",
  ).pipe(
    Options.withDescription("The key portion of the label which will be set by the race repair if label pods is true"),
  ),
  repairBrokenPodLabelValue: textFlag("repair-broken-pod-label-value", "true", "REPAIR_BROKEN_POD_LABEL_VALUE").pipe(
    Options.withDescription(
      "The value portion of the label which will be set by the race repair if label pods is true",
    ),
  ),
  repairDeletePods: boolFlag("repair-delete-pods", false, "REPAIR_DELETE_PODS").pipe(
    Options.withDescription("Controller will delete pods when detecting pod broken by race condition"),
  ),
  repairEnabled: boolFlag("repair-enabled", true, "REPAIR_ENABLED").pipe(
    Options.withDescription("Whether to enable race condition repair or not"),
  ),
  repairFieldSelectors: textFlag("repair-field-selectors", "", "REPAIR_FIELD_SELECTORS").pipe(
    Options.withDescription("The field selectors to filter pods by, in the form of 'label=value'"),
  ),
  repairInitContainerExitCode: intFlag("repair-init-container-exit-code", 126, {
    env: "REPAIR_INIT_CONTAINER_EXIT_CODE",
  }).pipe(Options.withDescription("Expected exit code for broken init container")),
  repairInitContainerName: textFlag("repair-init-container-name", "mesh-validation", "REPAIR_INIT_CONTAINER_NAME").pipe(
    Options.withDescription(
      "The name of the mesh init container (will crash-loop if CNI is not configured for the pod)",
    ),
  ),
  repairInitContainerTerminationMessage: textFlag(
    "repair-init-container-termination-message",
    "",
    "REPAIR_INIT_CONTAINER_TERMINATION_MESSAGE",
  ).pipe(
    Options.withDescription(
      "The expected termination message for the init container when crash-looping because of CNI misconfiguration",
    ),
  ),
  repairLabelPods: boolFlag("repair-label-pods", false, "REPAIR_LABEL_PODS").pipe(
    Options.withDescription("Controller will label pods when detecting pod broken by race condition"),
  ),
  repairLabelSelectors: textFlag("repair-label-selectors", "", "REPAIR_LABEL_SELECTORS").pipe(
    Options.withDescription("The label selectors to filter pods by, in the form of 'label=value'"),
  ),
  repairNodeName: textFlag("repair-node-name", "", "REPAIR_NODE_NAME").pipe(
    Options.withDescription("The name of the managed node (will manage all nodes if unset)"),
  ),
  repairSidecarAnnotation: textFlag(
    "repair-sidecar-annotation",
    Annotations.sidecarStatus,
    "REPAIR_SIDECAR_ANNOTATION",
  ).pipe(
    Options.withDescription(
      "An annotation key that indicates this pod contains a mesh sidecar. All pods without this annotation will be ignored. The value of the annotation is ignored.",
    ),
  ),
  skipTlsVerify: boolFlag("skip-tls-verify", false, "SKIP_TLS_VERIFY").pipe(
    Options.withDescription("Whether to use insecure TLS in the orchestrator config file"),
  ),
  nodeProxyUdsAddress: textFlag(
    "node-proxy-uds-address",
    "/var/run/node-proxy/node-proxy.sock",
    "NODE_PROXY_UDS_ADDRESS",
  ).pipe(Options.withDescription("The socket address the node proxy will connect to to receive workload information")),
  ctrlzAddress: textFlag("ctrlz_address", "localhost").pipe(
    Options.withDescription(
      "The IP Address to listen on for the introspection facility. Use '*' to indicate all addresses.",
    ),
  ),
  ctrlzPort: uint16Flag("ctrlz_port", 9876).pipe(
    Options.withDescription("The IP port to use for the introspection facility"),
  ),
}

export type CniArgs = FlagValues<typeof cniFlags>
