/**
 * Names and labels of what the install manifest creates. A revision suffixes the names of its
 * control plane (`meshd-canary`) and labels everything `mesh.io/rev: <revision>` so revisions
 * install side by side; the default revision keeps the bare names.
 */
import { Labels } from "../constants.js"
import { injectorConfigMapName } from "../injection/webhook-config.js"
import { meshConfigMapName } from "../mesh-config/configmap.js"
import type { ResolvedOperator } from "./resolve.js"

/** The control plane's service (meshctl's default xDS address is `meshd.<namespace>.svc:15012`). */
export const DISCOVERY_NAME = "meshd"
export const CNI_NAME = "mesh-cni-node"
export const CNI_SERVICE_ACCOUNT = "mesh-cni"
export const INJECTION_WEBHOOK_NAME = "mesh-sidecar-injector"
export const VALIDATION_WEBHOOK_NAME = "mesh-validator"
export const OPERATOR_LABEL = `install.operator.mesh.io/owning-resource`
export const COMPONENT_LABEL = "operator.mesh.io/component"
/** The namespace of the operator resource that owns an installed object (with OPERATOR_LABEL). */
export const OPERATOR_NAMESPACE_LABEL = `install.operator.mesh.io/owning-resource-namespace`
/** The field manager of meshctl's server-side applies. */
export const FIELD_MANAGER = "meshctl"

/** The name of the operator resource an install stands for: one per revision. */
export const owningResourceName = (revision: string): string =>
  revision === "" ? "installed-state" : `installed-state-${revision}`

export interface InstallNames {
  readonly revision: string
  /** `mesh.io/rev` value: the revision, `default` for the default one. */
  readonly revisionLabel: string
  readonly suffix: string
  readonly discovery: string
  readonly meshConfigMap: string
  readonly injectorConfigMap: string
  readonly injectionWebhook: string
  readonly validationWebhook: string
  readonly clusterRole: string
  readonly role: string
}

export const installNames = (op: Pick<ResolvedOperator, "revision" | "namespace">): InstallNames => {
  const suffix = op.revision === "" ? "" : `-${op.revision}`
  return {
    revision: op.revision,
    revisionLabel: op.revision === "" ? "default" : op.revision,
    suffix,
    discovery: `${DISCOVERY_NAME}${suffix}`,
    meshConfigMap: meshConfigMapName(op.revision),
    injectorConfigMap: injectorConfigMapName(op.revision),
    injectionWebhook: `${INJECTION_WEBHOOK_NAME}${suffix}`,
    validationWebhook: `${VALIDATION_WEBHOOK_NAME}${suffix}-${op.namespace}`,
    clusterRole: `${DISCOVERY_NAME}-clusterrole${suffix}-${op.namespace}`,
    role: `${DISCOVERY_NAME}${suffix}`,
  }
}

/** Labels every object of a component carries. */
export const componentLabels = (names: InstallNames, component: string): Record<string, string> => ({
  [Labels.revision]: names.revisionLabel,
  [COMPONENT_LABEL]: component,
})
