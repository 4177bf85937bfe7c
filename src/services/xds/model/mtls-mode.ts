/**
 * The mTLS decision by PeerAuthentication, shared by the outbound clusters (auto mTLS: does the
 * destination require it?) and the inbound listeners (what does this workload accept?).
 */
import type { PushContext } from "./push-context.js"

const inherits = (mode: string | undefined): boolean => mode === undefined || mode === "" || mode === "UNSET"

/** The policies that apply to a workload, widest first: mesh-wide, namespace-wide, by selector. */
const applicableLevels = (push: PushContext, namespace: string, labels: Readonly<Record<string, string>>) => {
  const policies = push.peerAuthentications
  return [
    policies.find((p) => p.namespace === push.options.rootNamespace && p.selector === undefined),
    policies.find((p) => p.namespace === namespace && p.selector === undefined),
    policies.find(
      (p) =>
        p.namespace === namespace &&
        p.selector !== undefined &&
        Object.entries(p.selector).every(([k, v]) => labels[k] === v),
    ),
  ]
}

/**
 * The mTLS mode a workload accepts, by PeerAuthentication: mesh-wide (root namespace, no
 * selector), then namespace-wide, then the oldest policy whose selector matches the workload's
 * labels; at each level a `portLevelMtls` entry for the workload port overrides the policy's
 * mode, and UNSET inherits. PERMISSIVE when nothing applies.
 */
export const workloadMtlsMode = (
  push: PushContext,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  port: number | undefined,
): string => {
  let mode = "PERMISSIVE"
  for (const policy of applicableLevels(push, namespace, labels)) {
    if (policy === undefined) continue
    if (!inherits(policy.mode)) mode = policy.mode!
    const own = port !== undefined ? policy.portLevel[String(port)] : undefined
    if (!inherits(own)) mode = own!
  }
  return mode
}

/** The workload ports some applicable PeerAuthentication sets a `portLevelMtls` mode for. */
export const workloadMtlsPorts = (
  push: PushContext,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): ReadonlyArray<number> => {
  const ports = new Set<number>()
  for (const policy of applicableLevels(push, namespace, labels))
    for (const key of Object.keys(policy?.portLevel ?? {})) {
      const port = Number(key)
      if (Number.isInteger(port) && port > 0 && port <= 65535) ports.add(port)
    }
  return [...ports].sort((a, b) => a - b)
}
