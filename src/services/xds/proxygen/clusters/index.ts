/**
 * Outbound CDS and EDS for sidecars and gateways, with DestinationRule policies and upstream TLS.
 * See outbound-clusters.ts (CDS), endpoints.ts (EDS), destination-rule.ts (which rule applies),
 * traffic-policy.ts, upstream-tls.ts, locality.ts and conflicts.ts (gauges).
 */
export { type ClusterConflicts, clusterConflicts } from "./conflicts.js"
export {
  type ClusterPolicy,
  clusterPolicy,
  destinationRuleFor,
  destinationRuleForWorkload,
  destinationRuleWorkloadKey,
  type MergedDestinationRule,
  mergedDestinationRules,
  subsetLabels,
} from "./destination-rule.js"
export { generateProxyEndpoints, selectEndpoints } from "./endpoints.js"
export {
  applyLocalityLb,
  type LocalityGroup,
  type LocalityLb,
  localityLbActive,
  localityLbEndpoints,
  localityLbOf,
} from "./locality.js"
export { discoveryTypeOf, generateOutboundClusters } from "./outbound-clusters.js"
export { meshSni, serviceIdentities } from "./upstream-tls.js"
