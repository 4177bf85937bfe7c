/**
 * The proxyless gRPC xDS bootstrap (GRPC_XDS_BOOTSTRAP): the agent's xDS endpoint as the server,
 * the node identity with `GENERATOR: grpc`, a `file_watcher` certificate provider reading the
 * agent-written certificate files, and the inbound listener name template the control plane's
 * gRPC generator serves.
 */
import { join } from "node:path"
import { CERT_FILES } from "../identity/identity.js"
import type { NodeIdentity } from "./node.js"

export const SERVER_LISTENER_NAME_TEMPLATE = "xds.mesh.io/grpc/lds/inbound/%s"
export const CERT_PROVIDER_NAME = "default"
export const FILE_WATCHER_REFRESH = "900s"

export interface GrpcBootstrapInputs {
  /** `unix:///abs/path/XDS` for the agent's xDS proxy, or `host:port` of the discovery server. */
  readonly serverUri: string
  /** Channel credentials toward `serverUri` (insecure for the local socket). */
  readonly channelCreds: ReadonlyArray<{ readonly type: string; readonly config?: unknown }>
  readonly node: NodeIdentity
  /** Directory holding key.pem / cert-chain.pem / root-cert.pem (the agent's OUTPUT_CERTS). */
  readonly certDir: string
  /** file_watcher refresh interval in seconds (default 900). */
  readonly refreshSeconds?: number
}

export interface GrpcBootstrap {
  readonly xds_servers: ReadonlyArray<{
    readonly server_uri: string
    readonly channel_creds: ReadonlyArray<{ readonly type: string; readonly config?: unknown }>
    readonly server_features: ReadonlyArray<string>
  }>
  readonly node: {
    readonly id: string
    readonly metadata: Readonly<Record<string, unknown>>
    readonly locality: NonNullable<NodeIdentity["locality"]>
  }
  readonly certificate_providers: Readonly<
    Record<
      string,
      {
        readonly plugin_name: "file_watcher"
        readonly config: {
          readonly certificate_file: string
          readonly private_key_file: string
          readonly ca_certificate_file: string
          readonly refresh_interval: string
        }
      }
    >
  >
  readonly server_listener_resource_name_template: string
}

export const grpcBootstrap = (inputs: GrpcBootstrapInputs): GrpcBootstrap => ({
  xds_servers: [{ server_uri: inputs.serverUri, channel_creds: inputs.channelCreds, server_features: ["xds_v3"] }],
  node: {
    id: inputs.node.id,
    metadata: { ...inputs.node.metadata, GENERATOR: "grpc" },
    // grpc-js-xds requires the field, even empty
    locality: inputs.node.locality ?? {},
  },
  certificate_providers: {
    [CERT_PROVIDER_NAME]: {
      plugin_name: "file_watcher",
      config: {
        certificate_file: join(inputs.certDir, CERT_FILES.chain),
        private_key_file: join(inputs.certDir, CERT_FILES.key),
        ca_certificate_file: join(inputs.certDir, CERT_FILES.root),
        refresh_interval: inputs.refreshSeconds !== undefined ? `${inputs.refreshSeconds}s` : FILE_WATCHER_REFRESH,
      },
    },
  },
  server_listener_resource_name_template: SERVER_LISTENER_NAME_TEMPLATE,
})

/** `unix:///abs/path` for a socket path (grpc-js accepts absolute paths after `unix://`). */
export const unixUri = (absolutePath: string): string => `unix://${absolutePath}`
