/**
 * What the CNI installer needs to know (from install-cni's flags and environment), the names of
 * the files it owns, its errors, and the CniInstallStatus service the readiness endpoint reads.
 */
import { Context, Data, type Effect } from "effect"

/** The reference's names with the mesh's: sorted last, so they never become the primary network. */
export const KUBECONFIG_FILENAME = "ZZZ-mesh-cni-kubeconfig"
/** The standalone config's name when `--cni-conf-name` is not set. */
export const STANDALONE_CONF_NAME = "YYY-mesh-cni.conf"
/** The mesh-owned list's name when `--mesh-owned-cni-config-filename` is not set (sorts before most primaries). */
export const MESH_OWNED_DEFAULT_NAME = "02-mesh-cni.conflist"
/** The plugin's executable in the CNI bin directory (the config entry's `type`). */
export const PLUGIN_EXECUTABLE = "mesh-cni"
/** Where the CNI bin directory of the host is mounted in the installer's container (the reference's constant). */
export const DEFAULT_CNI_BIN_DIR = "/host/opt/cni/bin"
/** The reference's readiness port (`/readyz`, `/healthz`). */
export const DEFAULT_READINESS_PORT = 8000

export interface InstallSettings {
  /** `--mounted-cni-net-dir`. */
  readonly netDir: string
  /** `--cni-bin-dir`: where the plugin executable goes. */
  readonly binDir: string
  /** The plugin program the executable runs (the package's bin/mesh-cni.cjs). */
  readonly pluginSource: string
  /** The node binary the executable runs it with (the runtime calls plugins with a bare PATH). */
  readonly nodePath: string
  /** `--cni-conf-name` ("" = pick the primary as the runtime does). */
  readonly confName: string
  /** `--chained-cni-plugin`. */
  readonly chained: boolean
  /** `--mesh-owned-cni-config` / its file name ("" = the default). */
  readonly meshOwned: boolean
  readonly meshOwnedFilename: string
  /** The plugin entry template and where it came from (for messages). */
  readonly template: { readonly text: string; readonly source: string }
  /** `--log-level`. */
  readonly logLevel: string
  readonly nodeName: string
  /** The orchestrator API server as the plugin reaches it. */
  readonly service: { readonly protocol: string; readonly host: string; readonly port: string }
  /** Directory of `token` (and `ca.crt`, the CA by default). */
  readonly serviceAccountDir: string
  /** `--orch-ca-file` ("" = the service account's). */
  readonly caFile: string
  /** `--skip-tls-verify`. */
  readonly skipTlsVerify: boolean
  /** `--orchconfig-mode`. */
  readonly kubeconfigMode: number
  /** `--ambient-enabled`: the plugin entry names the node agent's run directory (`--cni-agent-run-dir`). */
  readonly ambient?: { readonly agentRunDir: string }
}

/** Start-up cannot go on: the message says what to fix. */
export class CniInstallError extends Data.TaggedError("CniInstallError")<{
  /** The reference's install result label (COPY_BINARIES_FAILURE, ...). */
  readonly result: InstallFailure
  readonly message: string
}> {}

export type InstallFailure =
  | "COPY_BINARIES_FAILURE"
  | "READ_SERVICE_ACCOUNT_FAILURE"
  | "CREATE_KUBECONFIG_FAILURE"
  | "CREATE_CNI_CONFIG_FAILURE"

/** The reference's metric names with the mesh prefix. */
export const InstallMetricNames = {
  ready: "mesh_cni_install_ready",
  installs: "mesh_cni_installs_total",
} as const

export interface CniInstallStatusShape {
  /** True while the plugin, its kubeconfig and its config entry are in place. */
  readonly ready: Effect.Effect<boolean>
}

export class CniInstallStatus extends Context.Tag("mesh/CniInstallStatus")<CniInstallStatus, CniInstallStatusShape>() {}

/** The file the plugin's config entry lives in, for each way of installing. */
export const meshOwnedName = (settings: Pick<InstallSettings, "meshOwnedFilename">): string =>
  settings.meshOwnedFilename === "" ? MESH_OWNED_DEFAULT_NAME : settings.meshOwnedFilename

/** The executable written into the CNI bin directory: runs the plugin program with node. */
export const pluginLauncherScript = (nodePath: string, pluginSource: string): string => {
  const quote = (s: string) => `'${s.replaceAll("'", `'"'"'`)}'`
  return `#!/bin/sh\n# The mesh CNI plugin, installed by install-cni.\nexec ${quote(nodePath)} ${quote(pluginSource)} "$@"\n`
}
