/**
 * `/debug/gateway-api`: what the Gateway-API objects became in the served configuration — the
 * mesh Gateways and VirtualServices the conversion generated (services/gateway-api/), each with
 * the objects it came from (`KubernetesGateway/ns/name`, `HTTPRoute/ns/name`, ...), so a user
 * can see which listener was served and which route landed where. Read from the push context,
 * so it is what proxies are given, not a second conversion. DestinationRules come from the
 * backend policies (BackendTLSPolicy, XBackendTrafficPolicy).
 */
import type { ConfigResource } from "../config-model/resource.js"
import { MESH_NETWORKING_GROUP, PARENTS_ANNOTATION } from "../gateway-api/model.js"
import type { PushContext } from "../xds/model/push-context.js"

const GATEWAY_API_SOURCES = [
  "KubernetesGateway/",
  "HTTPRoute/",
  "GRPCRoute/",
  "TCPRoute/",
  "TLSRoute/",
  "ListenerSet/",
  "BackendTLSPolicy/",
  "XBackendTrafficPolicy/",
]

/** The Gateway-API objects a generated resource came from; empty for any other resource. */
const sourcesOf = (resource: ConfigResource): ReadonlyArray<string> => {
  const parents = resource.meta.annotations?.[PARENTS_ANNOTATION] ?? ""
  const sources = parents === "" ? [] : parents.split(",")
  return sources.some((s) => GATEWAY_API_SOURCES.some((prefix) => s.startsWith(prefix))) ? sources : []
}

const entry = (kind: string, resource: ConfigResource, sources: ReadonlyArray<string>) => ({
  kind,
  apiVersion: `${MESH_NETWORKING_GROUP}/v1`,
  metadata: { namespace: resource.meta.namespace, name: resource.meta.name },
  // The Gateway-API Gateway is `KubernetesGateway` inside the mesh; shown as users wrote it.
  sources: sources.map((s) => s.replace(/^KubernetesGateway\//, "Gateway/")),
  spec: resource.spec,
})

const generated = (kind: string, resources: ReadonlyArray<ConfigResource>) =>
  resources.flatMap((r) => {
    const sources = sourcesOf(r)
    return sources.length === 0 ? [] : [entry(kind, r, sources)]
  })

export const gatewayApiz = (push: PushContext) => ({
  gateways: generated("Gateway", push.input.proxyConfig?.gateways ?? []),
  virtualServices: generated("VirtualService", push.input.virtualServices),
  destinationRules: generated("DestinationRule", push.input.destinationRules),
})
