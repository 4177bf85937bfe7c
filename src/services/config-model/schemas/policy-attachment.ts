/**
 * How the security, telemetry and extensions kinds say which workloads they apply to: a label
 * `selector`, or `targetRef` / `targetRefs` (policy attachment). The reference's CRDs count a
 * field as set when it is present at all (CEL `has()`), so an explicit empty `targetRefs: []`
 * still conflicts with a selector.
 */
import { Schema } from "effect"
import { atMostOneOf, PolicyTargetReference, type Report, structuralKeywords } from "./common.js"

/** The reference's CRDs allow at most 16 `targetRefs`. */
export const MAX_TARGET_REFS = 16

export const TargetRefs = Schema.Array(PolicyTargetReference).annotations(
  structuralKeywords({ maxItems: MAX_TARGET_REFS }),
)

/** The CRD side of `attachmentProblems`' first rule: at most one of the three fields present. */
export const attachmentRule = atMostOneOf("selector", "targetRef", "targetRefs")
export const attachmentKeywords = structuralKeywords(attachmentRule)

/** At most one of selector / targetRef / targetRefs, and at most MAX_TARGET_REFS targetRefs. */
export const attachmentProblems = (
  spec: { readonly selector?: unknown; readonly targetRef?: unknown; readonly targetRefs?: ReadonlyArray<unknown> },
  report: Report,
): void => {
  const set = [spec.selector, spec.targetRef, spec.targetRefs].filter((field) => field !== undefined).length
  if (set > 1) report([], "only one of targetRefs or workloadSelector can be set")
  if ((spec.targetRefs?.length ?? 0) > MAX_TARGET_REFS) {
    report(["targetRefs"], `at most ${MAX_TARGET_REFS} targetRefs may be set, found ${spec.targetRefs?.length}`)
  }
}

/** A list no longer than `max` (the CRD's maxItems), reported at `path`. */
export const maxItemsProblem = (
  list: ReadonlyArray<unknown> | undefined,
  max: number,
  path: ReadonlyArray<PropertyKey>,
  report: Report,
): void => {
  if (list !== undefined && list.length > max) {
    report(path, `must have at most ${max} items, found ${list.length}`)
  }
}
