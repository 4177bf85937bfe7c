/**
 * The node identity and metadata the agent presents to the control plane (for the proxy it
 * bootstraps, the proxyless gRPC bootstrap and its own xDS proxy): id
 * `<type>~<ip>~<pod>.<namespace>~<domain>` and metadata from the pod's environment
 * (`MESH_META_*` strings, `MESH_METAJSON_*` JSON values), namespace, IPs, labels.
 */

export interface NodeInputs {
  readonly type: "sidecar" | "router"
  readonly podName: string
  readonly namespace: string
  readonly instanceIps: ReadonlyArray<string>
  /** `--domain`; empty means `<namespace>.svc.cluster.local`. */
  readonly domain: string
  readonly serviceAccount: string
  readonly clusterId: string
  readonly meshVersion: string
  /** The process environment (MESH_META_* / MESH_METAJSON_* are read from it). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Extra metadata that wins over the environment (e.g. GENERATOR). */
  readonly extra?: Readonly<Record<string, unknown>>
}

export interface NodeIdentity {
  readonly id: string
  readonly metadata: Readonly<Record<string, unknown>>
  readonly locality?: { readonly region?: string; readonly zone?: string; readonly sub_zone?: string }
}

export const META_PREFIX = "MESH_META_"
export const METAJSON_PREFIX = "MESH_METAJSON_"

export const nodeDomain = (inputs: Pick<NodeInputs, "domain" | "namespace">): string =>
  inputs.domain !== "" ? inputs.domain : `${inputs.namespace}.svc.cluster.local`

export const nodeId = (inputs: Pick<NodeInputs, "type" | "instanceIps" | "podName" | "namespace" | "domain">): string =>
  `${inputs.type}~${inputs.instanceIps[0] ?? "127.0.0.1"}~${inputs.podName}.${inputs.namespace}~${nodeDomain(inputs)}`

/** Metadata from the environment; a JSON value that does not parse is skipped (and reported). */
export const envMetadata = (
  env: Readonly<Record<string, string | undefined>>,
): { metadata: Record<string, unknown>; problems: ReadonlyArray<string> } => {
  const metadata: Record<string, unknown> = {}
  const problems: Array<string> = []
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (value === undefined) continue
    if (name.startsWith(METAJSON_PREFIX)) {
      const key = name.slice(METAJSON_PREFIX.length)
      try {
        metadata[key] = JSON.parse(value)
      } catch (e) {
        problems.push(`${name}: not JSON: ${(e as Error).message}`)
      }
    } else if (name.startsWith(META_PREFIX)) {
      metadata[name.slice(META_PREFIX.length)] = value
    }
  }
  return { metadata, problems }
}

export const buildNode = (inputs: NodeInputs): { node: NodeIdentity; problems: ReadonlyArray<string> } => {
  const { metadata, problems } = envMetadata(inputs.env)
  const base: Record<string, unknown> = {
    NAMESPACE: inputs.namespace,
    NAME: inputs.podName,
    INSTANCE_IPS: inputs.instanceIps.join(","),
    SERVICE_ACCOUNT: inputs.serviceAccount,
    CLUSTER_ID: inputs.clusterId,
    MESH_VERSION: inputs.meshVersion,
  }
  const labels = metadata.LABELS
  const merged: Record<string, unknown> = { ...base, ...metadata, ...(inputs.extra ?? {}) }
  if (labels === undefined || typeof labels !== "object" || labels === null) merged.LABELS = {}
  for (const [k, v] of Object.entries(merged)) if (v === "" || v === undefined) delete merged[k]
  const region = typeof metadata.REGION === "string" ? metadata.REGION : undefined
  const zone = typeof metadata.ZONE === "string" ? metadata.ZONE : undefined
  return {
    node: {
      id: nodeId(inputs),
      metadata: merged,
      ...(region !== undefined || zone !== undefined
        ? { locality: { ...(region ? { region } : {}), ...(zone ? { zone } : {}) } }
        : {}),
    },
    problems,
  }
}
