/**
 * The DNS proxy as a layer: it provides the `NameTableSink` the xDS proxy feeds with NDS and
 * serves DNS for as long as the layer's scope lives.
 * - `layer(settings)`: explicit settings (tests, benchmarks, embedders);
 * - `layerFromConfig`: `DNS_PROXY_ADDR`, `DNS_FORWARD_PARALLEL`, the `DNS_PROXY_*` bounds,
 *   `POD_NAMESPACE` and `--domain` from the agent's `AgentConfig`, upstreams and search domains
 *   from `DNS_PROXY_RESOLV_CONF` (/etc/resolv.conf).
 * Both need `Metrics`.
 */
import { Effect, Layer } from "effect"
import { NameTableSink } from "../../../services/agent/dns/name-table-sink.js"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { type DnsProxySettings, makeDnsProxy } from "./dns-proxy.js"

export const layer = (settings: DnsProxySettings) =>
  Layer.scoped(
    NameTableSink,
    Effect.map(makeDnsProxy(settings), (proxy) => proxy.sink),
  )

export const layerFromConfig = Layer.unwrapEffect(
  Effect.map(AgentConfig, (config) =>
    layer({
      address: config.DNS_PROXY_ADDR,
      forwardParallel: config.DNS_FORWARD_PARALLEL,
      namespace: config.namespace,
      domain: config.domain,
      resolvConfPath: config.DNS_PROXY_RESOLV_CONF,
      maxInflight: config.DNS_PROXY_MAX_INFLIGHT,
      maxInflightPerClient: config.DNS_PROXY_MAX_INFLIGHT_PER_CLIENT,
      tcpMaxUnreadBytes: config.DNS_PROXY_TCP_MAX_UNREAD_BYTES,
      maxTcpConnections: config.DNS_PROXY_MAX_TCP_CONNECTIONS,
    }),
  ),
)
