/**
 * The decoded spec type of each kind, and a guard that narrows a ConfigResource by kind, so
 * consumers (registries, generators, analyzers) read typed specs without casts.
 */
import type { ConfigResource } from "./resource.js"
import type { AuthorizationPolicySpec } from "./schemas/authorization-policy.js"
import type { DestinationRuleSpec } from "./schemas/destination-rule.js"
import type { EnvoyFilterSpec } from "./schemas/envoy-filter.js"
import type { GatewaySpec } from "./schemas/gateway.js"
import type { BackendTLSPolicySpec, XBackendTrafficPolicySpec } from "./schemas/gateway-api/backend-policies.js"
import type { InferencePoolSpec } from "./schemas/gateway-api/inference-pool.js"
import type {
  GatewayClassSpec,
  GRPCRouteSpec,
  HTTPRouteSpec,
  KubernetesGatewaySpec,
  ListenerSetSpec,
  ReferenceGrantSpec,
  TCPRouteSpec,
  TLSRouteSpec,
} from "./schemas/gateway-api/types.js"
import type { IngressClassSpecBody, IngressSpecBody } from "./schemas/ingress.js"
import type { EndpointSliceBody, EndpointsBody, NamespaceBody, PodBody, ServiceBody } from "./schemas/orchestrator.js"
import type { PeerAuthenticationSpec } from "./schemas/peer-authentication.js"
import type { ProxyConfigSpec } from "./schemas/proxy-config.js"
import type { RequestAuthenticationSpec } from "./schemas/request-authentication.js"
import type { ServiceEntrySpec } from "./schemas/service-entry.js"
import type { SidecarSpec } from "./schemas/sidecar.js"
import type { TelemetrySpec } from "./schemas/telemetry.js"
import type { VirtualServiceSpec } from "./schemas/virtual-service.js"
import type { WasmPluginSpec } from "./schemas/wasm-plugin.js"
import type { WorkloadEntrySpec, WorkloadGroupSpec } from "./schemas/workload-entry.js"

export interface SpecByKind {
  readonly ServiceEntry: ServiceEntrySpec
  readonly WorkloadEntry: WorkloadEntrySpec
  readonly WorkloadGroup: WorkloadGroupSpec
  readonly DestinationRule: DestinationRuleSpec
  readonly VirtualService: VirtualServiceSpec
  readonly Gateway: GatewaySpec
  readonly Sidecar: SidecarSpec
  readonly EnvoyFilter: EnvoyFilterSpec
  readonly ProxyConfig: ProxyConfigSpec
  readonly PeerAuthentication: PeerAuthenticationSpec
  readonly RequestAuthentication: RequestAuthenticationSpec
  readonly AuthorizationPolicy: AuthorizationPolicySpec
  readonly Telemetry: TelemetrySpec
  readonly WasmPlugin: WasmPluginSpec
  /** Gateway-API kinds (gateway.networking.k8s.io); its Gateway is `KubernetesGateway` here. */
  readonly GatewayClass: GatewayClassSpec
  readonly KubernetesGateway: KubernetesGatewaySpec
  readonly HTTPRoute: HTTPRouteSpec
  readonly GRPCRoute: GRPCRouteSpec
  readonly TCPRoute: TCPRouteSpec
  readonly TLSRoute: TLSRouteSpec
  readonly ReferenceGrant: ReferenceGrantSpec
  readonly BackendTLSPolicy: BackendTLSPolicySpec
  readonly XBackendTrafficPolicy: XBackendTrafficPolicySpec
  readonly ListenerSet: ListenerSetSpec
  readonly InferencePool: InferencePoolSpec
  /** Orchestrator kinds: the body is their top-level content (spec/status, subsets, ...). */
  readonly Service: ServiceBody
  readonly Endpoints: EndpointsBody
  readonly EndpointSlice: EndpointSliceBody
  readonly Pod: PodBody
  readonly Namespace: NamespaceBody
  /** networking.k8s.io: their `spec`. */
  readonly Ingress: IngressSpecBody
  readonly IngressClass: IngressClassSpecBody
}

export type KnownKind = keyof SpecByKind

/** A resource of a known kind, its spec typed. */
export type ResourceOf<K extends KnownKind> = ConfigResource<SpecByKind[K]> & { readonly kind: K }

/** Narrows a resource (validated by parseConfigDocuments) to its kind's spec type. */
export const isKind = <K extends KnownKind>(resource: ConfigResource, kind: K): resource is ResourceOf<K> =>
  resource.kind === kind

/** The resources of one kind, typed. */
export const ofKind = <K extends KnownKind>(
  resources: Iterable<ConfigResource>,
  kind: K,
): ReadonlyArray<ResourceOf<K>> => {
  const out: Array<ResourceOf<K>> = []
  for (const resource of resources) if (isKind(resource, kind)) out.push(resource)
  return out
}
