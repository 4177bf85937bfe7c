/**
 * `AgentConfig`: what `mesh-agent proxy` reads — its variables of `agentEnv`, the `proxy` flags
 * and the pod facts the injector passes through the downward API (`POD_NAME`, `POD_NAMESPACE`,
 * `SERVICE_ACCOUNT`, ...; not part of the spec's table, so not in `agentEnv`).
 */
import { hostname } from "node:os"
import { Config, Option } from "effect"
import { Ports } from "../constants.js"
import { agentEnv } from "./agent-env.js"
import { EnvConfig } from "./env-config.js"

/** The `mesh-agent proxy` flags the agent reads. */
export interface ProxyAgentFlags {
  readonly domain: string
  readonly meshConfig: string
  readonly serviceCluster: string
  readonly stsPort: number
  readonly proxyLogLevel: string
  readonly proxyComponentLogLevel: string
  readonly concurrency: number
  readonly templateFile: string
  /** `--profiling`: `/debug/pprof/` on the agent status port, to loopback callers. */
  readonly profiling: boolean
  /** The positional `sidecar` (default) or `router`: the node type the proxy announces. */
  readonly proxyType: "sidecar" | "router"
}

/** Pod facts from the downward API. */
export interface PodFields {
  readonly podName: string
  readonly namespace: string
  readonly serviceAccount: string
  /** `MESH_TOKEN_PATH`: overrides the token file of JWT_POLICY. */
  readonly tokenPath: string | undefined
  /** `STATUS_PORT`: the agent status port (pilot-agent's --statusPort; 0 = off). */
  readonly statusPort: number
  /** Whether `GRPC_XDS_BOOTSTRAP` is set (then the gRPC bootstrap is written in sidecar mode too). */
  readonly grpcBootstrapSet: boolean
  /** `SECRET_TTL`: requested workload certificate lifetime (the reference's); unset lets the CA choose. */
  readonly secretTtl: string | undefined
}

/** The pod facts as read from the environment. */
export const podFieldsConfig: Config.Config<PodFields> = Config.all({
  podName: Config.string("POD_NAME").pipe(Config.withDefault(hostname())),
  namespace: Config.string("POD_NAMESPACE").pipe(Config.withDefault("default")),
  serviceAccount: Config.string("SERVICE_ACCOUNT").pipe(Config.withDefault("default")),
  tokenPath: Config.option(Config.string("MESH_TOKEN_PATH")).pipe(Config.map(Option.getOrUndefined)),
  statusPort: Config.integer("STATUS_PORT").pipe(Config.withDefault(Ports.agentStatus)),
  grpcBootstrapSet: Config.option(Config.string("GRPC_XDS_BOOTSTRAP")).pipe(Config.map(Option.isSome)),
  secretTtl: Config.option(Config.string("SECRET_TTL")).pipe(Config.map(Option.getOrUndefined)),
})

export class AgentConfig extends EnvConfig<AgentConfig, ProxyAgentFlags & PodFields>()("mesh/AgentConfig", {
  table: agentEnv,
  names: [
    "DISABLE_PROXY",
    "PROXY_CONFIG",
    "TRUST_DOMAIN",
    "JWT_POLICY",
    "INSTANCE_IP",
    "MESH_META_CLUSTER_ID",
    // identity and the CA client
    "CA_ADDR",
    "CA_PROVIDER",
    "CA_ROOT_CA",
    "CREDENTIAL_FETCHER_TYPE",
    "WORKLOAD_RSA_KEY_SIZE",
    "ECC_SIGNATURE_ALGORITHM",
    "ECC_CURVE",
    "FILE_MOUNTED_CERTS",
    "FILE_DEBOUNCE_DURATION",
    "OUTPUT_CERTS",
    "MESHD_SAN",
    "MESH_META_CERT_SIGNER",
    // xDS proxy, SDS and bootstraps
    "XDS_ROOT_CA",
    "WORKLOAD_IDENTITY_SOCKET_FILE",
    "MESH_SDS_FILE_MAX_BYTES",
    "MESH_SDS_MAX_FILES",
    "MESH_SDS_FILE_POLL_INTERVAL",
    "GRPC_XDS_BOOTSTRAP",
    "MESH_BOOTSTRAP_OVERRIDE",
    // status and drain
    "PROXY_STATUS_PORT",
    "MESH_ORCH_APP_PROBERS",
    "MESH_PROMETHEUS_ANNOTATIONS",
    "MINIMUM_DRAIN_DURATION",
    "EXIT_ON_ZERO_ACTIVE_CONNECTIONS",
    // DNS proxy (runs when DNS is captured or the DNS server is asked for)
    "MESH_META_DNS_CAPTURE",
    "MESH_META_ENABLE_DNS_SERVER",
    "DNS_PROXY_ADDR",
    "DNS_FORWARD_PARALLEL",
    "DNS_PROXY_MAX_INFLIGHT",
    "DNS_PROXY_MAX_INFLIGHT_PER_CLIENT",
    "DNS_PROXY_MAX_TCP_CONNECTIONS",
    "DNS_PROXY_RESOLV_CONF",
    "DNS_PROXY_TCP_MAX_UNREAD_BYTES",
    // Wasm module fetcher
    "MESH_WASM_MAX_BINARY_SIZE_BYTES",
    "WASM_FETCH_TIMEOUT",
    "WASM_HTTP_REQUEST_MAX_RETRIES",
    "WASM_HTTP_REQUEST_TIMEOUT",
    "WASM_INSECURE_REGISTRIES",
    "WASM_MODULE_EXPIRY",
    "WASM_PURGE_INTERVAL",
    "WASM_REFUSE_METADATA_ADDRESSES",
  ],
  // The flags' defaults (proxy-command.ts) and the pod facts' defaults.
  fields: {
    domain: "",
    meshConfig: "./etc/mesh/config/mesh",
    serviceCluster: "mesh-proxy",
    stsPort: 0,
    proxyLogLevel: "warning",
    proxyComponentLogLevel: "",
    concurrency: 0,
    templateFile: "",
    profiling: false,
    proxyType: "sidecar",
    podName: hostname(),
    namespace: "default",
    serviceAccount: "default",
    tokenPath: undefined,
    statusPort: Ports.agentStatus,
    grpcBootstrapSet: false,
    secretTtl: undefined,
  },
}) {}

export type AgentConfigValues = typeof AgentConfig.Service
