/**
 * The resource types the fake orchestrator API server serves: the built-in kinds the mesh
 * reads and writes, plus custom resources registered by tests or by creating a
 * CustomResourceDefinition. One type is stored once and served at each of its versions.
 */

export interface ResourceType {
  /** "" for the core group. */
  readonly group: string
  /** Served versions, the storage (preferred) version first. */
  readonly versions: ReadonlyArray<string>
  readonly kind: string
  readonly listKind: string
  readonly plural: string
  readonly singular: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly categories: ReadonlyArray<string>
  /** Has a `/status` subresource: the main resource ignores status, `/status` ignores the rest. */
  readonly status: boolean
  /** A compiled-in kind: strategic merge patch is accepted (custom resources refuse it). */
  readonly builtin: boolean
  /** Only `create` (TokenReview): nothing is stored. */
  readonly createOnly: boolean
  /** metadata.generation is kept and bumped on spec changes (custom resources, CRDs, webhooks). */
  readonly generation: boolean
  /** PUT of a missing object creates it (Endpoints). */
  readonly createOnUpdate: boolean
  /** Extra field selectors besides metadata.name and metadata.namespace. */
  readonly fields: Readonly<Record<string, (o: KubeObject) => string>>
}

export interface ObjectMeta {
  name?: string | undefined
  generateName?: string | undefined
  namespace?: string | undefined
  uid?: string | undefined
  resourceVersion?: string | undefined
  generation?: number | undefined
  creationTimestamp?: string | undefined
  deletionTimestamp?: string | undefined
  deletionGracePeriodSeconds?: number | undefined
  labels?: Record<string, string> | undefined
  annotations?: Record<string, string> | undefined
  finalizers?: Array<string> | undefined
  ownerReferences?: Array<unknown> | undefined
  [key: string]: unknown
}

export interface KubeObject {
  apiVersion?: string | undefined
  kind?: string | undefined
  metadata: ObjectMeta
  [key: string]: unknown
}

/** Where a type is stored: `<group>/<plural>`. */
export const storageKey = (t: Pick<ResourceType, "group" | "plural">): string => `${t.group}/${t.plural}`
export const apiVersionOf = (group: string, version: string): string => (group === "" ? version : `${group}/${version}`)

type Spec = Partial<ResourceType> & Pick<ResourceType, "kind" | "plural">

const define = (group: string, versions: ReadonlyArray<string>, spec: Spec): ResourceType => ({
  group,
  versions,
  listKind: `${spec.kind}List`,
  singular: spec.kind.toLowerCase(),
  namespaced: true,
  shortNames: [],
  categories: [],
  status: false,
  builtin: true,
  createOnly: false,
  generation: false,
  createOnUpdate: false,
  fields: {},
  ...spec,
})

const str = (v: unknown): string => (typeof v === "string" ? v : "")
const field =
  (...path: Array<string>) =>
  (o: KubeObject): string => {
    let at: unknown = o
    for (const key of path)
      at = typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined
    return str(at)
  }

export const builtinTypes: ReadonlyArray<ResourceType> = [
  define("", ["v1"], {
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    shortNames: ["ns"],
    status: true,
    fields: { "status.phase": field("status", "phase") },
  }),
  define("", ["v1"], { kind: "Service", plural: "services", shortNames: ["svc"], status: true, categories: ["all"] }),
  define("", ["v1"], {
    kind: "Endpoints",
    listKind: "EndpointsList",
    plural: "endpoints",
    singular: "endpoints",
    shortNames: ["ep"],
    createOnUpdate: true,
  }),
  define("", ["v1"], {
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    status: true,
    categories: ["all"],
    fields: {
      "spec.nodeName": field("spec", "nodeName"),
      "spec.serviceAccountName": field("spec", "serviceAccountName"),
      "status.phase": field("status", "phase"),
      "status.podIP": field("status", "podIP"),
    },
  }),
  define("", ["v1"], {
    kind: "Node",
    plural: "nodes",
    namespaced: false,
    shortNames: ["no"],
    status: true,
    fields: {
      "spec.unschedulable": (o) => String(Boolean((o.spec as { unschedulable?: boolean } | undefined)?.unschedulable)),
    },
  }),
  define("", ["v1"], { kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] }),
  define("", ["v1"], { kind: "Secret", plural: "secrets", fields: { type: field("type") } }),
  define("", ["v1"], { kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] }),
  define("discovery.k8s.io", ["v1"], {
    kind: "EndpointSlice",
    plural: "endpointslices",
    fields: { addressType: field("addressType") },
  }),
  define("coordination.k8s.io", ["v1"], { kind: "Lease", plural: "leases" }),
  define("admissionregistration.k8s.io", ["v1"], {
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
    generation: true,
  }),
  define("admissionregistration.k8s.io", ["v1"], {
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
    generation: true,
  }),
  define("apiextensions.k8s.io", ["v1"], {
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
    shortNames: ["crd", "crds"],
    status: true,
    generation: true,
  }),
  // Workloads and RBAC as the mesh's installer writes them; workloads track generation so that
  // readiness checks can compare status.observedGeneration.
  define("apps", ["v1"], {
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    status: true,
    generation: true,
    categories: ["all"],
  }),
  define("apps", ["v1"], {
    kind: "DaemonSet",
    plural: "daemonsets",
    shortNames: ["ds"],
    status: true,
    generation: true,
    categories: ["all"],
  }),
  define("rbac.authorization.k8s.io", ["v1"], { kind: "ClusterRole", plural: "clusterroles", namespaced: false }),
  define("rbac.authorization.k8s.io", ["v1"], {
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  }),
  define("rbac.authorization.k8s.io", ["v1"], { kind: "Role", plural: "roles" }),
  define("rbac.authorization.k8s.io", ["v1"], { kind: "RoleBinding", plural: "rolebindings" }),
  define("autoscaling", ["v2"], {
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    shortNames: ["hpa"],
    status: true,
    categories: ["all"],
  }),
  define("policy", ["v1"], {
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    shortNames: ["pdb"],
    status: true,
    generation: true,
  }),
  define("authentication.k8s.io", ["v1"], {
    kind: "TokenReview",
    plural: "tokenreviews",
    namespaced: false,
    createOnly: true,
  }),
]

