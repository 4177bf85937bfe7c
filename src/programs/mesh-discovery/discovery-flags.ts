/** The flags of `mesh-discovery discovery` (spec part 1 §4.3), parsed and validated. */
import { Options } from "@effect/cli"
import { Effect, Either } from "effect"
import { DEFAULT_CLUSTER_ID, SYSTEM_NAMESPACE } from "../../services/constants.js"
import { parseListenAddress } from "../../services/net/address.js"
import { TLS_CIPHER_SUITES } from "../../services/net/cipher-suites.js"
import {
  boolFlag,
  durationFlag,
  type FlagValues,
  floatFlag,
  intFlag,
  invalidFlag,
  listFlag,
  mapFlag,
  textFlag,
  uint16Flag,
} from "../shared/options.js"

const invalid = invalidFlag

/** A listen-address flag: validated as host:port, kept as text for the server to bind. */
const addressFlag = (name: string, defaultValue: string, description: string) =>
  textFlag(name, defaultValue).pipe(
    Options.mapEffect((text) =>
      Either.match(parseListenAddress(text), {
        onLeft: (reason) => Effect.fail(invalid(`--${name}: ${reason}`)),
        onRight: Effect.succeed,
      }),
    ),
    Options.withDescription(description),
  )

export const REGISTRIES = ["Orchestrator", "Mock"] as const
export type RegistryName = (typeof REGISTRIES)[number]

export const discoveryFlags = {
  caCertFile: textFlag("caCertFile").pipe(Options.withDescription("File containing the x509 Server CA Certificate")),
  clusterAliases: mapFlag("clusterAliases").pipe(Options.withDescription("Alias names for clusters")),
  clusterID: textFlag("clusterID", DEFAULT_CLUSTER_ID, "CLUSTER_ID").pipe(
    Options.withDescription("The ID of the cluster that this instance resides"),
  ),
  clusterRegistriesNamespace: textFlag("clusterRegistriesNamespace", SYSTEM_NAMESPACE).pipe(
    Options.withDescription("Namespace for ConfigMap which stores clusters configs"),
  ),
  cniNamespace: textFlag("cniNamespace", SYSTEM_NAMESPACE, "POD_NAMESPACE").pipe(
    Options.withDescription("Select a namespace where the CNI resides; falls back to ${POD_NAMESPACE}"),
  ),
  configDir: textFlag("configDir").pipe(
    Options.withDescription(
      "Directory to watch for updates to config yaml files. If specified, the files will be used as the source of config, rather than an orchestrator client.",
    ),
  ),
  ctrlzAddress: textFlag("ctrlz_address", "localhost").pipe(
    Options.withDescription(
      "The IP Address to listen on for the introspection facility. Use '*' to indicate all addresses.",
    ),
  ),
  ctrlzPort: uint16Flag("ctrlz_port", 9876).pipe(
    Options.withDescription("The IP port to use for the introspection facility"),
  ),
  domain: textFlag("domain", "cluster.local").pipe(Options.withDescription("DNS domain suffix")),
  grpcAddr: addressFlag("grpcAddr", ":15010", "Discovery service gRPC address"),
  httpAddr: addressFlag("httpAddr", ":8080", "Discovery service HTTP address"),
  httpsAddr: addressFlag("httpsAddr", ":15017", "Injection and validation service HTTPS address"),
  keepaliveInterval: durationFlag("keepaliveInterval", "30s", "GRPC_KEEPALIVE_INTERVAL").pipe(
    Options.withDescription(
      "The time interval if no activity on the connection it pings the peer to see if the transport is alive",
    ),
  ),
  keepaliveMaxServerConnectionAge: durationFlag("keepaliveMaxServerConnectionAge", "2562047h47m16.854775807s").pipe(
    Options.withDescription(
      "Maximum duration a connection will be kept open on the server side before a graceful close.",
    ),
  ),
  keepaliveTimeout: durationFlag("keepaliveTimeout", "10s", "GRPC_KEEPALIVE_TIMEOUT").pipe(
    Options.withDescription(
      "After having pinged for keepalive check, the client/server waits for a duration of keepaliveTimeout and if no activity is seen even after that the connection is closed.",
    ),
  ),
  orchconfig: textFlag("orchconfig").pipe(
    Options.withDescription("Use an orchestrator configuration file instead of in-cluster configuration"),
  ),
  orchestratorApiBurst: intFlag("orchestratorApiBurst", 160, { min: 0 }).pipe(
    Options.withDescription("Maximum burst for throttle when communicating with the orchestrator API"),
  ),
  orchestratorApiQPS: floatFlag("orchestratorApiQPS", 80).pipe(
    Options.withDescription("Maximum QPS when communicating with the orchestrator API"),
  ),
  meshConfig: textFlag("meshConfig", "./etc/mesh/config/mesh").pipe(
    Options.withDescription("File name for mesh configuration. If not specified, a default mesh will be used."),
  ),
  monitoringAddr: addressFlag(
    "monitoringAddr",
    ":15014",
    "HTTP address to use for the control plane's self-monitoring information",
  ),
  namespace: textFlag("namespace", SYSTEM_NAMESPACE, "POD_NAMESPACE").pipe(
    Options.withAlias("n"),
    Options.withDescription(
      "Select a namespace where the controller resides. If not set, uses ${POD_NAMESPACE} environment variable",
    ),
  ),
  networksConfig: textFlag("networksConfig", "./etc/mesh/config/meshNetworks").pipe(
    Options.withDescription(
      "File name for mesh networks configuration. If not specified, a default mesh networks will be used.",
    ),
  ),
  profile: boolFlag("profile").pipe(
    Options.withDescription("Enable profiling via web interface host:port/debug/pprof"),
  ),
  registries: listFlag("registries", ["Orchestrator"]).pipe(
    Options.mapEffect((names) => {
      const unknown = names.filter((name) => !(REGISTRIES as ReadonlyArray<string>).includes(name))
      return unknown.length > 0
        ? Effect.fail(invalid(`--registries: unknown registry "${unknown[0]}" (allowed: ${REGISTRIES.join(", ")})`))
        : Effect.succeed(names as ReadonlyArray<RegistryName>)
    }),
    Options.withDescription(
      `Comma separated list of platform service registries to read from (choose one or more from {${REGISTRIES.join(", ")}})`,
    ),
  ),
  secureGRPCAddr: addressFlag("secureGRPCAddr", ":15012", "Discovery service secured gRPC address"),
  shutdownDuration: durationFlag("shutdownDuration", "10s").pipe(
    Options.withDescription("Duration the discovery server needs to terminate gracefully"),
  ),
  tlsCipherSuites: listFlag("tls-cipher-suites").pipe(
    Options.mapEffect((names) => {
      const unknown = names.filter((name) => !TLS_CIPHER_SUITES.has(name))
      return unknown.length > 0
        ? Effect.fail(invalid(`--tls-cipher-suites: unknown cipher suite "${unknown[0]}"`))
        : Effect.succeed(names)
    }),
    Options.withDescription("The cipher suites of the TLS server. The runtime's default suites apply when omitted."),
  ),
  tlsCertFile: textFlag("tlsCertFile").pipe(Options.withDescription("File containing the x509 Certificate for HTTPS.")),
  tlsKeyFile: textFlag("tlsKeyFile").pipe(
    Options.withDescription("File containing the x509 private key matching --tlsCertFile"),
  ),
}

export type DiscoveryArgs = FlagValues<typeof discoveryFlags>
