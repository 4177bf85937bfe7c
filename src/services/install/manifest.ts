/**
 * The whole install manifest of an operator: the base (CRDs) when `components.base` is on, the
 * control plane and its webhooks when `components.pilot` is on (the webhooks alone for the
 * `remote` profile, whose injection is served by an external control plane), the CNI
 * DaemonSet, the gateways. Objects are ordered so that an apply in order succeeds (CRDs and
 * RBAC first, webhooks last) and, within a kind, by namespace and name; output is
 * byte-for-byte deterministic.
 */
import { stringify } from "yaml"
import { isObject, type Obj } from "../orchestrator/json.js"
import { cniObjects } from "./cni.js"
import { controlPlaneObjects } from "./control-plane.js"
import { meshCrds } from "./crds.js"
import { gatewayObjectsOf } from "./gateways.js"
import { componentLabels, installNames } from "./names.js"
import type { ResolvedOperator } from "./resolve.js"
import { injectionWebhookConfiguration, validationWebhookConfiguration } from "./webhooks.js"

const KIND_ORDER = [
  "CustomResourceDefinition",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "ConfigMap",
  "Service",
  "Deployment",
  "DaemonSet",
  "HorizontalPodAutoscaler",
  "PodDisruptionBudget",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
]

const sortKey = (o: Obj): [number, string, string] => {
  const m = isObject(o.metadata) ? o.metadata : {}
  const rank = KIND_ORDER.indexOf(String(o.kind))
  return [rank < 0 ? KIND_ORDER.length : rank, String(m.namespace ?? ""), String(m.name ?? "")]
}

const compare = (a: Obj, b: Obj): number => {
  const [ra, na, ma] = sortKey(a)
  const [rb, nb, mb] = sortKey(b)
  return ra - rb || (na < nb ? -1 : na > nb ? 1 : 0) || (ma < mb ? -1 : ma > mb ? 1 : 0)
}

/** Every object of the install, in apply order. */
export const renderManifest = (op: ResolvedOperator): ReadonlyArray<Obj> => {
  const names = installNames(op)
  const components = op.spec.components
  const remote = op.spec.values?.profile === "remote"
  const objects: Array<Obj> = [
    ...(components?.base?.enabled === true ? meshCrds(componentLabels(names, "Base")) : []),
    ...controlPlaneObjects(op, names),
    ...(components?.pilot?.enabled === true || remote ? [injectionWebhookConfiguration(op, names)] : []),
    ...(components?.pilot?.enabled === true ? [validationWebhookConfiguration(op, names)] : []),
    ...cniObjects(op, names),
    ...gatewayObjectsOf(op, names),
  ]
  return objects.sort(compare)
}

/** Multi-document YAML: one `---`-separated document per object. */
export const manifestYaml = (objects: ReadonlyArray<Obj>): string =>
  objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join("---\n")
