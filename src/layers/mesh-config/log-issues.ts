/** How every mesh-config source logs a bad input: one error line per issue, with its file and field. */
import { Effect } from "effect"
import { formatIssue, type ValidationIssue } from "../../services/config-model/resource.js"

export const logIssues = (what: string, issues: ReadonlyArray<ValidationIssue>) =>
  Effect.forEach(
    issues,
    (issue) =>
      Effect.logError(`invalid ${what}, keeping the last valid one: ${formatIssue(issue)}`).pipe(
        Effect.annotateLogs({ file: issue.file, ...(issue.path !== "" ? { field: issue.path } : {}) }),
      ),
    { discard: true },
  )
