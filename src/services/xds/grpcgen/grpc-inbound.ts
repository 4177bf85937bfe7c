/**
 * Inbound listeners for xDS-enabled gRPC servers: the LDS resource a server requests through its
 * bootstrap's `server_listener_resource_name_template` (`xds.mesh.io/grpc/lds/inbound/<ip>:<port>`).
 *
 * One filter chain: mutual TLS (client certificate required, identity and roots from the
 * bootstrap's `default` certificate provider) when the PeerAuthentication that applies to the
 * server's workload and port is STRICT; plaintext otherwise — a gRPC server can only match
 * `raw_buffer`, so PERMISSIVE serves plaintext as in the reference mesh. The HttpConnectionManager
 * carries its routes inline (every path, `non_forwarding_action`) and the RBAC filters of the
 * AuthorizationPolicies that apply, DENY before ALLOW, router last.
 *
 * The bytes depend on the address, the mTLS mode and the applicable policies, never on the proxy
 * itself: servers whose namespace and labels select the same policies share the encoded resource.
 */
// grpc-gen imports this module too; both only call each other's functions after loading.

import type { ResourceSpec } from "../cache/resource-spec.js"
import { workloadMtlsMode } from "../model/mtls-mode.js"
import { digest, INBOUND_LISTENER_PREFIXES, type PushContext } from "../model/push-context.js"
import { typed } from "../protocol/typed-any.js"
import type { Listener, TransportSocket } from "../protocol/xds-types.js"
import { type Generated, type GeneratorNotice, noNotices } from "./generator-notices.js"
import { applicablePolicies, rbacFilters } from "./grpc-rbac.js"

const HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
const DOWNSTREAM_TLS_TYPE = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext"
const ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"

/** The workload a gRPC server runs as, from its node metadata (`NAMESPACE`, `LABELS`). */
export interface ProxyWorkload {
  readonly namespace: string
  readonly labels: Readonly<Record<string, string>>
}

export const unknownWorkload: ProxyWorkload = { namespace: "", labels: {} }

/**
 * The workload of a node: metadata `NAMESPACE` and `LABELS`, else the namespace of a node id
 * `type~ip~pod.namespace~domain`.
 */
export const proxyWorkload = (id: string, metadata: Readonly<Record<string, unknown>>): ProxyWorkload => {
  const labels: Record<string, string> = {}
  const raw = metadata.LABELS
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw)) if (typeof v === "string") labels[k] = v
  }
  const fromId = id.split("~")[2]?.split(".")[1] ?? ""
  const namespace = typeof metadata.NAMESPACE === "string" && metadata.NAMESPACE !== "" ? metadata.NAMESPACE : fromId
  return { namespace, labels }
}

/** `<ip>:<port>` or `[<ipv6>]:<port>` after the prefix; undefined for anything else. */
export const parseInboundName = (name: string): { readonly ip: string; readonly port: number } | undefined => {
  const prefix = INBOUND_LISTENER_PREFIXES.find((p) => name.startsWith(p))
  if (prefix === undefined) return undefined
  const rest = name.slice(prefix.length)
  const m = /^\[([0-9a-fA-F:.]+)\]:(\d+)$/.exec(rest) ?? /^(\d{1,3}(?:\.\d{1,3}){3}):(\d+)$/.exec(rest)
  if (m === null) return undefined
  const port = Number(m[2])
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined
  return { ip: m[1]!, port }
}

const downstreamTls: TransportSocket = {
  name: "envoy.transport_sockets.tls",
  typed_config: typed(DOWNSTREAM_TLS_TYPE, {
    require_client_certificate: { value: true },
    // gRPC servers reject any other policy.
    ocsp_staple_policy: "LENIENT_STAPLING",
    common_tls_context: {
      tls_certificate_provider_instance: { instance_name: "default", certificate_name: "default" },
      combined_validation_context: {
        default_validation_context: {
          ca_certificate_provider_instance: { instance_name: "default", certificate_name: "ROOTCA" },
        },
      },
    },
  }),
}

export const generateInboundListener = (
  push: PushContext,
  name: string,
  workload: ProxyWorkload,
): Generated<Listener> => {
  const address = parseInboundName(name)
  if (address === undefined) return { resources: [], warnings: noNotices }
  // Decided up front: the key holds the outcome (mode, filters), not every policy it read.
  const mode = workloadMtlsMode(push, workload.namespace, workload.labels, address.port)
  const strict = mode === "STRICT"
  const applicable = applicablePolicies(
    push.authorizationPolicies,
    push.options.rootNamespace,
    workload.namespace,
    workload.labels,
  )
  const rbac = rbacFilters(applicable.policies)
  // Generation is pure: what it had to skip is returned, for the ADS server to log (generator-notices.ts).
  const skipped = [...applicable.warnings, ...rbac.warnings]
  const warnings =
    skipped.length === 0
      ? noNotices
      : skipped.map((message): GeneratorNotice => ({ level: "warning", scope: "authorization", message }))
  const filters = [...rbac.filters, { name: "envoy.filters.http.router", typed_config: typed(ROUTER_TYPE, {}) }]
  const resource: ResourceSpec<Listener> = {
    name,
    key: [strict ? "mtls" : "plain", digest(JSON.stringify(rbac.filters))].join(","),
    build: () => ({
      name,
      address: { socket_address: { address: address.ip, port_value: address.port } },
      filter_chains: [
        {
          name: `inbound|${address.port}`,
          filters: [
            {
              name: "envoy.filters.network.http_connection_manager",
              typed_config: typed(HCM_TYPE, {
                stat_prefix: `inbound|${address.port}`,
                route_config: {
                  name: `inbound|${address.port}`,
                  virtual_hosts: [
                    {
                      name: `inbound|${address.port}`,
                      domains: ["*"],
                      routes: [{ name: "default", match: { prefix: "/" }, non_forwarding_action: {} }],
                    },
                  ],
                },
                http_filters: filters,
              }),
            },
          ],
          ...(strict ? { transport_socket: downstreamTls } : {}),
        },
      ],
    }),
  }
  return { resources: [resource], warnings }
}
