/**
 * `meshctl validate` (alias `v`): validates configuration files against the resource schemas.
 * `-f/--filename` takes files, directories (walked recursively for .yaml/.yml/.json) or `-`
 * for stdin, repeated or comma-separated. Prints `"<file>" is valid` for each file without
 * problems (`validation succeed` for stdin), every problem with file, document, resource and
 * field path, and fails when any problem was found. Checks across the files follow, as
 * warnings (`Warning: ...`, after the errors; they do not fail the command): a VirtualService
 * destination whose subset no DestinationRule of the files defines. Documents written at a
 * version the reference marks deprecated are warned about the same way.
 */
import { Command, Options } from "@effect/cli"
import { Console, Data, Effect } from "effect"
import type { ConfigResource, ValidationIssue } from "../../../services/config-model/resource.js"
import type { LogSettings } from "../../../services/logging/options.js"
import { globalOptions } from "../global-options.js"
import { expandInputs, type InputError, readInput, readProcessStdin, STDIN } from "../input-files.js"

/** The failure of `meshctl validate`: its message summarises what was found. */
export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly message: string
  readonly issues: number
  readonly files: number
}> {}

/** A file that could not be read (missing, unreadable). */
export interface ReadProblem {
  readonly file: string
  readonly reason: string
}

export interface FileReport {
  readonly file: string
  readonly resources: number
  readonly issues: ReadonlyArray<ValidationIssue>
}

export interface ValidateReport {
  readonly files: ReadonlyArray<FileReport>
  readonly readProblems: ReadonlyArray<ReadProblem>
  /** What walking the directories left out, and why (loops, special files): printed as warnings. */
  readonly skipped?: ReadonlyArray<string>
  /**
   * Findings that do not make a document invalid: deprecated versions (version-warnings.ts),
   * then cross-resource findings over every valid resource of every file (subset-references.ts).
   */
  readonly warnings: ReadonlyArray<ValidationIssue>
}

const CONFIG_EXTENSIONS = [".yaml", ".yml", ".json"]

export { readProcessStdin, STDIN }

/** Validates every file named (directories expanded); `readStdin` supplies the text of `-`. */
export const validatePaths = (
  paths: ReadonlyArray<string>,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
): Effect.Effect<ValidateReport> =>
  Effect.gen(function* () {
    // The schemas load only when validation runs: the rest of meshctl stays cheap to start.
    const { parseConfigDocuments } = yield* Effect.promise(() => import("../../../services/config-model/parse.js"))
    const { documentVersionWarnings } = yield* Effect.promise(
      () => import("../../../services/config-model/version-warnings.js"),
    )
    const files: Array<FileReport> = []
    const versionWarnings: Array<ValidationIssue> = []
    const readProblems: Array<ReadProblem> = []
    const resources: Array<ConfigResource> = []
    // Directories walked once per real directory, special files skipped, each file read within
    // the size limit (input-files.ts).
    const expanded = yield* expandInputs(paths, CONFIG_EXTENSIONS)
    for (const problem of expanded.problems) readProblems.push({ file: problem.path, reason: problem.reason })
    for (const file of expanded.files) {
      const text = yield* Effect.either(readInput(file, readStdin))
      if (text._tag === "Left") {
        readProblems.push({ file, reason: text.left.reason })
        continue
      }
      const parsed = parseConfigDocuments(file, text.right)
      files.push({ file, resources: parsed.resources.length, issues: parsed.issues })
      resources.push(...parsed.resources)
      versionWarnings.push(...documentVersionWarnings(file, text.right))
    }
    const { undefinedSubsetWarnings } = yield* Effect.promise(
      () => import("../../../services/config-model/subset-references.js"),
    )
    return {
      files,
      readProblems,
      skipped: expanded.skipped,
      warnings: [...versionWarnings, ...undefinedSubsetWarnings(resources)],
    }
  })

/**
 * The lines `validate` prints for a report: valid files on stdout, problems on stderr, and
 * warnings apart (stderr too, after the problems, each `Warning: ...`).
 */
