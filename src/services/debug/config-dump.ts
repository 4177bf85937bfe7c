/**
 * `/debug/config_dump?proxyID=`: what the server sends one connected proxy, in the data-plane
 * proxy's own admin `config_dump` shape (`envoy.admin.v3.*ConfigDump` sections with
 * `dynamic_active_clusters`, `dynamic_listeners`, ...), so `meshctl proxy-config` reads a dump
 * from the control plane, from a proxy's admin port or from a saved file alike. Field names are
 * the protos' own (snake_case), as the proxy's admin prints them. The resources are generated
 * from the current PushContext for the names the proxy watches.
 */
import type { ProtoObject } from "../xds/cache/resource-spec.js"
import { generate } from "../xds/grpcgen/grpc-gen.js"
import type { PushContext } from "../xds/model/push-context.js"
import { TypeUrl } from "../xds/protocol/type-urls.js"
import { generateForProxy } from "../xds/proxygen/generate.js"
import type { ConnectionStatus, WatchStatus } from "../xds/server.js"

const ADMIN = "type.googleapis.com/envoy.admin.v3."

const resourcesOf = (
  push: PushContext,
  connection: ConnectionStatus,
  watch: WatchStatus,
): ReadonlyArray<ProtoObject> => {
  const view = connection.proxy?.view
  const sub = { wildcard: watch.wildcard, names: watch.names }
  const generated =
    view === undefined
      ? generate(push, watch.typeUrl, sub)
      : generateForProxy(push, watch.typeUrl, { ...sub, proxy: view })
  return generated.resources.map((spec) => ({ "@type": watch.typeUrl, ...spec.build() }))
}

/** One section per watched type, in the proxy's admin order (clusters, listeners, routes, ...). */
const section = (
  typeUrl: string,
  version: string,
  resources: ReadonlyArray<ProtoObject>,
  lastUpdated: string,
): ProtoObject | undefined => {
  switch (typeUrl) {
    case TypeUrl.Cluster:
      return {
        "@type": `${ADMIN}ClustersConfigDump`,
        version_info: version,
        dynamic_active_clusters: resources.map((cluster) => ({
          version_info: version,
          cluster,
          last_updated: lastUpdated,
        })),
      }
    case TypeUrl.Listener:
      return {
        "@type": `${ADMIN}ListenersConfigDump`,
        version_info: version,
        dynamic_listeners: resources.map((listener) => ({
          name: listener.name,
          active_state: { version_info: version, listener, last_updated: lastUpdated },
        })),
      }
    case TypeUrl.Route:
      return {
        "@type": `${ADMIN}RoutesConfigDump`,
        dynamic_route_configs: resources.map((route_config) => ({
          version_info: version,
          route_config,
          last_updated: lastUpdated,
        })),
      }
    case TypeUrl.Endpoint:
      return {
        "@type": `${ADMIN}EndpointsConfigDump`,
        dynamic_endpoint_configs: resources.map((endpoint_config) => ({
          version_info: version,
          endpoint_config,
          last_updated: lastUpdated,
        })),
      }
    case TypeUrl.Secret:
      // As the proxy's own dump: private keys never leave the control plane's debug page.
      return {
        "@type": `${ADMIN}SecretsConfigDump`,
        dynamic_active_secrets: resources.map((secret) => ({
          name: secret.name,
          version_info: version,
          last_updated: lastUpdated,
          secret: redactedSecret(secret),
        })),
      }
    case TypeUrl.ExtensionConfig:
      return {
        "@type": `${ADMIN}EcdsConfigDump`,
        ecds_filters: resources.map((ecds_filter) => ({
          version_info: version,
          ecds_filter,
          last_updated: lastUpdated,
        })),
      }
    default:
      return undefined
  }
}

const ORDER: ReadonlyArray<string> = [
  TypeUrl.Cluster,
  TypeUrl.Listener,
  TypeUrl.Route,
  TypeUrl.Endpoint,
  TypeUrl.Secret,
  TypeUrl.ExtensionConfig,
]

/** A Secret with its private key replaced, as the proxy's admin dump shows it. */
const redactedSecret = (secret: ProtoObject): ProtoObject => {
  const certificate = secret.tls_certificate as ProtoObject | undefined
  if (certificate?.private_key === undefined) return secret
  return {
    ...secret,
    tls_certificate: { ...certificate, private_key: { inline_string: "[redacted]" } },
  }
}

/** The dump of the newest connection of `proxyID` (a node id or a connection id); undefined when none. */
export const configDump = (
  push: PushContext,
  connections: ReadonlyArray<ConnectionStatus>,
  proxyID: string,
): { readonly configs: ReadonlyArray<ProtoObject> } | undefined => {
  const matching = connections.filter((c) => c.nodeId === proxyID || c.id === proxyID)
  const connection = matching.sort((a, b) => b.connectedAt - a.connectedAt)[0]
  if (connection === undefined) return undefined
  const lastUpdated = new Date(connection.connectedAt).toISOString()
  const configs: Array<ProtoObject> = []
  for (const typeUrl of ORDER) {
    const watch = connection.watches.find((w) => w.typeUrl === typeUrl)
    if (watch === undefined) continue
    const version = watch.versionAcked ?? watch.versionSent ?? ""
    const dumped = section(typeUrl, version, resourcesOf(push, connection, watch), lastUpdated)
    if (dumped !== undefined) configs.push(dumped)
  }
  return { configs }
}
