/**
 * VirtualService → Envoy route translation, shared by sidecar RDS (outbound) and gateway RDS:
 * which VirtualServices apply, their HTTP routes, TCP/TLS upstreams, virtual host domains.
 */
export { type HttpMatch, mergeHttpRoute } from "./delegate.js"
export { destinationCluster, destinationService } from "./destinations.js"
export { altHosts, collapseVirtualHosts, routeHostDomains } from "./domains.js"
export {
  clusterHash,
  type DestinationHash,
  hashKeyOf,
  hashPolicyOf,
  NO_HASH,
  type RuleWorkload,
} from "./hash-policy.js"
export { isCatchAll, matchApplies, type RouteTarget, routeMatch } from "./http-match.js"
export {
  DEFAULT_ROUTE_NAME,
  defaultHttpRoute,
  type HttpRoutes,
  httpFilterNamesNeeded,
  httpRoutesFor,
  optionalHttpFilter,
  traceOperation,
} from "./http-route.js"
export { type L4Route, type L4Source, type TlsRoute, tcpRouteCluster, tlsRoutes } from "./l4-routes.js"
export { destinationHosts, virtualServiceKey } from "./route-key.js"
export { defaultRetryPolicy, retryPolicy } from "./route-policies.js"
export {
  boundGateways,
  delegatesOf,
  gatewayVirtualServices,
  MESH_GATEWAY,
  resolveGatewayName,
  type VirtualServiceResource,
  virtualServicesForProxy,
  virtualServiceWarnings,
} from "./virtual-services.js"
