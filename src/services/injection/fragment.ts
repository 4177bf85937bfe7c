/**
 * What one template contributes to a pod, and what every template is given. Templates are pure
 * functions from the context to a fragment; the assembler merges fragments in the selected
 * order (an earlier template's container or volume of the same name is kept).
 */
import type { Obj } from "../orchestrator/json.js"
import type { EnvVar } from "./env-var.js"
import type { WorkloadOwner } from "./owner.js"
import type { PodSettings } from "./pod-settings.js"

export interface TemplateContext {
  readonly settings: PodSettings
  /** The pod's containers other than a user-declared `mesh-proxy` (which customises ours). */
  readonly appContainers: ReadonlyArray<Obj>
  /** All the pod's containers, a declared `mesh-proxy` included (a gateway declares its ports there). */
  readonly podContainers: ReadonlyArray<Obj>
  readonly owner: WorkloadOwner
  readonly namespace: string
  readonly revision: string
  readonly meshConfig: Obj
  /** The injector's `COMPLIANCE_POLICY` ("" for none), handed to the agent. */
  readonly compliancePolicy: string
}

export interface Fragment {
  readonly initContainers: ReadonlyArray<Obj>
  /** The agent container (at most one, `mesh-proxy`). */
  readonly containers: ReadonlyArray<Obj>
  readonly volumes: ReadonlyArray<Obj>
  readonly imagePullSecrets: ReadonlyArray<string>
  /** Set on the pod (each template has already kept any value the pod had). */
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  /** Added to every application container (proxyless gRPC bootstrap). */
  readonly appEnv: ReadonlyArray<EnvVar>
  readonly appVolumeMounts: ReadonlyArray<Obj>
  /** Application probes stay as they are (proxyless gRPC: no agent between kubelet and app). */
  readonly keepAppProbes: boolean
  /** Fields set over the pod's own `spec.securityContext` (the gateway's unprivileged-port sysctl). */
  readonly podSecurityContext: Readonly<Record<string, unknown>>
}

export const emptyFragment: Fragment = {
  initContainers: [],
  containers: [],
  volumes: [],
  imagePullSecrets: [],
  labels: {},
  annotations: {},
  appEnv: [],
  appVolumeMounts: [],
  keepAppProbes: false,
  podSecurityContext: {},
}

export type Template = (context: TemplateContext) => Fragment
