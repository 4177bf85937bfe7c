/**
 * What the backend policies (BackendTLSPolicy, XBackendTrafficPolicy) share, as the reference
 * has it:
 * - a target reference resolves to a Service or ServiceEntry of the policy's namespace (other
 *   kinds the mesh knows — ConfigMap, Secret — resolve but are unsupported targets; unknown kinds
 *   are unsupported), with the reference's error texts;
 * - the ignore annotation takes a policy out of the mesh's hands, and says so in its status;
 * - status is a list of ancestors (each ancestorRef with its controller and conditions), at most
 *   16, one per target for the mesh and one per Gateway whose routes reach a target;
 * - which Gateways reach a backend: every Gateway parentRef of a route with that backend.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { BackendRef, ParentReference } from "../config-model/schemas/gateway-api/types.js"
import type { ServiceIndex } from "./backends.js"
import { type Condition, type ConditionContext, condition } from "./conditions.js"
import { WAYPOINT_CONTROLLER_NAME } from "./deployment/names.js"
import {
  byAge,
  compareStrings,
  GATEWAY_API_GROUP,
  type GatewayApiInput,
  MESH_NETWORKING_GROUP,
  type ResourceStatus,
  serviceHost,
} from "./model.js"
import { normaliseGroup } from "./references.js"
import type { TlsObjects } from "./tls-objects.js"

/** The controller name of the mesh's own (Service, ServiceEntry) ancestors: the reference's `istio.io/mesh-controller`. */
export const MESH_CONTROLLER_NAME = WAYPOINT_CONTROLLER_NAME

/** At most this many ancestors in a policy's status (the Gateway API's limit). */
export const MAX_ANCESTORS = 16

export const IGNORE_POLICY_ANNOTATIONS = ["mesh.io/ignore-policy-attachment", "istio.io/ignore-policy-attachment"]
export const POLICY_IGNORED_REASON = "IgnoredByMesh"
export const POLICY_IGNORED_MESSAGE = `Ignored by the mesh due to annotation ${IGNORE_POLICY_ANNOTATIONS[0]}=true`

/** Whether a policy carries the ignore annotation (`true`, any case). */
export const policyIgnored = (policy: ConfigResource): boolean =>
  IGNORE_POLICY_ANNOTATIONS.some((key) => policy.meta.annotations[key]?.toLowerCase() === "true")

export type TargetKind = "Service" | "ServiceEntry"

/** A backend a policy applies to, by kind and `namespace/name`. */
export interface BackendTarget {
  readonly kind: TargetKind
  readonly namespace: string
  readonly name: string
}

export const targetKey = (t: BackendTarget): string => `${t.kind}/${t.namespace}/${t.name}`

/** A resolved target: its hosts and its named ports. */
export interface ResolvedTarget {
  readonly target: BackendTarget
  readonly hosts: ReadonlyArray<string>
  readonly ports: ReadonlyArray<{ readonly name: string; readonly number: number }>
}

/** The kinds a policy reference may name and that exist as objects the mesh reads (the reference's set). */
const knownKind = (group: string, kind: string): string | undefined => {
  const g = normaliseGroup(group)
  if (g === "" && ["Service", "ConfigMap", "Secret"].includes(kind)) return kind
  if (g === MESH_NETWORKING_GROUP && kind === "ServiceEntry") return kind
  return undefined
}

/** The registry's ServiceEntry services of `namespace/name` (one per host). */
const entryServices = (index: ServiceIndex, namespace: string, name: string) =>
  (index.serviceEntryHosts.get(`${namespace}/${name}`) ?? []).flatMap(
    (host) => index.byHost.get(host)?.filter((s) => s.source === `ServiceEntry/${namespace}/${name}`) ?? [],
  )

