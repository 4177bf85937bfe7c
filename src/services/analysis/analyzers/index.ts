/** Every analyzer, in the order `-L` lists them. */
import type { Analyzer } from "../analyzer.js"
import { annotationAnalyzers } from "./annotations.js"
import { applicationUidAnalyzers } from "./application-uid.js"
import { authorizationPolicyAnalyzers } from "./authorization-policies.js"
import { blockedCidrAnalyzers } from "./blocked-cidrs.js"
import { conditionAnalyzers } from "./conditions.js"
import { deprecationAnalyzers } from "./deprecation.js"
import { destinationRuleSubsetAnalyzers } from "./destination-rule-subsets.js"
import { destinationRuleAnalyzers } from "./destination-rules.js"
import { envoyFilterAnalyzers } from "./envoy-filters.js"
import { gatewayApiCrdAnalyzers } from "./gateway-api-crds.js"
import { gatewaySecretAnalyzers } from "./gateway-secrets.js"
import { gatewayAnalyzers } from "./gateways.js"
import { injectionAnalyzers } from "./injection.js"
import { jwtClaimRouteAnalyzers } from "./jwt-claim-routes.js"
import { meshNetworksAnalyzers } from "./mesh-networks.js"
import { policyAnalyzers } from "./policies.js"
import { serviceEntryProtocolAnalyzers } from "./service-entry-protocols.js"
import { serviceAnalyzers } from "./services.js"
import { virtualServiceAnalyzers } from "./virtual-services.js"
import { webhookAnalyzers } from "./webhooks.js"
import { workloadSelectorAnalyzers } from "./workload-selectors.js"

export const ALL_ANALYZERS: ReadonlyArray<Analyzer> = [
  ...annotationAnalyzers,
  ...serviceAnalyzers,
  ...serviceEntryProtocolAnalyzers,
  ...destinationRuleAnalyzers,
  ...destinationRuleSubsetAnalyzers,
  ...envoyFilterAnalyzers,
  ...gatewayAnalyzers,
  ...injectionAnalyzers,
  ...policyAnalyzers,
  ...workloadSelectorAnalyzers,
  ...virtualServiceAnalyzers,
  ...jwtClaimRouteAnalyzers,
  ...applicationUidAnalyzers,
  ...gatewaySecretAnalyzers,
  ...deprecationAnalyzers,
  ...meshNetworksAnalyzers,
  ...authorizationPolicyAnalyzers,
  ...webhookAnalyzers,
  ...gatewayApiCrdAnalyzers,
  ...conditionAnalyzers,
  ...blockedCidrAnalyzers,
]
