/**
 * Sidecar mode: the proxy's command line and a minimal bootstrap (node, admin, ADS through the
 * agent's xDS socket, SDS through the workload-identity socket), and the active-connection count
 * read from the proxy's admin stats.
 */
import { join } from "node:path"
import { Context, type Deferred, type Effect } from "effect"
import type { NodeIdentity } from "../bootstrap/node.js"

/** The supervised proxy process (sidecar mode). */
export interface ProxyProcessShape {
  /** Completes with the proxy's exit code when it ends for good (the agent exits with it). */
  readonly exited: Deferred.Deferred<number>
  /** The proxy's own readiness (admin `/ready`). */
  readonly ready: Effect.Effect<boolean>
}

export class ProxyProcess extends Context.Tag("mesh/agent/ProxyProcess")<ProxyProcess, ProxyProcessShape>() {}

export interface ProxyArgsInputs {
  readonly configFile: string
  readonly drainSeconds: number
  readonly logLevel: string
  readonly componentLogLevel: string
  readonly concurrency: number
}

/** Command-line arguments of the proxy, as the reference passes them. */
export const proxyArgs = (inputs: ProxyArgsInputs): ReadonlyArray<string> => {
  const levels = inputs.logLevel.split(",")
  const base = levels.find((l) => !l.includes(":")) ?? "warning"
  const scoped = [inputs.componentLogLevel, ...levels.filter((l) => l.includes(":"))].filter((l) => l !== "")
  return [
    "-c",
    inputs.configFile,
    "--drain-time-s",
    String(inputs.drainSeconds),
    "--drain-strategy",
    "immediate",
    "--local-address-ip-version",
    "v4",
    "--file-flush-interval-msec",
    "1000",
    "--disable-hot-restart",
    "--allow-unknown-static-fields",
    "-l",
    base,
    ...(scoped.length > 0 ? ["--component-log-level", scoped.join(",")] : []),
    ...(inputs.concurrency > 0 ? ["--concurrency", String(inputs.concurrency)] : []),
  ]
}

export interface ProxyBootstrapInputs {
  readonly node: NodeIdentity
  readonly serviceCluster: string
  readonly adminPort: number
  readonly xdsSocket: string
  readonly sdsSocket: string
}

const pipeCluster = (name: string, path: string) => ({
  name,
  type: "STATIC",
  connect_timeout: "1s",
  typed_extension_protocol_options: {
    "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
      "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
      explicit_http_config: { http2_protocol_options: {} },
    },
  },
  load_assignment: {
    cluster_name: name,
    endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path } } } }] }],
  },
})

/** The default bootstrap when no --templateFile / MESH_BOOTSTRAP_OVERRIDE is given. */
export const proxyBootstrap = (inputs: ProxyBootstrapInputs) => ({
  node: { id: inputs.node.id, cluster: inputs.serviceCluster, metadata: inputs.node.metadata },
  admin: { address: { socket_address: { address: "127.0.0.1", port_value: inputs.adminPort } } },
  dynamic_resources: {
    ads_config: {
      api_type: "GRPC",
      transport_api_version: "V3",
      grpc_services: [{ envoy_grpc: { cluster_name: "xds-grpc" } }],
    },
    cds_config: { ads: {}, resource_api_version: "V3" },
    lds_config: { ads: {}, resource_api_version: "V3" },
  },
  static_resources: {
    clusters: [pipeCluster("xds-grpc", inputs.xdsSocket), pipeCluster("sds-grpc", inputs.sdsSocket)],
  },
})

export const bootstrapFile = (configPath: string) => join(configPath, "proxy-rev.json")

/** Sum of `...downstream_cx_active: N` lines of the admin `/stats` text (listeners only). */
export const activeConnections = (statsText: string): number => {
  let total = 0
  for (const line of statsText.split("\n")) {
    const match = line.match(/^listener\.[^ ]*downstream_cx_active:\s*(\d+)\s*$/)
    if (match) total += Number(match[1])
  }
  return total
}