/** A local object reference resolved as the reference's ReferenceSet does: the object's kind, or the error. */
export const resolveLocalRef = (
  ref: { readonly group: string; readonly kind: string; readonly name: string },
  namespace: string,
  services: ServiceIndex,
  objects: TlsObjects | undefined,
  domainSuffix: string,
): { readonly kind: string; readonly target?: ResolvedTarget } | { readonly error: string } => {
  const kind = knownKind(ref.group, ref.kind)
  if (kind === undefined) return { error: `unsupported kind ${ref.kind}` }
  const notFound = { error: `reference ${namespace}/${ref.name} (of kind ${ref.kind}) not found` }
  const key = `${namespace}/${ref.name}`
  switch (kind) {
    case "Service": {
      const host = serviceHost(ref.name, namespace, domainSuffix)
      const found = services.byHost.get(host)?.find((s) => s.namespace === namespace)
      if (found === undefined) return notFound
      return {
        kind,
        target: {
          target: { kind: "Service", namespace, name: ref.name },
          hosts: [host],
          ports: found.ports.map((p) => ({ name: p.name, number: p.port })),
        },
      }
    }
    case "ServiceEntry": {
      const list = entryServices(services, namespace, ref.name)
      if (list.length === 0) return notFound
      const ports = new Map<string, number>()
      for (const s of list) for (const p of s.ports) if (!ports.has(p.name)) ports.set(p.name, p.port)
      return {
        kind,
        target: {
          target: { kind: "ServiceEntry", namespace, name: ref.name },
          hosts: services.serviceEntryHosts.get(key) ?? [],
          ports: [...ports].map(([name, number]) => ({ name, number })),
        },
      }
    }
    case "ConfigMap":
      // Unknown objects (not yet read): taken as present, as the listeners' references are.
      return objects === undefined || objects.configMaps.has(key) ? { kind } : notFound
    default:
      return objects === undefined || objects.secrets.has(key) ? { kind } : notFound
  }
}

/** One condition of a policy, failed by the last problem set (the reference's shared condition). */
export interface PolicyCondition {
  readonly type: string
  readonly reason: string
  message: string
  problem?: { readonly reason: string; readonly message: string }
}

export const policyConditions = (ctx: ConditionContext, conds: ReadonlyArray<PolicyCondition>): Array<Condition> =>
  conds.map((c) =>
    c.problem === undefined
      ? condition(ctx, c.type, true, c.reason, c.message)
      : condition(ctx, c.type, false, c.problem.reason, c.problem.message),
  )

export interface AncestorRef {
  readonly group: string
  readonly kind: string
  readonly name: string
  readonly namespace?: string
  readonly sectionName?: string
}

export interface AncestorStatus {
  readonly ancestorRef: AncestorRef
  readonly controllerName: string
  readonly conditions: ReadonlyArray<Condition>
}

/** The ancestorRef of a target reference as written (group, kind, name, sectionName). */
export const targetAncestor = (ref: {
  readonly group: string
  readonly kind: string
  readonly name: string
  readonly sectionName?: string | undefined
}): AncestorRef => ({
  group: ref.group,
  kind: ref.kind,
  name: ref.name,
  ...(ref.sectionName !== undefined && ref.sectionName !== "" ? { sectionName: ref.sectionName } : {}),
})

/** A Gateway's ancestorRef (the reference leaves its namespace out). */
export const gatewayAncestor = (gatewayKey: string): AncestorRef => ({
  group: GATEWAY_API_GROUP,
  kind: "Gateway",
  name: gatewayKey.slice(gatewayKey.indexOf("/") + 1),
})

/** The status of an ignored policy: Accepted False on each target. */
export const ignoredAncestors = (
  ctx: ConditionContext,
  refs: ReadonlyArray<Parameters<typeof targetAncestor>[0]>,
): ReadonlyArray<AncestorStatus> =>
  refs.slice(0, MAX_ANCESTORS).map((ref) => ({
    ancestorRef: targetAncestor(ref),
    controllerName: MESH_CONTROLLER_NAME,
    conditions: [condition(ctx, "Accepted", false, POLICY_IGNORED_REASON, POLICY_IGNORED_MESSAGE)],
  }))

type RouteLike = ConfigResource<{
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly rules?: ReadonlyArray<{ readonly backendRefs?: ReadonlyArray<BackendRef> }>
}>

