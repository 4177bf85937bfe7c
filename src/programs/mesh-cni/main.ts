/**
 * Entry point of `mesh-cni`, the mesh's CNI plugin. The container runtime runs it per the CNI
 * specification: the command and arguments in CNI_* variables, the network configuration on
 * stdin, the result on stdout. Arguments are not part of that protocol; `--help` and
 * `version` are answered here without loading the plugin.
 */
import { buildInfo } from "../../services/build-info.js"
import { SUPPORTED_VERSIONS } from "../../services/cni/plugin-protocol.js"

const USAGE = `mesh-cni: the mesh's CNI plugin (chained after the pod network's plugins).

The container runtime invokes it; it is not meant to be run by hand.
  CNI_COMMAND      ADD, DEL, CHECK or VERSION
  CNI_CONTAINERID  the sandbox container id
  CNI_NETNS        path of the pod's network namespace (not needed for DEL)
  CNI_IFNAME       the interface name
  CNI_PATH         where the CNI plugins are
  CNI_ARGS         K8S_POD_NAME=...;K8S_POD_NAMESPACE=...
  stdin            the plugin's network configuration (type "mesh-cni")

ADD programs the pod's traffic capture (the rules of mesh-agent mesh-iptables) when the pod
carries an injected sidecar, and passes the previous plugin's result on. With
"ambient_enabled": true in its config, a pod enrolled in ambient mode (mesh.io/dataplane-mode)
is handed to install-cni's node agent instead (socket pluginevent.sock in "cni_agent_run_dir"),
and DEL tells the agent; otherwise DEL does nothing.
Supported CNI versions: ${SUPPORTED_VERSIONS.join(", ")}.

Usage:
  mesh-cni [--help | version]
`

const args = process.argv.slice(2)
if (args.includes("--help") || args.includes("-h") || args[0] === "help") {
  process.stdout.write(USAGE)
} else if (args[0] === "version" || args.includes("--version")) {
  process.stdout.write(`${buildInfo.version}\n`)
} else {
  // The plugin itself (and its dependencies) load only for a CNI call.
  import("../../layers/cni/plugin-run.js").then(({ runPlugin }) => runPlugin())
}