/** A custom resource as tests register it (or as a CustomResourceDefinition declares it). */
export interface CustomResource {
  readonly group: string
  readonly versions: ReadonlyArray<string>
  readonly kind: string
  readonly plural: string
  readonly singular?: string
  readonly namespaced?: boolean
  readonly shortNames?: ReadonlyArray<string>
  readonly categories?: ReadonlyArray<string>
  /** Default true, as CRDs of the mesh declare `subresources.status`. */
  readonly status?: boolean
}

export const customType = (c: CustomResource): ResourceType =>
  define(c.group, c.versions, {
    kind: c.kind,
    plural: c.plural,
    singular: c.singular ?? c.kind.toLowerCase(),
    namespaced: c.namespaced ?? true,
    shortNames: c.shortNames ?? [],
    categories: c.categories ?? [],
    status: c.status ?? true,
    builtin: false,
    generation: true,
  })

interface CrdVersion {
  name: string
  served?: boolean
  storage?: boolean
  subresources?: { status?: unknown }
}

/** The type a CustomResourceDefinition object declares, with its storage version first. */
export const typeOfCrd = (crd: KubeObject): ResourceType => {
  const spec = (crd.spec ?? {}) as {
    group: string
    scope?: string
    names: { kind: string; plural: string; singular?: string; shortNames?: Array<string>; categories?: Array<string> }
    versions?: Array<CrdVersion>
  }
  const versions = (spec.versions ?? []).filter((v) => v.served !== false)
  versions.sort((a, b) => Number(b.storage === true) - Number(a.storage === true))
  return customType({
    group: spec.group,
    versions: versions.map((v) => v.name),
    kind: spec.names.kind,
    plural: spec.names.plural,
    ...(spec.names.singular === undefined ? {} : { singular: spec.names.singular }),
    namespaced: spec.scope !== "Cluster",
    shortNames: spec.names.shortNames ?? [],
    categories: spec.names.categories ?? [],
    status: versions.some((v) => v.subresources?.status !== undefined),
  })
}

/** All types by storage key, looked up by path segments or kind. */
export class Registry {
  private readonly types = new Map<string, ResourceType>()

  constructor(initial: ReadonlyArray<ResourceType> = builtinTypes) {
    for (const t of initial) this.add(t)
  }

  add(t: ResourceType): void {
    this.types.set(storageKey(t), t)
  }

  remove(group: string, plural: string): void {
    this.types.delete(storageKey({ group, plural }))
  }

  all(): ReadonlyArray<ResourceType> {
    return [...this.types.values()]
  }

  /** The type served at `/apis/<group>/<version>/<plural>`, if that version is served. */
  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    const t = this.types.get(storageKey({ group, plural }))
    return t?.versions.includes(version) ? t : undefined
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion]
    return this.all().find((t) => t.group === group && t.kind === kind && t.versions.includes(version!))
  }

  /** Group → versions in order of preference, for discovery. */
  groups(): Map<string, Array<string>> {
    const out = new Map<string, Array<string>>()
    for (const t of this.types.values()) {
      const versions = out.get(t.group) ?? []
      for (const v of t.versions) if (!versions.includes(v)) versions.push(v)
      out.set(t.group, versions)
    }
    return out
  }
}
