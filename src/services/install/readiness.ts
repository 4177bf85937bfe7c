/**
 * When an installed workload counts as ready: its controller has seen the latest spec
 * (`status.observedGeneration` ≥ `metadata.generation`) and every replica is updated, ready and
 * available (Deployment), or every scheduled pod is ready (DaemonSet). Other kinds are ready
 * once they exist.
 */
import { asObject, type Obj } from "../orchestrator/json.js"

const num = (v: unknown): number => (typeof v === "number" ? v : 0)

/** Why `o` is not ready yet, or undefined when it is. */
export const notReadyReason = (o: Obj): string | undefined => {
  if (o.kind !== "Deployment" && o.kind !== "DaemonSet") return undefined
  const status = asObject(o.status)
  const generation = num(asObject(o.metadata).generation)
  if (num(status.observedGeneration) < generation)
    return `generation ${generation} not yet observed (observed ${num(status.observedGeneration)})`
  if (o.kind === "DaemonSet") {
    const desired = num(status.desiredNumberScheduled)
    const ready = num(status.numberReady)
    return ready >= desired && num(status.updatedNumberScheduled) >= desired
      ? undefined
      : `${ready}/${desired} pods ready`
  }
  const spec = asObject(o.spec)
  const replicas = typeof spec.replicas === "number" ? spec.replicas : 1
  const short = (
    [
      ["updated", status.updatedReplicas],
      ["ready", status.readyReplicas],
      ["available", status.availableReplicas],
    ] as const
  ).find(([, n]) => num(n) < replicas)
  return short === undefined ? undefined : `${num(short[1])}/${replicas} replicas ${short[0]}`
}

/** Kinds whose readiness is waited for. */
export const hasReadiness = (o: Obj): boolean => o.kind === "Deployment" || o.kind === "DaemonSet"
