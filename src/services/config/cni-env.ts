/**
 * Environment variables of `install-cni` (spec 001 §4.4 "install-cni variables"): the
 * control-plane tuning group shared with `mesh-discovery`, then the installer's own variables
 * (a same-name entry here, such as `COMPLIANCE_POLICY`, replaces the tuning group's).
 */
import { type EnvTable, env } from "./env.js"
import { tuningEnv } from "./tuning-env.js"

/** install-cni's own variables. */
export const cniSpecificEnv = {
  AMBIENT_DNS_CAPTURE: env.bool(
    true,
    "Ambient mode: redirect pods' DNS (UDP and TCP port 53) to the node proxy's DNS port 15053; a pod's ambient.mesh.io/dns-capture annotation overrides it",
  ),
  AMBIENT_ENABLED: env.bool(false, "Ambient controller"),
  AMBIENT_IPV6: env.bool(true, "Ambient mode: in-pod redirection rules for IPv6 too"),
  AMBIENT_USE_SCOPED_XTABLES_LOCKING: env.bool(true, "Use scoped xtables locking in ambient mode"),
  CHAINED_CNI_PLUGIN: env.bool(true, "Chained or standalone install"),
  CNI_AGENT_RUN_DIR: env.string("/var/run/mesh-cni", "Node agent writable path"),
  CNI_CONF_NAME: env.string("", "CNI config file name"),
  CNI_NETWORK_CONFIG: env.string("", "Template string"),
  CNI_NETWORK_CONFIG_FILE: env.string("", "Template file"),
  COMPLIANCE_POLICY: env.string(
    "",
    "Empty: no extra restrictions. fips-140-2: forces a TLS version and cipher subset over all runtime components. pqc: post-quantum key exchange X25519MLKEM768, TLS 1.3 and two AES-GCM suites; experimental",
  ),
  ENABLE_CLUSTER_TRUST_BUNDLE_API: env.bool(
    false,
    "Store the root certificate in the cluster-trust-bundle API instead of ConfigMaps",
  ),
  ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT: env.bool(true, "Bind gateway-API resources to existing gateway deployments"),
  ENABLE_LAYERED_WAYPOINT_AUTHORIZATION_POLICIES: env.bool(
    false,
    "Selector-based authorization enforced as L4 policies before the waypoint",
  ),
  ENABLE_LAZY_SIDECAR_EVALUATION: env.bool(true, "Compute sidecar resources only when used"),
  ENABLE_PROXY_FIND_POD_BY_IP: env.bool(false, "Find pods for proxies by IP if lookup by name fails"),
  PROXY_STATUS_PORT_ENABLE_PROXY_PROTOCOL: env.bool(false, "Accept proxy-protocol requests on the status port"),
  HOST_PROBE_SNAT_IP: env.string("169.254.7.127", "Source address of host probes (IPv4)"),
  HOST_PROBE_SNAT_IPV6: env.string("fd16:9254:7127:1337:ffff:ffff:ffff:ffff", "Source address of host probes (IPv6)"),
  MESH_OWNED_CNI_CONFIG: env.bool(false, "Mesh-owned CNI config"),
  MESH_OWNED_CNI_CONFIG_FILENAME: env.string("", "Its file name"),
  ORCHCONFIG_MODE: env.int(384, "File mode of generated config"),
  ORCH_CA_FILE: env.string("", "CA file"),
  LOG_LEVEL: env.string("warn", "Fallback log level"),
  MAX_CONNECTIONS_PER_SOCKET_EVENT_LOOP: env.int(1, "Connections accepted per socket event; 0 = unlimited"),
  MONITORING_PORT: env.int(15014, "Metrics port"),
  MOUNTED_CNI_NET_DIR: env.string("/host/etc/cni/net.d", "CNI directory"),
  NODE_NAME: env.string("", "Name of the node"),
  PILOT_CA_CERT_CONFIGMAP: env.string("mesh-ca-root-cert", "ConfigMap holding the root CA certificate"),
  PILOT_ENABLE_ABSOLUTE_FQDN_VHOST_DOMAIN: env.bool(
    true,
    "False omits the trailing-dot FQDN from virtual-host domains",
  ),
  PILOT_ENABLE_CA_CRL: env.bool(true, "False stops watching ca-crl.pem in /etc/cacerts and distributing CRL data"),
  PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS: env.bool(
    true,
    "False stops copying Gateway attributes onto related Deployments",
  ),
  PILOT_SPAWN_UPSTREAM_SPAN_FOR_GATEWAY: env.bool(false, "Separate tracing span per upstream request at gateways"),
  REPAIR_BROKEN_POD_LABEL_KEY: env.string("cni.mesh.io/uninitialized", "Label key of pods broken by the CNI race"),
  REPAIR_BROKEN_POD_LABEL_VALUE: env.string("true", "Label value of pods broken by the CNI race"),
  REPAIR_DELETE_PODS: env.bool(false, "Delete broken pods instead of labelling them"),
  REPAIR_ENABLED: env.bool(true, "Enable race repair"),
  // Beyond the spec's printed table: where the installer finds its plugin, its credentials and
  // the API server, and its readiness port.
  CNI_READINESS_PORT: env.int(8000, "Beyond spec: port of the readiness endpoint (/readyz), 1-65535"),
  CNI_PLUGIN_SOURCE: env.string(
    "",
    "Beyond spec: the plugin script copied into the CNI bin directory; empty = the mesh-cni.cjs beside install-cni",
  ),
  CNI_SERVICE_ACCOUNT_DIR: env.string(
    "",
    "Beyond spec: directory of the service-account token and CA the plugin's kubeconfig uses; empty = the first mounted one",
  ),
  ORCHESTRATOR_SERVICE_HOST: env.string("", "Set automatically in-cluster: the API server's address"),
  ORCHESTRATOR_SERVICE_PORT: env.string(
    "",
    "Beyond spec: set automatically in-cluster: the API server's port (443 when unset)",
  ),
  ORCHESTRATOR_SERVICE_PROTOCOL: env.string("", "Beyond spec: the API server's scheme (https when unset)"),
  KUBERNETES_SERVICE_HOST: env.string("", "Beyond spec: used when ORCHESTRATOR_SERVICE_HOST is unset"),
  KUBERNETES_SERVICE_PORT: env.string("", "Beyond spec: used when ORCHESTRATOR_SERVICE_PORT is unset"),
  KUBERNETES_SERVICE_PROTOCOL: env.string("", "Beyond spec: used when ORCHESTRATOR_SERVICE_PROTOCOL is unset"),
} as const satisfies EnvTable

export const cniEnv = { ...tuningEnv, ...cniSpecificEnv } as const satisfies EnvTable
