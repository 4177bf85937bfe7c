/**
 * The "control-plane tuning group": variables of `mesh-discovery` that spec 001 §4.4 says also
 * appear in the lists of `mesh-agent` and `install-cni`, with the same type, default and meaning.
 * They are picked out of `discoveryEnv` so that each one is defined exactly once.
 */
import { discoveryEnv } from "./discovery-env.js"
import type { EnvTable } from "./env.js"

/** Name prefixes the spec cites for the tuning group (`ENABLE_*` switches, `MCS_*`, `MESH_*`, `PILOT_*`, `UNSAFE_*`). */
const TUNING_PREFIXES = ["ENABLE_", "MCS_", "MESH_", "PILOT_", "UNSAFE_"] as const

/**
 * Tuning-group names without one of those prefixes: the ones the spec names (`CLUSTER_ID`,
 * `CLOUD_PLATFORM`, `COMPLIANCE_POLICY`, `TRUSTED_GATEWAY_CIDR`), the identity and topology of
 * the instance, and the rest of document 1's boolean feature-switch table.
 */
const TUNING_NAMES = [
  // named by spec 001
  "CLUSTER_ID",
  "CLOUD_PLATFORM",
  "COMPLIANCE_POLICY",
  "TRUSTED_GATEWAY_CIDR",
  // identity of the instance and topology
  "PLATFORM",
  "CLOUDX_METADATA",
  "CLOUDX_QUOTA_PROJECT",
  "CLOUDX_ZONE",
  "POD_NAME",
  "POD_NAMESPACE",
  "REVISION",
  // feature switches of document 1 without a tuning prefix
  "AMBIENT_ENABLE_MULTI_NETWORK",
  "AMBIENT_ENABLE_STATUS",
  "BYPASS_OVERLOAD_MANAGER_FOR_STATIC_LISTENERS",
  "EXCLUDE_UNSAFE_503_FROM_DEFAULT_RETRY",
  "HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED",
  "LABEL_CANONICAL_SERVICES_FOR_MESH_EXTERNAL_SERVICE_ENTRIES",
  "PREFER_DESTINATIONRULE_TLS_FOR_EXTERNAL_SERVICES",
  "RESOLVE_HOSTNAME_GATEWAYS",
  "REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION",
] as const

/** Whether a `mesh-discovery` variable belongs to the tuning group shared with the agent and install-cni. */
export const isTuningVariable = (name: string): boolean =>
  (TUNING_NAMES as ReadonlyArray<string>).includes(name) || TUNING_PREFIXES.some((prefix) => name.startsWith(prefix))

/** The same filter at the type level, so that `tuningEnv` keeps each variable's name and type. */
export type TuningName = Extract<
  keyof typeof discoveryEnv,
  `${(typeof TUNING_PREFIXES)[number]}${string}` | (typeof TUNING_NAMES)[number]
>

export type TuningEnv = { readonly [K in TuningName]: (typeof discoveryEnv)[K] }

export const tuningEnv = Object.fromEntries(
  Object.entries(discoveryEnv).filter(([name]) => isTuningVariable(name)),
) as TuningEnv satisfies EnvTable