export const renderReport = (
  report: ValidateReport,
  formatIssue: (issue: ValidationIssue) => string,
): {
  readonly out: ReadonlyArray<string>
  readonly err: ReadonlyArray<string>
  readonly warn: ReadonlyArray<string>
} => {
  const out: Array<string> = []
  const err: Array<string> = []
  for (const problem of report.readProblems) err.push(`${problem.file}: cannot read: ${problem.reason}`)
  for (const file of report.files) {
    if (file.issues.length === 0) out.push(file.file === STDIN ? "validation succeed" : `"${file.file}" is valid`)
    else for (const issue of file.issues) err.push(formatIssue(issue))
  }
  const warn = [
    ...(report.skipped ?? []).map((line) => `Warning: ${line}`),
    ...report.warnings.map((issue) => `Warning: ${formatIssue(issue)}`),
  ]
  return { out, err, warn }
}

/** The failure a report amounts to, if any. */
export const reportFailure = (report: ValidateReport): ValidationFailed | undefined => {
  const issues = report.files.reduce((n, f) => n + f.issues.length, 0) + report.readProblems.length
  if (issues === 0) return undefined
  const badFiles = new Set([
    ...report.files.filter((f) => f.issues.length > 0).map((f) => f.file),
    ...report.readProblems.map((p) => p.file),
  ]).size
  const documents = new Set(
    report.files.flatMap((f) => f.issues.map((issue) => `${issue.file}\u0000${issue.documentIndex}`)),
  ).size
  const what = [
    documents > 0 ? `${documents} invalid document${documents === 1 ? "" : "s"}` : undefined,
    report.readProblems.length > 0
      ? `${report.readProblems.length} unreadable path${report.readProblems.length === 1 ? "" : "s"}`
      : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(" and ")
  return new ValidationFailed({
    message: `validation failed: ${issues} problem${issues === 1 ? "" : "s"} (${what}) in ${badFiles} file${badFiles === 1 ? "" : "s"}`,
    issues,
    files: badFiles,
  })
}

/** `-f/--filename`: repeated and/or comma-separated. */
export const filenameOption = Options.text("filename").pipe(
  Options.withAlias("f"),
  Options.repeated,
  Options.map((values) =>
    values.flatMap((value) =>
      value
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== ""),
    ),
  ),
  Options.withDescription("Names of files to validate: files, directories (walked recursively) or - for stdin"),
)

const runValidate = (filename: ReadonlyArray<string>, readStdin: Effect.Effect<string, InputError>) =>
  Effect.gen(function* () {
    if (filename.length === 0) {
      return yield* new ValidationFailed({
        message: "no file provided; use -f FILE|DIR|- (repeatable)",
        issues: 0,
        files: 0,
      })
    }
    const report = yield* validatePaths(filename, readStdin)
    const { formatIssue } = yield* Effect.promise(() => import("../../../services/config-model/resource.js"))
    const { out, err, warn } = renderReport(report, formatIssue)
    for (const line of err) yield* Console.error(line)
    for (const line of warn) yield* Console.error(line)
    for (const line of out) yield* Console.log(line)
    const failure = reportFailure(report)
    if (failure !== undefined) return yield* failure
  })

const make = (name: string, logging: Options.Options<LogSettings>, readStdin: Effect.Effect<string, InputError>) =>
  Command.make(name, { filename: filenameOption, logging, global: globalOptions }, ({ filename }) =>
    runValidate(filename, readStdin),
  ).pipe(Command.withDescription("Validate mesh policy and rules files"))

/**
 * `meshctl validate`. @effect/cli has no aliases for commands: register
 * `validateAliasCommand` next to it for `meshctl v`.
 */
export const validateCommand = (
  logging: Options.Options<LogSettings>,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
) => make("validate", logging, readStdin)

/** `meshctl v`: the same command under its short name. */
export const validateAliasCommand = (
  logging: Options.Options<LogSettings>,
  readStdin: Effect.Effect<string, InputError> = readProcessStdin,
) => make("v", logging, readStdin)
