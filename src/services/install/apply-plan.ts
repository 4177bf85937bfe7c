/**
 * What `meshctl install` writes and what it removes. Every rendered object is labelled with the
 * operator resource that owns it (one per revision: `installed-state[-<revision>]` in the mesh
 * namespace) so that a later install of the same revision can prune what it no longer renders,
 * and uninstall can find everything an install wrote without re-rendering it.
 */
import { Labels } from "../constants.js"
import { asObject, asStringMap, type Obj } from "../orchestrator/json.js"
import { COMPONENT_LABEL, installNames, OPERATOR_LABEL, OPERATOR_NAMESPACE_LABEL, owningResourceName } from "./names.js"
import type { ResolvedOperator } from "./resolve.js"

export interface InstallKind {
  readonly apiVersion: string
  readonly kind: string
  readonly namespaced: boolean
}

/** Every kind an install writes, in apply order (deletion runs it backwards). */
export const INSTALL_KINDS: ReadonlyArray<InstallKind> = [
  { apiVersion: "v1", kind: "Namespace", namespaced: false },
  { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", namespaced: false },
  { apiVersion: "v1", kind: "ServiceAccount", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", namespaced: false },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", namespaced: false },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", namespaced: true },
  { apiVersion: "v1", kind: "Service", namespaced: true },
  { apiVersion: "apps/v1", kind: "Deployment", namespaced: true },
  { apiVersion: "apps/v1", kind: "DaemonSet", namespaced: true },
  { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", namespaced: true },
  { apiVersion: "policy/v1", kind: "PodDisruptionBudget", namespaced: true },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration", namespaced: false },
  { apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingWebhookConfiguration", namespaced: false },
]

/** An object's identity; the group (not the version) names the kind, so a version bump is the same object. */
export interface ObjectRef {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace: string | undefined
  readonly name: string
}

const groupOf = (apiVersion: string): string => (apiVersion.includes("/") ? apiVersion.split("/")[0]! : "")

export const refOf = (o: Obj): ObjectRef => {
  const metadata = asObject(o.metadata)
  const namespace = typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : undefined
  return { apiVersion: String(o.apiVersion ?? ""), kind: String(o.kind ?? ""), namespace, name: String(metadata.name) }
}

export const refKey = (ref: ObjectRef): string =>
  `${groupOf(ref.apiVersion)}/${ref.kind}/${ref.namespace ?? ""}/${ref.name}`

/** `Deployment mesh-system/meshd`, `ClusterRole meshd-clusterrole-mesh-system`. */
export const describeRef = (ref: ObjectRef): string =>
  `${ref.kind} ${ref.namespace === undefined ? "" : `${ref.namespace}/`}${ref.name}`

const kindRank = (o: Obj): number => {
  const i = INSTALL_KINDS.findIndex((k) => k.kind === o.kind && groupOf(k.apiVersion) === groupOf(String(o.apiVersion)))
  return i < 0 ? INSTALL_KINDS.length : i
}

/** Labels that tie an object to the install of one revision. */
export const ownerLabels = (op: Pick<ResolvedOperator, "revision" | "namespace">): Record<string, string> => ({
  [OPERATOR_LABEL]: owningResourceName(op.revision),
  [OPERATOR_NAMESPACE_LABEL]: op.namespace,
  [Labels.revision]: installNames(op).revisionLabel,
})

/** Label selector of what the install of one revision wrote. */
export const revisionSelector = (op: Pick<ResolvedOperator, "revision" | "namespace">): string =>
  Object.entries(ownerLabels(op))
    .map(([k, v]) => `${k}=${v}`)
    .join(",")

/** Label selector of what any install wrote (every revision). */
export const anyInstallSelector = OPERATOR_LABEL

export interface InstallPlan {
  readonly namespace: string
  /** The mesh namespace, created (with the ownership labels) only when it does not exist yet. */
  readonly namespaceObject: Obj
  /** CustomResourceDefinitions, applied first and waited for before the rest. */
  readonly crds: ReadonlyArray<Obj>
  /** Everything else, in apply order. */
  readonly objects: ReadonlyArray<Obj>
  /** Components present, in COMPONENT_ORDER (`Base`, `Pilot`, ...). */
  readonly components: ReadonlyArray<string>
}

/** The order components are reported in: the base first, gateways last. */
export const COMPONENT_ORDER = ["Base", "Pilot", "Cni", "Ztunnel", "IngressGateways", "EgressGateways"]
const componentRank = (c: string): number => {
  const i = COMPONENT_ORDER.indexOf(c)
  return i < 0 ? COMPONENT_ORDER.length : i
}

export const componentOf = (o: Obj): string => asStringMap(asObject(o.metadata).labels)[COMPONENT_LABEL] ?? "Base"

/** The rendered objects (already in apply order) with the ownership labels, split for applying. */
export const installPlan = (op: ResolvedOperator, rendered: ReadonlyArray<Obj>): InstallPlan => {
  const owner = ownerLabels(op)
  const labelled = rendered.map((o): Obj => {
    const metadata = asObject(o.metadata)
    return { ...o, metadata: { ...metadata, labels: { ...asStringMap(metadata.labels), ...owner } } }
  })
  const components = [...new Set(labelled.map(componentOf))].sort((a, b) => componentRank(a) - componentRank(b))
  return {
    namespace: op.namespace,
    namespaceObject: { apiVersion: "v1", kind: "Namespace", metadata: { name: op.namespace, labels: owner } },
    crds: labelled.filter((o) => o.kind === "CustomResourceDefinition"),
    objects: labelled.filter((o) => o.kind !== "CustomResourceDefinition"),
    components,
  }
}

/** Objects in the order they are safely deleted: webhooks first, CRDs last. */
export const deletionOrder = <A extends Obj>(objects: ReadonlyArray<A>): ReadonlyArray<A> =>
  [...objects].sort((a, b) => kindRank(b) - kindRank(a))

/** Deleting these deletes everything in them (every custom resource, every namespaced object). */
const shared = (o: Obj): boolean => o.kind === "CustomResourceDefinition" || o.kind === "Namespace"

/**
 * What an install no longer renders among the objects the previous install of the same
 * revision wrote (`owned`, listed with `revisionSelector`). CustomResourceDefinitions and the
 * namespace are never pruned: deleting them deletes what users created in them.
 */
export const pruneSelection = (owned: ReadonlyArray<Obj>, plan: InstallPlan): ReadonlyArray<Obj> => {
  const rendered = new Set([...plan.crds, ...plan.objects].map((o) => refKey(refOf(o))))
  return deletionOrder(owned.filter((o) => !shared(o) && !rendered.has(refKey(refOf(o)))))
}

/**
 * What uninstall removes among the objects found: all of them with `--purge` (found with
 * `anyInstallSelector`), otherwise one revision's objects (found with `revisionSelector`)
 * except the CustomResourceDefinitions and the namespace, which other revisions share (the
 * namespace is removed only when an install created it).
 */
export const uninstallSelection = (found: ReadonlyArray<Obj>, purge: boolean): ReadonlyArray<Obj> =>
  deletionOrder(purge ? found : found.filter((o) => !shared(o)))
