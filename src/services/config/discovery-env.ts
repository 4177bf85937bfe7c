/**
 * Environment variables of `mesh-discovery` (spec 000 §4.4), grouped as the spec groups them.
 * Defaults are the spec's text with `<mesh_domain>` written as `mesh.io`; "" means unset.
 */
import { type EnvTable, env } from "./env.js"
import { memoryEnv } from "./memory-env.js"

export const discoveryEnv = {
  // --- Identity, CA and certificates ---
  AUDIENCE: env.string("", "Expected audience in tokens"),
  CA_TRUSTED_NODE_ACCOUNTS: env.string(
    "",
    "Service accounts allowed node authentication for CSRs (create CSRs for other identities if a pod of that identity runs on the same node)",
  ),
  CERT_SIGNER_DOMAIN: env.string("", "Cert signer domain"),
  MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: env.bool(true, "Random start delay for the root cert rotator"),
  MESHCA_SELF_SIGNED_CA_CERT_TTL: env.duration("87600h0m0s", "TTL of the self-signed root"),
  MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: env.int(2048, "RSA key size of self-signed CA certs"),
  MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: env.duration(
    "1h0m0s",
    "Root expiry check and rotation interval; suggested above 10 minutes",
  ),
  MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE: env.int(20, "Grace period percentile of the root cert"),
  // Root key rotation without downtime (issue 43): (a) the new root joins the trust bundle
  // while the old key still signs, (b) the new key signs, (c) the old root leaves the bundle
  // MAX_WORKLOAD_CERT_TTL after the switch (or when it expires, if sooner).
  MESHCA_KEY_ROTATION_CHECK_INTERVAL: env.duration(
    "10s",
    "How often a root key rotation checks its phase: agents' acknowledgements of the trust bundle, the switch to the new key, retired roots whose certificates have all expired (at least 100ms)",
  ),
  MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT: env.duration(
    "30s",
    "Key rotation phase (a): the least time the bundle with the new root is published before the new key signs (counted from the start of the server if it restarted meanwhile, so reconnecting agents get the bundle)",
  ),
  MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT: env.duration(
    "1h0m0s",
    "Key rotation phase (a): the new key signs after this long even if some connected agents have not acknowledged the bundle (they are listed on /debug/ca_rotation)",
  ),
  MESHCA_KEY_ROTATION_ON_KEY_MISMATCH: env.bool(
    false,
    "Start a root key rotation when the self-signed root's key is not RSA of MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE bits (checked at start and every MESHCA_KEY_ROTATION_CHECK_INTERVAL); otherwise only meshctl admin ca rotate-key starts one",
  ),
  MESHCA_TRUST_BUNDLE_MAX_WATCHERS: env.int(
    100000,
    "Agents' trust bundle streams (WatchTrustBundle) open at once; more are refused with RESOURCE_EXHAUSTED",
  ),
  DEFAULT_WORKLOAD_CERT_TTL: env.duration("24h0m0s", "Default workload cert TTL"),
  MAX_WORKLOAD_CERT_TTL: env.duration("2160h0m0s", "Maximum workload cert TTL"),
  ENABLE_CA_SERVER: env.bool(true, "False disables the CA server"),
  EXTERNAL_CA: env.string("", "External CA integration; the only permitted value is MESHD_RA_ORCH_API"),
  EXTERNAL_MESHD: env.bool(false, "One server controls remote clusters including CA"),
  MESHD_CUSTOM_HOST: env.string("", "Extra host names (comma-separated) covered by the server certificate"),
  PILOT_CERT_PROVIDER: env.string(
    "meshd",
    "Provider of the server DNS certificate: k8s.io/NAME uses the orchestrator RA, meshd signs with the built-in CA, other values generate no certs but still distribute the root cert file. Used only if no custom certs are mounted",
  ),
  // PILOT_CA_CERT_CONFIGMAP: not in this binary's list (spec 000 §4.4).
  ROOT_CA_DIR: env.string("./etc/cacerts", "Location of a local or mounted CA root"),
  USE_CACERTS_FOR_SELF_SIGNED_CA: env.bool(false, "Store the self-signed root in a secret named cacerts"),
  USE_REMOTE_CERTS: env.bool(false, "Load CA certs from the config cluster (external server)"),
  MESH_MULTIROOT_MESH: env.bool(false, "Accept certs signed by more than one trust anchor for mutual TLS"),
  TOKEN_AUDIENCES: env.string("mesh-ca", "Comma-separated audiences accepted in a token before issuing a cert"),
  TOKEN_ISSUER: env.string("", "OIDC issuer used to check tokens"),
  JWT_RULE: env.string("", "JWT rule for server authentication"),
  JWKS_RESOLVER_INSECURE_SKIP_VERIFY: env.bool(false, "Skip verification of the JWKS server certificate"),
  ORCH_SIGNER: env.string("", "Orchestrator CA signer type"),
  COMPLIANCE_POLICY: env.string(
    "",
    "Empty: no extra restrictions. fips-140-2: forces a TLS version and cipher subset over all runtime components. Necessary but not sufficient for compliance. Also written into injected proxies (COMPLIANCE_POLICY; fips-140-3 adds GODEBUG=fips140=only)",
  ),
  XDS_AUTH: env.bool(true, "Authenticate xDS clients"),
  XDS_AUTH_PLAINTEXT: env.bool(false, "Also authenticate plain-text requests; for trusted networks"),
  TRUSTED_GATEWAY_CIDR: env.string(
    "",
    "Connections from gateways in this range are trusted for XFCC-style authentication; only for trusted networks",
  ),
  PILOT_ENABLE_XDS_IDENTITY_CHECK: env.bool(true, "Authorize xDS clients to act only as namespaces they may"),
  PILOT_SKIP_VALIDATE_TRUST_DOMAIN: env.bool(false, "Skip same-trust-domain check of peers under mutual TLS"),
  PILOT_JWT_ENABLE_REMOTE_JWKS: env.string(
    "false",
    "Who fetches JWKS: meshd or false = server; hybrid or true = proxy with fallback to server when the JWKS server is external; proxy = proxy",
  ),
  PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: env.duration("20m0s", "Refresh interval of JWKS public keys"),

  // --- Identity of the instance and topology ---
  CLUSTER_ID: env.string("Orchestrator", "Cluster and registry of this instance"),
  CLOUD_PLATFORM: env.string(
    "",
    "Cloud platform of the proxy; allowed: three cloud-provider identifiers and none; discovered if unset",
  ),
  PLATFORM: env.string("", "Deployment platform; two platform identifiers allowed"),
  CLOUDX_METADATA: env.string("", "Pipe-separated PROJECT_ID|PROJECT_NUMBER|CLUSTER_NAME|CLUSTER_ZONE"),
  CLOUDX_QUOTA_PROJECT: env.string("", "Quota project for cloud API requests"),
  CLOUDX_ZONE: env.string("", "Zone of the workload"),
  POD_NAME: env.string("", "Pod name"),
  POD_NAMESPACE: env.string("mesh-system", "Pod namespace"),
  REVISION: env.string("", "Control-plane revision"),
  SERVERLESS_REVISION: env.string("", "Set when running in a serverless revision"),
  ORCHESTRATOR_SERVICE_HOST: env.string("", "Set automatically in-cluster"),
  // Not in the spec's printed table: the in-cluster API server's port, set beside the host.
  ORCHESTRATOR_SERVICE_PORT: env.string("443", "Port of the in-cluster API server; set automatically in-cluster"),
  ORCH_INGRESS_NS: env.string("mesh-system", "Namespace of the ingress controller"),
  MESH_WATCH_NAMESPACE: env.string("", "Limit watches to one namespace (only one allowed)"),
  LOCAL_CLUSTER_SECRET_WATCHER: env.bool(
    false,
    "Watch the external cluster's namespace instead of the config cluster's",
  ),
  INJECT_ENABLED: env.bool(true, "Enable the mutating webhook handler"),
  INJECTION_WEBHOOK_CONFIG_NAME: env.string(
    "mesh-sidecar-injector",
    "Webhook configuration to patch when the CLI is not used",
  ),
  VALIDATION_WEBHOOK_CONFIG_NAME: env.string("mesh-mesh-system", "Validating webhook configuration to patch"),
  SHARED_MESH_CONFIG: env.string("", "Extra ConfigMap for shared mesh config"),
  MESH_ORCH_CLIENT_CONTENT_TYPE: env.string("protobuf", "Orchestrator client encoding: protobuf or json"),
  PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS: env.string(
    "",
    "Comma-separated insecure config auth options allowed for multicluster: auth providers (gcp, azure, exec, openstack), clientKey, clientCertificate, tokenFile, exec",
  ),

  // --- Multi-cluster services (MCS) ---
  ENABLE_MCS_SERVICE_DISCOVERY: env.bool(false, "Endpoints discoverable only in their own cluster unless exported"),
  ENABLE_MCS_HOST: env.bool(
    false,
    "Configure <svc>.<namespace>.svc.clusterset.local per exported service; requires service discovery flag",
  ),
  ENABLE_MCS_CLUSTER_LOCAL: env.bool(
    false,
    "<svc>.<namespace>.svc.cluster.local routes only to same-cluster endpoints; requires the two flags above",
  ),
  ENABLE_MCS_AUTO_EXPORT: env.bool(false, "Auto-generate ServiceExport for every non-cluster-local service"),
  // The spec prints "the standard MCS API group": the multi-cluster services API's group.
  MCS_API_GROUP: env.string("multicluster.x-k8s.io", "API group"),
  MCS_API_VERSION: env.string("v1alpha1", "API version"),

  // --- Push, cache and protocol behavior ---
  MESH_DELTA_XDS: env.bool(true, "Send deltas rather than full state"),
  PILOT_DEBOUNCE_AFTER: env.duration("100ms", "Minimum debounce delay"),
  PILOT_DEBOUNCE_MAX: env.duration("10s", "Maximum debounce wait"),
  PILOT_ENABLE_EDS_DEBOUNCE: env.bool(true, "Include EDS in debouncing"),
  PILOT_PUSH_THROTTLE: env.int(0, "Concurrent push limit; 0 = chosen from machine size"),
  PILOT_MAX_REQUESTS_PER_SECOND: env.float(0, "Incoming xDS requests per second; 0 = chosen from machine size"),
  PILOT_ENABLE_XDS_CACHE: env.bool(true, "Cache xDS responses"),
  PILOT_ENABLE_CDS_CACHE: env.bool(true, "Cache CDS (depends on xDS cache)"),
  PILOT_ENABLE_RDS_CACHE: env.bool(true, "Cache RDS (depends on xDS cache)"),
  PILOT_XDS_CACHE_SIZE: env.int(60000, "Maximum cache entries"),
  PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL: env.duration("5s", "Cache index clearing interval"),
  PILOT_XDS_CACHE_STATS: env.bool(false, "Cache efficiency metrics"),
  // Not in the spec's printed table (the reference has it; its ADS server long used a fixed 5s
  // send timeout). Without a limit a client that never reads holds a push slot forever.
  PILOT_XDS_SEND_TIMEOUT: env.duration(
    "5s",
    "Time allowed for one xDS response write; a stream whose write takes longer is closed (0 = no limit)",
  ),
  PILOT_STATUS_UPDATE_INTERVAL: env.duration("500ms", "xDS distribution status update interval"),
  PILOT_STATUS_QPS: env.int(100, "Status update QPS"),
  PILOT_STATUS_BURST: env.int(500, "Status update burst"),
  PILOT_STATUS_MAX_WORKERS: env.int(100, "Workers that keep status current"),
  PILOT_CONVERT_SIDECAR_SCOPE_CONCURRENCY: env.int(1, "Concurrency of SidecarScope conversion"),
  PILOT_UNIFIED_SIDECAR_SCOPE: env.bool(true, "Unified SidecarScope creation (temporary compatibility flag)"),
  MESH_GPRC_MAXRECVMSGSIZE: env.int(4194304, "Maximum gRPC stream receive buffer, bytes"),
  MESH_GPRC_MAXSTREAMS: env.int(100000, "Maximum concurrent gRPC streams"),
  // Heap growth and the soft memory limit (every daemon, through the tuning group).
  ...memoryEnv,
  MESH_XDS_MAX_STREAM_NAMES: env.int(
    100000,
    "Resource names one ADS stream may watch, all types together; a request taking a stream over it ends the stream with RESOURCE_EXHAUSTED (0 = no limit)",
  ),
  MESH_XDS_MAX_STREAM_NAME_BYTES: env.int(
    8388608,
    "Characters of the resource names one ADS stream may watch, all types together; a request taking a stream over it ends the stream with RESOURCE_EXHAUSTED (0 = no limit)",
  ),
  MESH_XDS_MAX_NAMES: env.int(
    10000000,
    "Resource names all ADS streams may watch together (the default fits 5,000 proxies watching 2,000 clusters each; lower it to bound what many unauthenticated streams can hold); a request taking the server over it ends its stream with RESOURCE_EXHAUSTED (0 = no limit)",
  ),
  MESH_XDS_MAX_NAME_BYTES: env.int(
    805306368,
    "Characters of the resource names all ADS streams may watch together; a request taking the server over it ends its stream with RESOURCE_EXHAUSTED (0 = no limit)",
  ),
  MESH_XDS_PLAINTEXT_DEBUG_REMOTE: env.bool(
    false,
    "Answer debug requests (type URLs mesh.io/debug/<page>: config dumps, every proxy's sync state) on the plaintext xDS port (--grpcAddr) to callers on other hosts, with no identity; off: loopback callers only (other hosts ask on the TLS port as an identity of the system namespace)",
  ),
  GRPC_KEEPALIVE_INTERVAL: env.duration("30s", "gRPC keepalive interval"),
  GRPC_KEEPALIVE_TIMEOUT: env.duration("10s", "gRPC keepalive timeout"),
  ENABLE_VTPROTOBUF: env.bool(true, "Optimized marshaling; needs a build with the matching tag"),
  PILOT_DNS_JITTER_DURATION: env.duration("100ms", "Jitter on periodic DNS resolution"),
  PILOT_DNS_CARES_UDP_MAX_QUERIES: env.string("100", "udp_max_queries of the proxy's DNS resolver (0 = unlimited)"),
  PILOT_REMOTE_CLUSTER_TIMEOUT: env.duration("30s", "See part 1 rule 2"),
  PILOT_TRACE_SAMPLING: env.float(1, "Mesh-wide trace sampling percent, 0.0 to 100.0, precision 0.01"),
  PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION: env.bool(true, "Merge virtual hosts with identical routes"),
  PILOT_DRAINING_LABEL: env.string("mesh.io/draining", "Label that marks endpoints DRAINING"),
  PILOT_SEND_UNHEALTHY_ENDPOINTS: env.bool(false, "See part 1 rule 4"),
  PILOT_WORKLOAD_ENTRY_GRACE_PERIOD: env.duration("10s", "See part 1 rule 5"),
  PILOT_ANALYSIS_INTERVAL: env.duration("10s", "Analyzer run interval"),
  METRICS_LOCALHOST_ACCESS_ONLY: env.bool(false, "Metrics endpoint reachable only from localhost"),
  METRIC_ROTATION_INTERVAL: env.duration("0s", "Metric scope rotation; 0 disables"),
  METRIC_GRACEFUL_DELETION_INTERVAL: env.duration("5m0s", "Metric expiry deletion delay; no effect if rotation is off"),
  MUTEX_PROFILE_FRACTION: env.int(1000, "Mutex profiling at rate 1/N; 0 disables"),
  MESH_ENABLE_CONTROLLER_QUEUE_METRICS: env.bool(false, "Queue depth, latency and processing metrics"),

  // --- Feature switches with boolean type ---
  AMBIENT_ENABLE_MULTI_NETWORK: env.bool(false, "Multi-network functionality"),
  AMBIENT_ENABLE_STATUS: env.bool(
    false,
    "Write ambient status to resources; no leader election, unsafe with several replicas",
  ),
  BYPASS_OVERLOAD_MANAGER_FOR_STATIC_LISTENERS: env.bool(true, "Skip the overload manager for static listeners"),
  ENABLE_100_CONTINUE_HEADERS: env.bool(true, "Pass 100-continue headers through"),
  ENABLE_AUTO_SNI: env.bool(true, "Set SNI automatically when DestinationRules do not"),
  ENABLE_DEBUG_ON_HTTP: env.bool(true, "Debug interface; disable in production"),
  ENABLE_DEFERRED_CLUSTER_CREATION: env.bool(true, "Create proxy clusters only on first request"),
  ENABLE_DEFERRED_STATS_CREATION: env.bool(true, "Lazily initialize some stats"),
  ENABLE_DELIMITED_STATS_TAG_REGEX: env.bool(true, "Delimited stat-tag regex"),
  ENABLE_ENHANCED_DESTINATIONRULE_MERGE: env.bool(true, "exportTo-aware merge"),
  ENABLE_HCM_INTERNAL_NETWORKS: env.bool(
    false,
    "Mesh-network endpoints become internal addresses in the HTTP connection manager",
  ),
  ENABLE_INBOUND_RETRY_POLICY: env.bool(true, "Retry inbound requests reset before reaching the service"),
  ENABLE_INGRESS_WAYPOINT_ROUTING: env.bool(
    false,
    "Gateways call service waypoints when the ingress-use-waypoint label is set on the Service",
  ),
  ENABLE_LEADER_ELECTION: env.bool(true, "Leader election before running controllers"),
  ENABLE_LOCALITY_WEIGHTED_LB_CONFIG: env.bool(false, "Always set locality-weighted LB config"),
  ENABLE_MULTICLUSTER_HEADLESS: env.bool(true, "Headless DNS table resolves to same-network endpoints in any cluster"),
  ENABLE_NATIVE_SIDECARS: env.string(
    "auto",
    "Inject the proxy as a native sidecar (an init container with restartPolicy Always): true, false, or auto " +
      "(when the pod's node, or every node if it is not scheduled yet, runs a kubelet of at least 1.33); any " +
      "other value is false. The pod's sidecar.mesh.io/nativeSidecar annotation overrides it",
  ),
  ENABLE_PROBE_KEEPALIVE_CONNECTIONS: env.bool(false, "Readiness probes keep connections alive"),
  ENABLE_SELECTOR_BASED_ORCH_GATEWAY_POLICY: env.bool(
    true,
    "If false, gateway-API gateways ignore workloadSelector policies and honour only targetRef",
  ),
  ENABLE_TLS_ON_SIDECAR_INGRESS: env.bool(false, "Sidecar.ingress TLS takes effect"),
  EXCLUDE_UNSAFE_503_FROM_DEFAULT_RETRY: env.bool(true, "No retry on 503 in the default policy"),
  HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED: env.bool(true, "Strip the URL fragment from request paths"),
  MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION: env.bool(true, "Agent replaces Wasm remote loads with local files"),
  MESH_DUAL_STACK: env.bool(false, "Dual-stack feature"),
  MESH_ENABLE_HTTP2_PROBING: env.bool(true, "HTTP2 probes for HTTPS probes"),
  MESH_ENABLE_IPV4_OUTBOUND_LISTENER_FOR_IPV6_CLUSTERS: env.bool(
    false,
    "Extra IPv4 outbound listener in IPv6-only clusters",
  ),
  MESH_WORKLOAD_ENTRY_VALIDATE_IDENTITY: env.bool(
    true,
    "Check workload identity against its WorkloadEntry; kept for compatibility, to be removed",
  ),
  LABEL_CANONICAL_SERVICES_FOR_MESH_EXTERNAL_SERVICE_ENTRIES: env.bool(
    false,
    "Canonical-service metadata for mesh_external entries",
  ),
  PILOT_ALLOW_SIDECAR_SERVICE_INBOUND_LISTENER_MERGE: env.bool(
    false,
    "Inbound listeners for service ports and sidecar ingress",
  ),
  PILOT_AUTO_ALLOW_WAYPOINT_POLICY: env.bool(
    false,
    "Synthetic allow policies so node-proxy accepts only waypoint traffic: with PILOT_ENABLE_AMBIENT, each waypoint with known pods gets an ALLOW authorization `mesh_allow_waypoint_<ns>_<name>` of its identities, named by every workload bound to it",
  ),
  PILOT_DISABLE_MX_ALPN: env.bool(false, "Omit the peer-exchange ALPN in TLS handshakes"),
  PILOT_ENABLE_ALPHA_GATEWAY_API: env.bool(false, "Alpha gateway-API support (CRDs required)"),
  PILOT_ENABLE_ALPN_FILTER: env.bool(true, "ALPN filters needed for protocol sniffing"),
  PILOT_ENABLE_AMBIENT: env.bool(
    false,
    "Master switch for ambient mode: mesh-discovery watches the cluster's pods and serves the node proxy's workload API (mesh.workload.Address, mesh.security.Authorization over delta ADS)",
  ),
  PILOT_ENABLE_AMBIENT_WAYPOINTS: env.bool(false, "Run ambient controllers"),
  PILOT_ENABLE_ANALYSIS: env.bool(false, "Run analyzers and write errors to resource Status"),
  PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY: env.bool(true, "Read WorkloadEntry from other clusters"),
  PILOT_ENABLE_EDS_FOR_HEADLESS_SERVICES: env.bool(false, "Send headless endpoints over EDS"),
  PILOT_ENABLE_GATEWAY_API: env.bool(true, "Gateway-API support (CRDs required)"),
  PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER: env.bool(true, "Auto-provision deployments and services"),
  PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER: env.bool(true, "Create and manage default GatewayClasses"),
  PILOT_ENABLE_GATEWAY_API_STATUS: env.bool(true, "Write status on gateway-API resources"),
  ENABLE_GATEWAY_API_INFERENCE_EXTENSION: env.bool(
    false,
    "Gateway-API inference extension: HTTPRoute backends of kind InferencePool (inference.networking.k8s.io/v1, from files or, with PILOT_ENABLE_GATEWAY_API, watched on the orchestrator once its CRD is served) go to the pool's shadow Service `<pool>-ip-<hash>` (on the orchestrator the leader applies it, field manager mesh.io/inference-pool-controller, owned by the pool; synthesised when the registry has none) and ask the pool's endpoint picker over ext_proc; each pool gets Accepted/ResolvedRefs per Gateway. Off: such a backend is InvalidKind",
  ),
  PILOT_ENABLE_IP_AUTOALLOCATE: env.bool(true, "Controller assigning IPs to ServiceEntries without one"),
  PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES: env.bool(true, "Services with selectors select matching workload entries"),
  PILOT_ENABLE_METADATA_EXCHANGE: env.bool(true, "Metadata-exchange filters"),
  PILOT_ENABLE_MONGO_FILTER: env.bool(true, "Inject the mongo network filter"),
  PILOT_ENABLE_MYSQL_FILTER: env.bool(false, "Inject the mysql network filter"),
  PILOT_ENABLE_REDIS_FILTER: env.bool(false, "Inject the redis network filter"),
  PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS: env.bool(false, "Untaint nodes whose CNI pods are ready"),
  PILOT_ENABLE_PERSISTENT_SESSION_FILTER: env.bool(false, "Persistent-session filter for labelled services"),
  PILOT_ENABLE_QUIC_LISTENERS: env.bool(
    false,
    "QUIC listeners where a TLS-terminating listener has a same-numbered UDP port",
  ),
  PILOT_ENABLE_SENDING_HBONE: env.bool(false, "Allow HBONE toward destinations"),
  PILOT_PREFER_SENDING_HBONE: env.bool(false, "Prefer HBONE toward destinations"),
  PILOT_ENABLE_SIDECAR_LISTENING_HBONE: env.bool(false, "HBONE support for proxies"),
  PILOT_ENABLE_SERVICEENTRY_SELECT_PODS: env.bool(true, "Selector ServiceEntries select pods"),
  PILOT_ENABLE_TELEMETRY_LABEL: env.bool(true, "Telemetry metadata on cluster and endpoint resources"),
  PILOT_ENDPOINT_TELEMETRY_LABEL: env.bool(true, "Telemetry metadata on endpoints"),
  PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION: env.bool(
    true,
    "Auto-register WorkloadEntries from WorkloadGroups on xDS connect",
  ),
  PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS: env.bool(true, "Health checks of WorkloadEntries per WorkloadGroup"),
  PILOT_PROXY_FILTER_STATS: env.bool(false, "Metrics on proxy filter operations"),
  PILOT_FILTER_GATEWAY_CLUSTER_CONFIG: env.bool(
    false,
    "Send gateways only clusters referenced by their virtual services",
  ),
  PILOT_HTTP10: env.bool(false, "HTTP/1.0 on outbound HTTP listeners"),
  PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API: env.bool(true, "Labelled gateway objects become multi-network gateways"),
  PILOT_SCOPE_GATEWAY_TO_NAMESPACE: env.bool(false, "Gateway workloads select only same-namespace gateway resources"),
  PILOT_SIDECAR_USE_REMOTE_ADDRESS: env.bool(false, "useRemoteAddress on sidecar outbound listeners"),
  PREFER_DESTINATIONRULE_TLS_FOR_EXTERNAL_SERVICES: env.bool(true, "Prefer DestinationRule TLS settings"),
  RESOLVE_HOSTNAME_GATEWAYS: env.bool(true, "Resolve LoadBalancer hostnames for cross-network gateways"),
  REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: env.bool(
    false,
    "Send readiness probes to localhost instead of the pod IP",
  ),
  UNSAFE_ENABLE_ADMIN_ENDPOINTS: env.bool(false, "Dangerous admin endpoints on the debug interface"),
  UNSAFE_PILOT_ENABLE_DELTA_TEST: env.bool(false, "Expensive delta-xDS runtime tests; testing only"),
  UNSAFE_PILOT_ENABLE_RUNTIME_ASSERTIONS: env.bool(
    false,
    "Expensive runtime asserts that panic on failure; testing only",
  ),

  // --- Other string variables ---
  INBOUND_INTERCEPTION_MODE: env.string("", "Inbound interception mode: REDIRECT or TPROXY"),
  INBOUND_TPROXY_MARK: env.string("", "Packet mark used for TPROXY inbound interception"),
  MESH_BOOTSTRAP: env.string("", "Proxy bootstrap setting"),
  MESH_METRICS_ANNOTATIONS: env.string("", "Metrics annotations setting"),
  MESH_OUTBOUND_IPV4_LOOPBACK_CIDR: env.string(
    "127.0.0.1/32",
    "IPv4 range identifying loopback outbound traffic meant for the app container",
  ),
  MESH_OUTBOUND_OWNER_GROUPS: env.string(
    "*",
    "Groups (name or GID, comma-separated) whose outbound traffic is redirected; * = all",
  ),
  MESH_OUTBOUND_OWNER_GROUPS_EXCLUDE: env.string("", "Groups excluded from redirection when * is used"),
  PILOT_GATEWAY_API_CONTROLLER_NAME: env.string(
    "mesh.io/gateway-controller",
    "Controller name matched against GatewayClass",
  ),
  PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME: env.string("mesh", "Name of the default GatewayClass"),
  PILOT_MX_ADDITIONAL_LABELS: env.string("", "Extra labels for the metadata-exchange filter (comma-separated)"),
  PILOT_PERSISTENT_SESSION_HEADER_LABEL: env.string(
    "mesh.io/persistent-session-header",
    "Services with this label use header-based sessions; empty disables",
  ),
  PILOT_PERSISTENT_SESSION_LABEL: env.string(
    "mesh.io/persistent-session",
    "Services with this label use cookie-based sessions; empty disables",
  ),
} as const satisfies EnvTable
