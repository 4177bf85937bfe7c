/**
 * Every name and number the mesh shares across binaries: domain, label and annotation keys,
 * API groups, namespaces, identities and well-known ports. One module so that a rename is one edit.
 */

export const MESH_DOMAIN = "mesh.io"
export const SYSTEM_NAMESPACE = "mesh-system"
export const DEFAULT_TRUST_DOMAIN = "cluster.local"
export const DEFAULT_CLUSTER_ID = "Orchestrator"

export const Labels = {
  revision: `${MESH_DOMAIN}/rev`,
  draining: `${MESH_DOMAIN}/draining`,
  network: `topology.${MESH_DOMAIN}/network`,
  cniUninitialized: `cni.${MESH_DOMAIN}/uninitialized`,
  persistentSession: `${MESH_DOMAIN}/persistent-session`,
  persistentSessionHeader: `${MESH_DOMAIN}/persistent-session-header`,
} as const

export const Annotations = {
  sidecarInject: `sidecar.${MESH_DOMAIN}/inject`,
  sidecarStatus: `sidecar.${MESH_DOMAIN}/status`,
  /**
   * On a mesh Gateway: the comma-separated hostnames of the Services it applies to (in the
   * Gateway's namespace), instead of a pod selector; the reference's internal gateway-service.
   */
  gatewayService: `internal.${MESH_DOMAIN}/gateway-service`,
} as const

export const ApiGroups = {
  networking: `networking.${MESH_DOMAIN}`,
  security: `security.${MESH_DOMAIN}`,
  telemetry: `telemetry.${MESH_DOMAIN}`,
  extensions: `extensions.${MESH_DOMAIN}`,
} as const

export const GATEWAY_CONTROLLER_NAME = `${MESH_DOMAIN}/gateway-controller`

/** SPIFFE identity of a workload. */
export const spiffeId = (trustDomain: string, namespace: string, serviceAccount: string): string =>
  `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`

/** How the orchestrator names a service account as a user (token subjects, TokenReview users). */
export const SERVICE_ACCOUNT_USER_PREFIX = "system:serviceaccount:"

/** `system:serviceaccount:<namespace>:<name>` → its parts; undefined for any other user name. */
export const parseServiceAccountUser = (
  user: string,
): { readonly namespace: string; readonly serviceAccount: string } | undefined => {
  if (!user.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined
  const [namespace, serviceAccount, ...rest] = user.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(":")
  return rest.length === 0 && namespace && serviceAccount ? { namespace, serviceAccount } : undefined
}

export const Ports = {
  xdsPlaintext: 15010,
  xdsTls: 15012,
  http: 8080,
  webhooks: 15017,
  monitoring: 15014,
  introspection: 9876,
  agentStatus: 15020,
  proxyReadiness: 15021,
  proxyAdmin: 15000,
  proxyMetrics: 15090,
  dnsProxy: 15053,
  outboundCapture: 15001,
  iptablesProbe: 15002,
  inboundCapture: 15006,
  inboundTunnel: 15008,
} as const
