/**
 * A waypoint's clusters (the reference's waypoint inbound clusters, single network):
 *
 * - `main_internal` and `encap`: static clusters of one internal endpoint, the listener of that
 *   name (`encap` reaches `connect_originate`);
 * - `connect_originate`: ORIGINAL_DST towards the destination's HBONE port (15008), with the
 *   waypoint's mTLS and HTTP/2 (the tunnel);
 * - per bound service port (UDP excepted), `inbound-vip|<port>|http|<host>` and/or `...|tcp|...`
 *   and one per DestinationRule subset (`http/<subset>`), whose endpoints are the service's
 *   workloads on their target port, each reached through `connect_originate` (an internal
 *   endpoint carrying the workload's `ip:port` as the original destination). The endpoints are
 *   inline (STATIC) here, where the reference sends them over EDS.
 * - `outbound|...` clusters for the destinations its routes name outside its services.
 */
import type { Service, ServicePort } from "../../../registry/model.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { Cluster, Duration, LbEndpoint, ProtoAny, TransportSocket } from "../../protocol/xds-types.js"
import { destinationRuleFor, subsetLabels } from "../clusters/destination-rule.js"
import { selectEndpoints } from "../clusters/endpoints.js"
import { generateOutboundClusters } from "../clusters/index.js"
import { toStruct } from "../clusters/proto-values.js"
import { RAW_BUFFER_SOCKET } from "../clusters/upstream-tls.js"
import { protocolClass } from "../inbound/ports.js"
import type { ProxyView } from "../proxy-view.js"
import { TypedConfig } from "../well-known.js"
import { hboneTlsContext } from "./listeners.js"
import {
  CONNECT_ORIGINATE,
  ENCAP,
  HBONE_PORT,
  inboundVipCluster,
  MAIN_INTERNAL,
  ORIGINAL_DST_METADATA,
} from "./names.js"
import { serviceNameOf, type WaypointScope } from "./waypoint-proxy.js"

const INTERNAL_UPSTREAM = "envoy.transport_sockets.internal_upstream"
const INTERNAL_UPSTREAM_TYPE =
  "type.googleapis.com/envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport"
const CONNECT_TIMEOUT: Duration = { seconds: "10", nanos: 0 }

/** Passes the endpoint's original-destination metadata on to the internal listener it reaches. */
const internalUpstream = (inner: TransportSocket = RAW_BUFFER_SOCKET): TransportSocket => ({
  name: INTERNAL_UPSTREAM,
  typed_config: typed(INTERNAL_UPSTREAM_TYPE, {
    passthrough_metadata: [{ kind: { host: {} }, name: ORIGINAL_DST_METADATA }],
    transport_socket: inner,
  }),
})

const http2Options: Readonly<Record<string, ProtoAny>> = {
  [TypedConfig.httpProtocolOptions.replace("type.googleapis.com/", "")]: typed(TypedConfig.httpProtocolOptions, {
    explicit_http_config: { http2_protocol_options: {} },
  }),
}

const internalEndpoint = (listener: string, endpointId = ""): NonNullable<LbEndpoint["endpoint"]> => ({
  address: {
    envoy_internal_address: {
      server_listener_name: listener,
      ...(endpointId !== "" ? { endpoint_id: endpointId } : {}),
    },
  },
})

/** A static cluster of one internal endpoint: the listener `listener`. */
const internalCluster = (name: string, listener: string): Cluster => ({
  name,
  type: "STATIC",
  connect_timeout: CONNECT_TIMEOUT,
  load_assignment: { cluster_name: name, endpoints: [{ lb_endpoints: [{ endpoint: internalEndpoint(listener) }] }] },
  transport_socket: internalUpstream(),
  typed_extension_protocol_options: http2Options,
})

const connectOriginateCluster = (): Cluster => ({
  name: CONNECT_ORIGINATE,
  type: "ORIGINAL_DST",
  lb_policy: "CLUSTER_PROVIDED",
  connect_timeout: CONNECT_TIMEOUT,
  original_dst_lb_config: { upstream_port_override: { value: HBONE_PORT } },
  transport_socket: {
    name: "envoy.transport_sockets.tls",
    typed_config: typed(TypedConfig.upstreamTls, { common_tls_context: hboneTlsContext() }),
  },
  typed_extension_protocol_options: http2Options,
})

