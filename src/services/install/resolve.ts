/**
 * From the user's inputs to one validated operator spec: the profile (`spec.profile` of the
 * files or `--set profile=...`, `default` otherwise) is the base, the `-f` files are laid over it
 * left to right, the `--set` flags are applied last, then the result is checked against the
 * schema (and `meshConfig` against the mesh config schema). Every error names its source and
 * the field (`spec.components.pilot.k8s.replicaCount`).
 */
import { Either, ParseResult, Schema } from "effect"
import { stringify } from "yaml"
import { describeYamlLimitProblem, parseDocumentsBounded } from "../config-model/bounded-yaml.js"
import { applyMeshConfig } from "../mesh-config/mesh-config.js"
import { isObject, type Obj } from "../orchestrator/json.js"
import { OPERATOR_GROUP_ALIASES, OPERATOR_KIND, OPERATOR_VERSION, OperatorSpec } from "./operator.js"
import { deepMerge } from "./overlay.js"
import { isProfileName, PROFILE_NAMES, profileSpec } from "./profiles.js"
import { applySetFlag, parseSetFlag, type SetFlag } from "./set-flags.js"

export interface OperatorFile {
  readonly name: string
  readonly text: string
}

export interface OperatorInputs {
  readonly files: ReadonlyArray<OperatorFile>
  readonly sets: ReadonlyArray<string>
  /** `--revision`: wins over `spec.revision`. */
  readonly revision?: string
}

/** The operator as rendering reads it: the checked spec and what follows from it. */
export interface ResolvedOperator {
  readonly spec: OperatorSpec
  /** The control-plane revision; "" for the default one. */
  readonly revision: string
  readonly namespace: string
  readonly hub: string
  readonly tag: string
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

/** The `spec` of one operator file; errors name the file and field. */
export const readOperatorFile = (file: OperatorFile): Either.Either<Obj, ReadonlyArray<string>> => {
  // Nesting and node bounds as every config reader (config-model/yaml-limits.ts).
  const { documents: list, problem } = parseDocumentsBounded(file.text, { uniqueKeys: true })
  if (problem !== undefined) return Either.left([`${file.name}: ${describeYamlLimitProblem(problem)}`])
  const errors = list.flatMap((d) =>
    d.errors.map((e) => `${file.name}: YAML syntax error: ${e.message.split("\n")[0]}`),
  )
  if (errors.length > 0) return Either.left(errors)
  const values = list
    .map((d) => d.toJS({ maxAliasCount: 1000 }) as unknown)
    .filter((v) => v !== null && v !== undefined)
  if (values.length !== 1)
    return Either.left([`${file.name}: expected exactly one operator resource, found ${values.length} documents`])
  const doc = values[0]
  if (!isObject(doc)) return Either.left([`${file.name}: the operator resource must be a YAML mapping`])
  const problems: Array<string> = []
  const apiVersion = doc.apiVersion
  const [group, version] = typeof apiVersion === "string" ? apiVersion.split("/") : []
  if (
    apiVersion !== undefined &&
    (!(OPERATOR_GROUP_ALIASES as ReadonlyArray<unknown>).includes(group) || version !== OPERATOR_VERSION)
  ) {
    problems.push(
      `${file.name}: apiVersion: expected ${OPERATOR_GROUP_ALIASES.map((g) => `${g}/${OPERATOR_VERSION}`).join(" or ")}, got ${JSON.stringify(apiVersion)}`,
    )
  }
  if (doc.kind !== undefined && doc.kind !== OPERATOR_KIND) {
    problems.push(`${file.name}: kind: expected ${OPERATOR_KIND}, got ${JSON.stringify(doc.kind)}`)
  }
  const spec = doc.spec ?? {}
  if (!isObject(spec)) problems.push(`${file.name}: spec: expected a mapping`)
  return problems.length > 0 ? Either.left(problems) : Either.right(spec as Obj)
}

const decodeSpec = Schema.decodeUnknownEither(OperatorSpec, { errors: "all", onExcessProperty: "error" })

const formatIssuePath = (path: ReadonlyArray<PropertyKey>): string =>
  ["spec", ...path].map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? String(s) : `.${String(s)}`)).join("")

