/**
 * Log scopes each binary accepts (spec part 1 §4.3, part 2 §4.2–4.5) and the levels of the
 * `--log_*` flags. `all` is not a scope of its own: it addresses every scope at once.
 */

export const LOG_LEVELS = ["debug", "info", "warn", "error", "fatal", "none"] as const
export type LogLevelName = (typeof LOG_LEVELS)[number]

export const ALL_SCOPES = "all"
export const DEFAULT_SCOPE = "default"

export const discoveryScopes = [
  "ads",
  "adsc",
  "all",
  "analysis",
  "authn",
  "authorization",
  "ca",
  "controllers",
  "default",
  "delta",
  "deltaadsc",
  "file",
  "fullpush",
  "gateway",
  "grpc",
  "grpcgen",
  "ingress status",
  "ip-autoallocate",
  "klog",
  "krt",
  "kube",
  "model",
  "monitor",
  "monitoring",
  "pkica",
  "pkira",
  "probes",
  "processing",
  "retry",
  "rootcertrotator",
  "secretcontroller",
  "security",
  "serverca",
  "serviceentry",
  "spiffe",
  "status",
  "trustBundle",
  "untaint",
  "validation",
  "validationController",
  "validationServer",
  "wasm",
  "wle",
] as const

export const agentScopes = [
  "ads",
  "all",
  "ca",
  "cache",
  "meshcaclient",
  "default",
  "dns",
  "cloudcred",
  "grpc",
  "healthcheck",
  "iptables",
  "klog",
  "mockcred",
  "monitoring",
  "probes",
  "sds",
  "security",
  "spiffe",
  "validation",
  "wasm",
  "xdsproxy",
] as const

export const cniScopes = [
  "ads",
  "all",
  "cni-agent",
  "cni-plugin",
  "controllers",
  "default",
  "grpc",
  "klog",
  "krt",
  "model",
  "monitoring",
  "spiffe",
  "trustBundle",
  "validation",
] as const

/** meshctl's spec lists no scopes of its own; it logs under these. */
export const meshctlScopes = ["all", "default", "klog", "cli"] as const
