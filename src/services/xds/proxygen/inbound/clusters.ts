/**
 * The sidecar's inbound clusters: `inbound|<port>||` per inbound port (ports.ts), sending to the
 * workload on loopback (STATIC), or, for a Sidecar ingress whose default endpoint is the
 * workload's own address, to the connection's original destination; and
 * `InboundPassthroughCluster` for ports no service declares. Connections to the workload's
 * own address leave from 127.0.0.6, which the capture rules let through (no redirect loop).
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { CircuitBreakers, Cluster, Duration, ProtoAny } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { INBOUND_PASSTHROUGH_CLUSTER, TypedConfig } from "../well-known.js"
import { type InboundPort, inboundPorts } from "./ports.js"

/** The source address inbound connections to the workload's own address leave from. */
export const INBOUND_BIND_ADDRESS = "127.0.0.6"

const MAX = { value: 4294967295 }
/** Inbound traffic is limited by the workload, not the proxy (the reference's inbound defaults). */
const circuitBreakers: CircuitBreakers = {
  thresholds: [{ max_connections: MAX, max_pending_requests: MAX, max_requests: MAX, max_retries: MAX }],
}

const durationMs = (ms: number): Duration => ({
  seconds: String(Math.floor(ms / 1000)),
  nanos: (ms % 1000) * 1_000_000,
})

/** The extension name the proxy reads upstream HTTP options under. */
const HTTP_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

const HTTP2 = new Set(["HTTP2", "GRPC", "GRPC-Web"])

/** HTTP/2 toward gRPC and HTTP/2 workloads; the downstream's protocol toward other HTTP and detected ports. */
const protocolOptions = (
  port: Pick<InboundPort, "protocol" | "protocolClass">,
): Readonly<Record<string, ProtoAny>> | undefined => {
  if (port.protocolClass === "tcp") return undefined
  const options = HTTP2.has(port.protocol)
    ? { explicit_http_config: { http2_protocol_options: {} } }
    : { use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} } }
  return { [HTTP_OPTIONS_KEY]: typed(TypedConfig.httpProtocolOptions, { ...options }) }
}

const bind = (tproxy: boolean): Cluster =>
  // With TPROXY the proxy's sockets are transparent: no source rewrite is needed.
  tproxy ? {} : { upstream_bind_config: { source_address: { address: INBOUND_BIND_ADDRESS, port_value: 0 } } }

const originalDst = (name: string, timeoutMs: number, tproxy: boolean, portOverride?: number): Cluster => ({
  name,
  type: "ORIGINAL_DST",
  connect_timeout: durationMs(timeoutMs),
  lb_policy: "CLUSTER_PROVIDED",
  circuit_breakers: circuitBreakers,
  ...bind(tproxy),
  ...(portOverride !== undefined
    ? { original_dst_lb_config: { upstream_port_override: { value: portOverride } } }
    : {}),
})

const inboundCluster = (port: InboundPort, timeoutMs: number, tproxy: boolean): Cluster => {
  const options = protocolOptions(port)
  const common = options !== undefined ? { typed_extension_protocol_options: options } : {}
  const ep = port.endpoint
  if (ep.kind === "original") return { ...originalDst(port.cluster, timeoutMs, tproxy, ep.port), ...common }
  const address =
    ep.kind === "pipe" ? { pipe: { path: ep.path } } : { socket_address: { address: ep.address, port_value: ep.port } }
  return {
    name: port.cluster,
    type: "STATIC",
    connect_timeout: durationMs(timeoutMs),
    circuit_breakers: circuitBreakers,
    load_assignment: {
      cluster_name: port.cluster,
      endpoints: [{ lb_endpoints: [{ endpoint: { address } }] }],
    },
    ...common,
  }
}

/**
 * The inbound clusters of a sidecar. Each one's key is what its bytes are made of (port,
 * endpoint, protocol, timeout, interception): every proxy serving the same port alike shares it.
 */
export const generateInboundClusters = (push: PushContext, proxy: ProxyView): ReadonlyArray<ResourceSpec<Cluster>> => {
  if (proxy.kind !== "sidecar") return []
  const timeoutMs = push.options.proxy.connectTimeoutMs
  const tproxy = proxy.interceptionMode === "TPROXY"
  const specs: Array<ResourceSpec<Cluster>> = inboundPorts(push, proxy).ports.map((port) => ({
    name: port.cluster,
    key: `inbound-cluster|${port.cluster}|${JSON.stringify(port.endpoint)}|${port.protocol}|${timeoutMs}|${tproxy}`,
    build: () => inboundCluster(port, timeoutMs, tproxy),
  }))
  specs.push({
    name: INBOUND_PASSTHROUGH_CLUSTER,
    key: `inbound-cluster|${INBOUND_PASSTHROUGH_CLUSTER}|${timeoutMs}|${tproxy}`,
    build: () => {
      const options = protocolOptions({ protocol: "UNSUPPORTED", protocolClass: "auto" })
      return {
        ...originalDst(INBOUND_PASSTHROUGH_CLUSTER, timeoutMs, tproxy),
        ...(options !== undefined ? { typed_extension_protocol_options: options } : {}),
      }
    },
  })
  return specs
}
