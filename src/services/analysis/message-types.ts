/**
 * The analysis message types: the reference's codes (IST → MSH), names and default levels. One
 * table shared by `meshctl analyze` and the status controller (analysis/analysis-status.ts, written by layers/orchestrator/analysis-status.ts).
 */

export type Level = "Info" | "Warning" | "Error"

/** Severity order: a threshold lets through its own level and the ones above it. */
export const LEVEL_RANK: Readonly<Record<Level, number>> = { Info: 0, Warning: 1, Error: 2 }

export const parseLevel = (text: string): Level | undefined => {
  const lower = text.toLowerCase()
  return lower === "info"
    ? "Info"
    : lower === "warning" || lower === "warn"
      ? "Warning"
      : lower === "error"
        ? "Error"
        : undefined
}

export interface MessageType {
  readonly code: string
  readonly name: string
  readonly level: Level
}

const type = (code: string, name: string, level: Level): MessageType => ({ code: `MSH${code}`, name, level })

export const MessageTypes = {
  InternalError: type("0001", "InternalError", "Error"),
  Deprecated: type("0002", "Deprecated", "Warning"),
  ReferencedResourceNotFound: type("0101", "ReferencedResourceNotFound", "Error"),
  NamespaceNotInjected: type("0102", "NamespaceNotInjected", "Info"),
  PodMissingProxy: type("0103", "PodMissingProxy", "Warning"),
  SchemaValidationError: type("0106", "SchemaValidationError", "Error"),
  MisplacedAnnotation: type("0107", "MisplacedAnnotation", "Warning"),
  UnknownAnnotation: type("0108", "UnknownAnnotation", "Warning"),
  ConflictingMeshGatewayVirtualServiceHosts: type("0109", "ConflictingMeshGatewayVirtualServiceHosts", "Error"),
  ConflictingSidecarWorkloadSelectors: type("0110", "ConflictingSidecarWorkloadSelectors", "Error"),
  MultipleSidecarsWithoutWorkloadSelectors: type("0111", "MultipleSidecarsWithoutWorkloadSelectors", "Error"),
  VirtualServiceDestinationPortSelectorRequired: type("0112", "VirtualServiceDestinationPortSelectorRequired", "Error"),
  DeploymentAssociatedToMultipleServices: type("0116", "DeploymentAssociatedToMultipleServices", "Warning"),
  PortNameIsNotUnderNamingConvention: type("0118", "PortNameIsNotUnderNamingConvention", "Info"),
  NamespaceMultipleInjectionLabels: type("0123", "NamespaceMultipleInjectionLabels", "Warning"),
  InvalidAnnotation: type("0125", "InvalidAnnotation", "Warning"),
  UnknownMeshNetworksServiceRegistry: type("0126", "UnknownMeshNetworksServiceRegistry", "Error"),
  NoMatchingWorkloadsFound: type("0127", "NoMatchingWorkloadsFound", "Warning"),
  NoServerCertificateVerificationDestinationLevel: type(
    "0128",
    "NoServerCertificateVerificationDestinationLevel",
    "Error",
  ),
  NoServerCertificateVerificationPortLevel: type("0129", "NoServerCertificateVerificationPortLevel", "Warning"),
  VirtualServiceUnreachableRule: type("0130", "VirtualServiceUnreachableRule", "Warning"),
  VirtualServiceIneffectiveMatch: type("0131", "VirtualServiceIneffectiveMatch", "Info"),
  VirtualServiceHostNotFoundInGateway: type("0132", "VirtualServiceHostNotFoundInGateway", "Warning"),
  ServiceEntryAddressesRequired: type("0134", "ServiceEntryAddressesRequired", "Warning"),
  DeprecatedAnnotation: type("0135", "DeprecatedAnnotation", "Info"),
  AlphaAnnotation: type("0136", "AlphaAnnotation", "Info"),
  DeploymentConflictingPorts: type("0137", "DeploymentConflictingPorts", "Warning"),
  GatewayDuplicateCertificate: type("0138", "GatewayDuplicateCertificate", "Warning"),
  InvalidWebhook: type("0139", "InvalidWebhook", "Error"),
  IngressRouteRulesNotAffected: type("0140", "IngressRouteRulesNotAffected", "Warning"),
  InvalidApplicationUID: type("0144", "InvalidApplicationUID", "Warning"),
  ConflictingGateways: type("0145", "ConflictingGateways", "Error"),
  ImageAutoWithoutInjectionWarning: type("0146", "ImageAutoWithoutInjectionWarning", "Warning"),
  ImageAutoWithoutInjectionError: type("0147", "ImageAutoWithoutInjectionError", "Error"),
  NamespaceInjectionEnabledByDefault: type("0148", "NamespaceInjectionEnabledByDefault", "Info"),
  ExternalNameServiceTypeInvalidPortName: type("0150", "ExternalNameServiceTypeInvalidPortName", "Warning"),
  EnvoyFilterUsesRelativeOperation: type("0151", "EnvoyFilterUsesRelativeOperation", "Warning"),
  EnvoyFilterUsesReplaceOperationIncorrectly: type("0152", "EnvoyFilterUsesReplaceOperationIncorrectly", "Error"),
  EnvoyFilterUsesAddOperationIncorrectly: type("0153", "EnvoyFilterUsesAddOperationIncorrectly", "Error"),
  EnvoyFilterUsesRemoveOperationIncorrectly: type("0154", "EnvoyFilterUsesRemoveOperationIncorrectly", "Error"),
  EnvoyFilterUsesRelativeOperationWithProxyVersion: type(
    "0155",
    "EnvoyFilterUsesRelativeOperationWithProxyVersion",
    "Warning",
  ),
  InvalidTelemetryProvider: type("0157", "InvalidTelemetryProvider", "Warning"),
  PodsProxyImageMismatchInNamespace: type("0158", "PodsProxyImageMismatchInNamespace", "Warning"),
  ConflictingTelemetryWorkloadSelectors: type("0159", "ConflictingTelemetryWorkloadSelectors", "Error"),
  MultipleTelemetriesWithoutWorkloadSelectors: type("0160", "MultipleTelemetriesWithoutWorkloadSelectors", "Error"),
  JwtClaimBasedRoutingWithoutRequestAuthN: type("0149", "JwtClaimBasedRoutingWithoutRequestAuthN", "Error"),
  InvalidGatewayCredential: type("0161", "InvalidGatewayCredential", "Error"),
  GatewayPortNotDefinedOnService: type("0162", "GatewayPortNotDefinedOnService", "Warning"),
  InvalidExternalControlPlaneConfig: type("0163", "InvalidExternalControlPlaneConfig", "Warning"),
  ExternalControlPlaneAddressIsNotAHostname: type("0164", "ExternalControlPlaneAddressIsNotAHostname", "Info"),
  ReferencedInternalGateway: type("0165", "ReferencedInternalGateway", "Warning"),
  IneffectiveSelector: type("0166", "IneffectiveSelector", "Warning"),
  IneffectivePolicy: type("0167", "IneffectivePolicy", "Warning"),
  MultiClusterInconsistentService: type("0170", "MultiClusterInconsistentService", "Warning"),
  NegativeConditionStatus: type("0171", "NegativeConditionStatus", "Warning"),
  DestinationRuleSubsetNotSelectPods: type("0173", "DestinationRuleSubsetNotSelectPods", "Error"),
  UnknownDestinationRuleHost: type("0174", "UnknownDestinationRuleHost", "Warning"),
  JwksUriFetchUnrestricted: type("0175", "JwksUriFetchUnrestricted", "Warning"),
  GatewayAPICRDVersionBelowMinimum: type("0176", "GatewayAPICRDVersionBelowMinimum", "Warning"),
  ConflictingServiceEntryProtocol: type("0177", "ConflictingServiceEntryProtocol", "Warning"),
} as const satisfies Record<string, MessageType>

export type MessageTypeName = keyof typeof MessageTypes

export const documentationUrl = (code: string): string =>
  `https://mesh.io/latest/docs/reference/config/analysis/${code.toLowerCase()}/`