/**
 * `targetKey` → the Gateways (`namespace/name`) of the routes whose backends name that target:
 * a policy on a backend reports on every Gateway that sends it traffic.
 */
export const gatewaysByBackend = (input: GatewayApiInput): ReadonlyMap<string, ReadonlySet<string>> => {
  const out = new Map<string, Set<string>>()
  const routes: ReadonlyArray<RouteLike> = [
    ...input.httpRoutes,
    ...input.grpcRoutes,
    ...input.tcpRoutes,
    ...input.tlsRoutes,
  ] as ReadonlyArray<RouteLike>
  for (const route of routes) {
    const ns = route.meta.namespace
    const gateways = (route.spec.parentRefs ?? [])
      .filter(
        (p) =>
          normaliseGroup(p.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP && (p.kind ?? "Gateway") === "Gateway",
      )
      .map((p) => `${p.namespace ?? ns}/${p.name}`)
    if (gateways.length === 0) continue
    for (const rule of route.spec.rules ?? [])
      for (const ref of rule.backendRefs ?? []) {
        const kind = knownKind(ref.group ?? "", ref.kind ?? "Service")
        if (kind !== "Service" && kind !== "ServiceEntry") continue
        const key = targetKey({ kind, namespace: ref.namespace ?? ns, name: ref.name })
        const set = out.get(key) ?? new Set<string>()
        for (const g of gateways) set.add(g)
        out.set(key, set)
      }
  }
  return out
}

/**
 * `picked` (the objects the Gateways reference) with the ConfigMaps and Secrets the
 * BackendTLSPolicies name as CA certificates added from `all` (absent ones stay absent).
 */
export const withPolicyTlsObjects = (
  picked: TlsObjects,
  policies: ReadonlyArray<
    ConfigResource<{
      readonly validation: {
        readonly caCertificateRefs?: ReadonlyArray<{ readonly kind: string; readonly name: string }>
      }
    }>
  >,
  all: TlsObjects,
): TlsObjects => {
  if (policies.length === 0) return picked
  const configMaps = new Map(picked.configMaps)
  const secrets = new Map(picked.secrets)
  for (const policy of policies)
    for (const ref of policy.spec.validation.caCertificateRefs ?? []) {
      const key = `${policy.meta.namespace}/${ref.name}`
      const configMap = all.configMaps.get(key)
      if (ref.kind === "ConfigMap" && configMap !== undefined) configMaps.set(key, configMap)
      const secret = all.secrets.get(key)
      if (ref.kind === "Secret" && secret !== undefined) secrets.set(key, secret)
    }
  const sorted = <V>(m: ReadonlyMap<string, V>) => new Map([...m].sort(([a], [b]) => compareStrings(a, b)))
  return { secrets: sorted(secrets), configMaps: sorted(configMaps) }
}

/**
 * The status of each policy of `kind`, oldest first: an ignored one says so on each target; any
 * other's ancestors are what `ancestorsOf` finds converting it (at most 16 kept).
 */
export const policyStatuses = <S extends { readonly targetRefs: ReadonlyArray<Parameters<typeof targetAncestor>[0]> }>(
  kind: string,
  all: ReadonlyArray<ConfigResource<S>>,
  now: string,
  ancestorsOf: (policy: ConfigResource<S>, ctx: ConditionContext) => ReadonlyArray<AncestorStatus>,
): ReadonlyArray<ResourceStatus> =>
  [...all].sort(byAge).map((policy) => {
    const ctx = { generation: policy.meta.generation, now }
    const ancestors = policyIgnored(policy) ? ignoredAncestors(ctx, policy.spec.targetRefs) : ancestorsOf(policy, ctx)
    return {
      kind,
      namespace: policy.meta.namespace,
      name: policy.meta.name,
      ...(policy.meta.generation !== undefined ? { generation: policy.meta.generation } : {}),
      status: { ancestors: ancestors.slice(0, MAX_ANCESTORS) },
    }
  })
