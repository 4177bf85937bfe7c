/**
 * Environment variables of `mesh-agent` (spec 001 §4.4): the control-plane tuning group shared
 * with `mesh-discovery`, then the agent-specific variables (a same-name entry here, such as
 * `XDS_AUTH`, replaces the tuning group's).
 */
import { type EnvTable, env } from "./env.js"
import { tuningEnv } from "./tuning-env.js"

/** Agent-specific variables (spec 001 §4.4 "Agent-specific variables"). */
export const agentSpecificEnv = {
  CA_ADDR: env.string("", "CA address; defaults to the discovery address"),
  // The spec prints "built-in CA provider": the name of the mesh's own CA.
  CA_PROVIDER: env.string("MeshCA", "Authentication provider name"),
  CA_ROOT_CA: env.string("", "Root CA expected on the CA connection"),
  CREDENTIAL_FETCHER_TYPE: env.string("JWT", "Credential fetcher type; a cloud-VM type is also supported"),
  // The spec prints "cloud-VM provider": the reference's cloud-VM identity provider name.
  CREDENTIAL_IDENTITY_PROVIDER: env.string(
    "GoogleComputeEngine",
    "Identity provider for credentials (no effect here: there is no cloud-VM credential fetcher)",
  ),
  DISABLE_PROXY: env.bool(false, "Disables all proxy-agent features"),
  DNS_FORWARD_PARALLEL: env.bool(false, "Parallel queries to all upstream nameservers"),
  DNS_PROXY_ADDR: env.string("localhost:15053", "DNS proxy address"),
  // Bounds of the DNS proxy (issue 34 finding 3): what one client can make the agent hold.
  DNS_PROXY_MAX_INFLIGHT: env.int(
    1024,
    "DNS queries forwarded upstream at once, all clients together; past it a query is answered REFUSED",
  ),
  DNS_PROXY_MAX_INFLIGHT_PER_CLIENT: env.int(
    64,
    "DNS queries forwarded upstream at once for one UDP source (address and port) or one TCP connection; past it a UDP query is dropped and a TCP connection is not read until one ends",
  ),
  DNS_PROXY_MAX_TCP_CONNECTIONS: env.int(256, "Open TCP connections to the DNS proxy; more are closed at once"),
  DNS_PROXY_RESOLV_CONF: env.string(
    "/etc/resolv.conf",
    "resolv.conf the DNS proxy reads its upstream nameservers (port 53) and search domains from",
  ),
  DNS_PROXY_TCP_MAX_UNREAD_BYTES: env.int(
    65536,
    "Bytes of DNS answers a TCP client has not read before the proxy stops reading its queries (64 KiB)",
  ),
  DRY_RUN_FILE_PATH: env.string("", "Dry-run stub writes stdin input to this file"),
  ECC_CURVE: env.string("P256", "Curve when algorithm is ECDSA"),
  ECC_SIGNATURE_ALGORITHM: env.string("", "ECC signature algorithm for generated keys"),
  PROXY_METRICS_PORT: env.int(15090, "Metrics redirection port"),
  PROXY_SKIP_DEPRECATED_LOGS: env.bool(
    true,
    "Skip deprecated-log messages (no effect here: the proxy's log is passed through as is)",
  ),
  PROXY_STATUS_PORT: env.int(15021, "Health status port"),
  PROXY_USER: env.string("mesh-proxy", "Proxy user name"),
  EXIT_ON_ZERO_ACTIVE_CONNECTIONS: env.bool(false, "See part 1 rule 1"),
  FILE_DEBOUNCE_DURATION: env.duration("100ms", "Delay of file reads after an update is detected"),
  FILE_MOUNTED_CERTS: env.bool(false, "Certificates are mounted as files"),
  GRPC_XDS_BOOTSTRAP: env.string(
    "etc/mesh/proxy/grpc-bootstrap.json",
    "Bootstrap file path for gRPC; agent generates one when set",
  ),
  INSTANCE_IP: env.string("", "IP address of the instance"),
  IPTABLES_TRACE_LOGGING: env.bool(false, "Log all iptables actions; needs NET_ADMIN; debugging only"),
  MESHD_SAN: env.string("", "Server name used to validate the control-plane certificate"),
  MESH_BOOTSTRAP: env.string(
    "",
    "Proxy bootstrap setting (no effect here: use --templateFile or MESH_BOOTSTRAP_OVERRIDE)",
  ),
  MESH_BOOTSTRAP_OVERRIDE: env.string("", "Proxy bootstrap override"),
  MESH_CPU_LIMIT: env.int(0, "CPU limit of the process, rounded up"),
  MESH_PROXY_ENABLE_CORE_DUMP: env.bool(
    false,
    "Allow the proxy to write core dumps (no effect here: the injector does not read it)",
  ),
  MESH_ORCH_APP_PROBERS: env.string("", "Application probers rewritten by the orchestrator injector"),
  MESH_META_CERT_SIGNER: env.string("", "Cert signer for workload cert"),
  MESH_META_CLUSTER_ID: env.string("", "Cluster ID in the proxy metadata"),
  MESH_META_DNS_CAPTURE: env.bool(false, "See part 1 rule 4"),
  MESH_META_ENABLE_DNS_SERVER: env.bool(false, "See part 1 rule 4"),
  JWT_POLICY: env.string("third-party-jwt", "JWT validation policy"),
  MINIMUM_DRAIN_DURATION: env.duration("5s", "Minimum wait before checking connections while draining"),
  OUTPUT_CERTS: env.string("", "Output directory for key and certificate"),
  PEER_METADATA_DISCOVERY: env.bool(
    false,
    "Peer metadata discovery extension (no effect here: the bootstrap has no such extension)",
  ),
  TRUST_DOMAIN: env.string("cluster.local", "Trust domain of SPIFFE certificates"),
  // The agent's SDS serving file-mounted certificates (`file-cert:`/`file-root:` names, issue 44):
  // the files a proxy may make the agent read and hold. The reference bounds neither; certificates
  // are a few KiB and a system CA bundle about 200 KiB.
  MESH_SDS_FILE_MAX_BYTES: env.int(
    1048576,
    "Largest certificate, key or CA bundle file the agent's SDS reads for a file-cert:/file-root: secret, in bytes (1 MiB); a larger one is not served",
  ),
  MESH_SDS_MAX_FILES: env.int(
    256,
    "Distinct files the agent's SDS reads and watches for the file-cert:/file-root: secrets its proxy requests; a secret that would need more is not served",
  ),
  MESH_SDS_FILE_POLL_INTERVAL: env.duration(
    "5s",
    "How often the agent's SDS re-checks the files of requested file-cert:/file-root: secrets besides watching them (file watches miss some changes); files that could not be served are read again once they change",
  ),
  // The reference's ISTIO_WASM_MAX_BINARY_SIZE_BYTES is 256 MiB; modules are a few MiB, and a
  // download is streamed to disk, so the cap bounds disk and time rather than memory.
  MESH_WASM_MAX_BINARY_SIZE_BYTES: env.int(
    67108864,
    "Largest Wasm module download, OCI layer or unpacked module, in bytes (64 MiB); a larger one fails the fetch",
  ),
  WASM_FETCH_TIMEOUT: env.duration(
    "30s",
    "Time for a whole Wasm module fetch, retries included (the reference's remote fetch timeout)",
  ),
  WASM_HTTP_REQUEST_MAX_RETRIES: env.int(5, "Retries when pulling a Wasm module over HTTP(S)"),
  WASM_HTTP_REQUEST_TIMEOUT: env.duration("15s", "Per-request timeout for the pull"),
  WASM_INSECURE_REGISTRIES: env.string(
    "",
    "Registries or HTTPS servers allowed without verification (comma-separated host:port)",
  ),
  WASM_MODULE_EXPIRY: env.duration("24h0m0s", "Cache expiry of a Wasm module"),
  WASM_PURGE_INTERVAL: env.duration("1h0m0s", "Expiry check interval"),
  WASM_REFUSE_METADATA_ADDRESSES: env.bool(
    false,
    "Refuse Wasm module hosts (and redirects) resolving to link-local or cloud metadata addresses: 169.254.0.0/16, fe80::/10, fd00:ec2::/32, 100.100.100.200, IPv4-mapped and NAT64 forms included",
  ),
  WORKLOAD_IDENTITY_SOCKET_FILE: env.string("socket", "Workload-identity SDS socket file name"),
  WORKLOAD_RSA_KEY_SIZE: env.int(2048, "RSA key size of workload certs"),
  XDS_AUTH: env.bool(true, "Authenticate xDS clients"),
  XDS_AUTH_PLAINTEXT: env.bool(false, "Authenticate plain-text requests"),
  XDS_AUTH_PROVIDER: env.string("", "xDS auth provider (no effect here: the agent always sends its workload token)"),
  XDS_ROOT_CA: env.string("", "Root CA expected on the xDS connection"),
  // Proxy bootstrap (spec 001 §2 names "the proxy-config environment variable" without printing
  // it; the reference's name is PROXY_CONFIG).
  PROXY_CONFIG: env.string(
    "",
    "ProxyConfig as YAML or JSON, merged field by field over the mesh config's defaultConfig",
  ),
  // Status server (not in the spec's printed table; the reference's ISTIO_PROMETHEUS_ANNOTATIONS).
  MESH_PROMETHEUS_ANNOTATIONS: env.string(
    "",
    'Application metrics merged into the agent\'s /stats/prometheus: JSON {"scrape","path","port"} of the pod\'s prometheus.io annotations',
  ),
} as const satisfies EnvTable

export const agentEnv = { ...tuningEnv, ...agentSpecificEnv } as const satisfies EnvTable
