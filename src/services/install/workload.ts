/**
 * Pieces shared by every workload the manifest renders: object metadata, the pod settings a
 * component's `k8s` block carries (node selector, tolerations, affinity, annotations,
 * security context), its env merged over the built-in one, and the HPA / PDB that go with a
 * Deployment.
 */
import type { Obj } from "../orchestrator/json.js"
import type { K8sSettings } from "./operator.js"

export const meta = (name: string, namespace: string | undefined, labels: Readonly<Record<string, string>>): Obj => ({
  name,
  ...(namespace !== undefined ? { namespace } : {}),
  labels: { ...labels },
})

export interface EnvEntry {
  readonly name: string
  readonly value?: string | undefined
  readonly valueFrom?: { readonly [key: string]: unknown } | undefined
}

/** The built-in env with the component's entries laid over it (same name replaces, new ones appended). */
export const mergeEnv = (
  base: ReadonlyArray<EnvEntry>,
  extra: ReadonlyArray<EnvEntry> | undefined,
): Array<EnvEntry> => {
  const out = base.map((e) => ({ ...e }))
  for (const entry of extra ?? []) {
    const at = out.findIndex((e) => e.name === entry.name)
    const copy = { ...entry }
    if (at >= 0) out[at] = copy
    else out.push(copy)
  }
  return out
}

export const fieldEnv = (name: string, fieldPath: string): EnvEntry => ({
  name,
  valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } },
})

/** Pod-level settings from `k8s`. */
export const podSettings = (k8s: K8sSettings | undefined): Obj => ({
  ...(k8s?.nodeSelector !== undefined ? { nodeSelector: { ...k8s.nodeSelector } } : {}),
  ...(k8s?.tolerations !== undefined ? { tolerations: structuredClone(k8s.tolerations) } : {}),
  ...(k8s?.affinity !== undefined ? { affinity: structuredClone(k8s.affinity) } : {}),
  ...(k8s?.priorityClassName !== undefined ? { priorityClassName: k8s.priorityClassName } : {}),
  ...(k8s?.securityContext !== undefined ? { securityContext: structuredClone(k8s.securityContext) } : {}),
})

export interface ScalingDefaults {
  readonly enabled: boolean
  readonly min: number
  readonly max: number
  readonly cpuUtilization: number
}

/** The HPA of a Deployment: when autoscaling is on, or `k8s.hpaSpec` is given. */
export const hpaFor = (
  deployment: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  defaults: ScalingDefaults,
  k8s: K8sSettings | undefined,
): Obj | undefined => {
  const hpa = k8s?.hpaSpec
  if (!defaults.enabled && hpa === undefined) return undefined
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: meta(deployment, namespace, labels),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: deployment },
      minReplicas: hpa?.minReplicas ?? defaults.min,
      maxReplicas: hpa?.maxReplicas ?? defaults.max,
      metrics: structuredClone(hpa?.metrics) ?? [
        {
          type: "Resource",
          resource: { name: "cpu", target: { type: "Utilization", averageUtilization: defaults.cpuUtilization } },
        },
      ],
      ...(hpa?.behavior !== undefined ? { behavior: structuredClone(hpa.behavior) } : {}),
    },
  }
}

/** The PDB keeping one pod of a Deployment up during voluntary disruptions. */
export const pdbFor = (
  name: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  selector: Readonly<Record<string, string>>,
  k8s: K8sSettings | undefined,
): Obj => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: meta(name, namespace, labels),
  spec: {
    minAvailable: 1,
    ...structuredClone(k8s?.podDisruptionBudget ?? {}),
    selector: { matchLabels: { ...selector } },
  },
})

/** A Deployment's replicas: fixed only without an HPA (else the HPA owns the count). */
export const replicasOf = (hpa: Obj | undefined, k8s: K8sSettings | undefined, fallback: number): Obj =>
  k8s?.replicaCount !== undefined ? { replicas: k8s.replicaCount } : hpa === undefined ? { replicas: fallback } : {}

export const imageOf = (hub: string, image: string, tag: string): string =>
  image.includes("/") || image.includes(":") ? image : `${hub}/${image}:${tag}`
