/**
 * The mTLS decision by PeerAuthentication, shared by the outbound clusters (auto mTLS: does the
 * destination require it?) and the inbound listeners (what does this workload accept?).
 */
import type { PushContext } from "./push-context.js"

const inherits = (mode: string | undefined): boolean => mode === undefined || mode === "" || mode === "UNSET"

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
  const policies = push.peerAuthentications
  const levels = [
    policies.find((p) => p.namespace === push.options.rootNamespace && p.selector === undefined),
    policies.find((p) => p.namespace === namespace && p.selector === undefined),
    policies.find(
      (p) =>
        p.namespace === namespace &&
        p.selector !== undefined &&
        Object.entries(p.selector).every(([k, v]) => labels[k] === v),
    ),
  ]
  let mode = "PERMISSIVE"
  for (const policy of levels) {
    if (policy === undefined) continue
    if (!inherits(policy.mode)) mode = policy.mode!
    const own = port !== undefined ? policy.portLevel[String(port)] : undefined
    if (!inherits(own)) mode = own!
  }
  return mode
}
