/**
 * `meshctl verify-install`'s report: for each kind of the rendered install, whether every
 * object exists in the cluster and (Deployments, DaemonSets) is ready.
 */

import type { Obj } from "../orchestrator/json.js"
import { describeRef, type ObjectRef, refOf } from "./apply-plan.js"
import { notReadyReason } from "./readiness.js"

export interface VerifyReport {
  /** One line per kind, in install order, then one per failing object. */
  readonly lines: ReadonlyArray<string>
  readonly failures: ReadonlyArray<string>
  readonly summary: string
}

/** `live[i]` is what the cluster holds for `expected[i]` (undefined: missing). */
export const verifyReport = (expected: ReadonlyArray<Obj>, live: ReadonlyArray<Obj | undefined>): VerifyReport => {
  const kinds: Array<string> = []
  for (const o of expected) if (!kinds.includes(String(o.kind))) kinds.push(String(o.kind))
  const lines: Array<string> = []
  const failures: Array<string> = []
  for (const kind of kinds) {
    const problems: Array<string> = []
    let count = 0
    expected.forEach((o, i) => {
      if (o.kind !== kind) return
      count++
      const ref: ObjectRef = refOf(o)
      const found = live[i]
      const why = found === undefined ? "not found" : notReadyReason(found)
      if (why !== undefined) problems.push(`${describeRef(ref)}: ${why}`)
    })
    if (problems.length === 0) lines.push(`✔ ${kind}: ${count} of ${count} checked successfully`)
    else {
      lines.push(`✘ ${kind}: ${problems.length} of ${count} failed`)
      for (const p of problems) lines.push(`    ${p}`)
      failures.push(...problems)
    }
  }
  const summary =
    failures.length === 0
      ? "✔ Mesh is installed and verified successfully"
      : `✘ Mesh verification failed: ${failures.length} of ${expected.length} objects are missing or not ready`
  return { lines, failures, summary }
}