/** Checks a merged spec; the messages name the field. */
export const validateSpec = (raw: Obj): Either.Either<OperatorSpec, ReadonlyArray<string>> => {
  const decoded = decodeSpec(raw)
  if (Either.isLeft(decoded)) {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    // An optional field's union also reports "Expected undefined" at it and every parent: noise.
    const real = issues.filter((issue) => !issue.message.startsWith("Expected undefined"))
    return Either.left(
      (real.length > 0 ? real : issues).map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`),
    )
  }
  const spec = decoded.right
  const problems: Array<string> = []
  if (spec.profile !== undefined && !isProfileName(spec.profile)) {
    problems.push(`spec.profile: unknown profile ${JSON.stringify(spec.profile)} (one of ${PROFILE_NAMES.join(", ")})`)
  }
  if (spec.revision !== undefined && spec.revision !== "" && !DNS_LABEL.test(spec.revision)) {
    problems.push(
      `spec.revision: ${JSON.stringify(spec.revision)} must be a DNS label (lowercase letters, digits, '-')`,
    )
  }
  if (spec.namespace !== undefined && !DNS_LABEL.test(spec.namespace)) {
    problems.push(`spec.namespace: ${JSON.stringify(spec.namespace)} must be a DNS label`)
  }
  for (const list of ["ingressGateways", "egressGateways"] as const) {
    const names = (spec.components?.[list] ?? []).map((g) => g.name)
    const dup = names.find((n, i) => names.indexOf(n) !== i)
    if (dup !== undefined) problems.push(`spec.components.${list}: gateway name ${JSON.stringify(dup)} appears twice`)
  }
  if (spec.meshConfig !== undefined) {
    const mesh = applyMeshConfig("spec.meshConfig", stringify(spec.meshConfig))
    if (Either.isLeft(mesh)) {
      for (const issue of mesh.left)
        problems.push(`spec.meshConfig${issue.path === "" ? "" : `.${issue.path}`}: ${issue.message}`)
    }
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(spec)
}

const stringOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined

/**
 * Profile + files + `--set` → the checked operator. With `unchecked` (meshctl's `--force`) a
 * merged spec that fails the schema is used as it is; unreadable inputs still fail.
 */
export const resolveOperator = (
  inputs: OperatorInputs,
  options: { readonly unchecked?: boolean } = {},
): Either.Either<ResolvedOperator, ReadonlyArray<string>> => {
  const problems: Array<string> = []
  const overlays: Array<Obj> = []
  for (const file of inputs.files) {
    const spec = readOperatorFile(file)
    if (Either.isLeft(spec)) problems.push(...spec.left)
    else overlays.push(spec.right)
  }
  const sets: Array<SetFlag> = []
  for (const flag of inputs.sets) {
    const parsed = parseSetFlag(flag)
    if (Either.isLeft(parsed)) problems.push(parsed.left)
    else sets.push(parsed.right)
  }
  if (problems.length > 0) return Either.left(problems)

  const user = overlays.reduce<Obj>((acc, o) => deepMerge(acc, o), {})
  const profileSet = [...sets].reverse().find((s) => s.path.length === 1 && s.path[0] === "profile")
  const profile = String(profileSet?.value ?? user.profile ?? "default")
  if (!isProfileName(profile)) {
    return Either.left([
      `spec.profile: unknown profile ${JSON.stringify(profile)} (one of ${PROFILE_NAMES.join(", ")})`,
    ])
  }
  let merged = deepMerge(profileSpec(profile), user)
  for (const set of sets) {
    const applied = applySetFlag(merged, set)
    if (Either.isLeft(applied)) problems.push(applied.left)
    else merged = applied.right
  }
  if (problems.length > 0) return Either.left(problems)
  if (inputs.revision !== undefined && inputs.revision !== "") merged.revision = inputs.revision

  const usable = options.unchecked === true ? Either.right(merged as OperatorSpec) : validateSpec(merged)
  return Either.map(usable, (spec) => {
    const global = spec.values?.global
    const revision = spec.revision === undefined || spec.revision === "default" ? "" : spec.revision
    return {
      spec,
      revision,
      namespace: spec.namespace ?? global?.istioNamespace ?? "mesh-system",
      hub: spec.hub ?? global?.hub ?? "docker.io/mesh",
      tag: stringOf(spec.tag) ?? stringOf(global?.tag) ?? "latest",
    }
  })
}