const joinHostPort = (ip: string, port: number): string => (ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`)

/** One bound service port's cluster of `kind` (and subset): its workloads, each reached through connect_originate. */
const vipCluster = (
  push: PushContext,
  service: Service,
  port: ServicePort,
  kind: "http" | "tcp",
  subset: string,
  labels: Readonly<Record<string, string>>,
): Cluster => {
  const name = inboundVipCluster(kind, service.hostname, port.port, subset)
  const lbEndpoints = selectEndpoints(push, service, port, labels).map(
    ({ endpoint, port: target, health }): LbEndpoint => {
      const destination = joinHostPort(endpoint.address, target)
      return {
        endpoint: internalEndpoint(CONNECT_ORIGINATE, destination),
        health_status: health,
        load_balancing_weight: { value: endpoint.weight > 0 ? endpoint.weight : 1 },
        metadata: { filter_metadata: { [ORIGINAL_DST_METADATA]: toStruct({ local: destination }) } },
      }
    },
  )
  return {
    name,
    type: "STATIC",
    lb_policy: "ROUND_ROBIN",
    connect_timeout: CONNECT_TIMEOUT,
    load_assignment: { cluster_name: name, endpoints: lbEndpoints.length > 0 ? [{ lb_endpoints: lbEndpoints }] : [] },
    transport_socket: internalUpstream(),
    ...(kind === "http" && (port.protocol === "HTTP2" || port.protocol === "GRPC")
      ? { typed_extension_protocol_options: http2Options }
      : {}),
    metadata: {
      filter_metadata: {
        istio: toStruct({
          services: [{ host: service.hostname, name: serviceNameOf(service), namespace: service.namespace }],
          ...(subset !== "" ? { subset } : {}),
        }),
      },
    },
  }
}

/** The kinds of cluster a port gets: `http`, `tcp`, or both for sniffed ports; none for UDP. */
const kindsOf = (port: ServicePort): ReadonlyArray<"http" | "tcp"> => {
  const klass = protocolClass(port.protocol)
  return klass === undefined ? [] : klass === "auto" ? ["tcp", "http"] : [klass]
}

export const waypointClusters = (
  push: PushContext,
  proxy: ProxyView,
  scope: WaypointScope,
  outboundClusters: ReadonlyArray<string>,
): Generated<Cluster> => {
  const resources: Array<ResourceSpec<Cluster>> = [
    { name: MAIN_INTERNAL, key: "waypoint|main_internal", build: () => internalCluster(MAIN_INTERNAL, MAIN_INTERNAL) },
    { name: ENCAP, key: "waypoint|encap", build: () => internalCluster(ENCAP, CONNECT_ORIGINATE) },
    { name: CONNECT_ORIGINATE, key: "waypoint|connect_originate", build: connectOriginateCluster },
  ]
  for (const service of scope.services) {
    const rule = destinationRuleFor(push, proxy, service.hostname, service.namespace)
    const subsets = (rule?.subsets ?? []).map((s) => s.name)
    const key = `${push.fingerprint("service", service.hostname)}|${push.fingerprint("endpoints", service.hostname)}|${push.fingerprint("dr", service.hostname)}`
    for (const port of service.ports)
      for (const kind of kindsOf(port))
        for (const subset of ["", ...subsets]) {
          const labels = subsetLabels(rule, subset) ?? {}
          resources.push({
            name: inboundVipCluster(kind, service.hostname, port.port, subset),
            key: `waypoint|${kind}|${port.port}|${subset}|${service.hostname}|${key}`,
            build: () => vipCluster(push, service, port, kind, subset, labels),
          })
        }
  }
  // Destinations outside the waypoint's services: their outbound clusters, as a sidecar would have them.
  const outside = new Set(outboundClusters.map((name) => name.split("|")[3] ?? ""))
  const outbound = outside.size === 0 ? undefined : generateOutboundClusters(push, proxy, outside)
  return { resources: [...resources, ...(outbound?.resources ?? [])], warnings: outbound?.warnings ?? [] }
}
