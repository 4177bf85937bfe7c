/**
 * `meshctl orch-inject` without the I/O: multi-document YAML of orchestrator objects in, the same
 * documents out with every pod (or workload's pod template) injected. Pods, Deployments,
 * StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs and CronJobs are injected,
 * and the items of a `List`; any other kind passes through as written. A pod template is injected
 * as a pod of the workload's namespace (`default` when it names none) and the result's template
 * replaces it. A document the injector leaves alone (skipped) is written back as it was read; an
 * injected one is injected again into the same pod, so running the command over its own output
 * changes nothing.
 */
import { Either } from "effect"
import { type Document, isScalar, stringify } from "yaml"
import { parseDocumentsBounded } from "../config-model/bounded-yaml.js"
import type { InjectionConfig, InjectionValues, Json } from "./contract.js"
import { injectPod } from "./index.js"

export interface WorkloadInjectionInputs {
  readonly config: InjectionConfig
  readonly values: InjectionValues
  readonly meshConfig: Json
  /** `--revision` */
  readonly revision: string
  /** `ENABLE_NATIVE_SIDECARS` resolved for a pod by its `spec.nodeName` ("" when unset). */
  readonly nativeSidecars?: (nodeName: string) => boolean
  /** `COMPLIANCE_POLICY`, written into injected proxies ("" or absent: none). */
  readonly compliancePolicy?: string
}

export interface InjectedWorkloads {
  /** The documents, injected where they could be, in their order. */
  readonly text: string
  /** What the user should know: pod templates skipped and why, the injector's warnings. */
  readonly notes: ReadonlyArray<string>
}

/** A document that cannot be read or injected (its index counts from 0, as `validate` does). */
export interface WorkloadDocumentError {
  readonly documentIndex: number
  readonly message: string
}

/** The largest number of aliases one document may resolve (a file is the user's own, but bounded). */
const MAX_ALIASES = 10_000

const DOCUMENT_SEPARATOR = "---\n"

type Obj = Record<string, unknown>

const isRecord = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** Where a kind keeps its pod template (the object itself for a Pod), for the groups that define it. */
const TEMPLATE_PATHS: Readonly<Record<string, { readonly groups: ReadonlyArray<string>; readonly path: string[] }>> = {
  Pod: { groups: [""], path: [] },
  ReplicationController: { groups: [""], path: ["spec", "template"] },
  Deployment: { groups: ["apps", "extensions"], path: ["spec", "template"] },
  DaemonSet: { groups: ["apps", "extensions"], path: ["spec", "template"] },
  ReplicaSet: { groups: ["apps", "extensions"], path: ["spec", "template"] },
  StatefulSet: { groups: ["apps"], path: ["spec", "template"] },
  Job: { groups: ["batch"], path: ["spec", "template"] },
  CronJob: { groups: ["batch"], path: ["spec", "jobTemplate", "spec", "template"] },
}

const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf("/")
  return slash < 0 ? "" : apiVersion.slice(0, slash)
}

/** The path of the object's pod template, or undefined for a kind that has none. */
const templatePath = (object: Obj): ReadonlyArray<string> | undefined => {
  const entry = TEMPLATE_PATHS[text(object.kind)]
  if (entry === undefined || !entry.groups.includes(groupOf(text(object.apiVersion)))) return undefined
  return entry.path
}

const getPath = (object: Obj, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((at, key) => (isRecord(at) ? at[key] : undefined), object)

/** A copy of `object` with the value at `path` replaced (every object on the way copied). */
const setPath = (object: Obj, path: ReadonlyArray<string>, value: unknown): Obj => {
  if (path.length === 0) return value as Obj
  const [key, ...rest] = path
  const child = isRecord(object[key!]) ? (object[key!] as Obj) : {}
  return { ...object, [key!]: setPath(child, rest, value) }
}

/** `metadata` with `name` and `namespace` as they were in `before` (removed when it had none). */
const restoreIdentity = (metadata: Obj, before: Obj): Obj => {
  const out: Obj = { ...metadata }
  for (const key of ["name", "namespace"]) {
    if (before[key] === undefined) delete out[key]
    else out[key] = before[key]
  }
  return out
}

type Injected = { readonly _tag: "Changed"; readonly object: Obj } | { readonly _tag: "Unchanged" }

/** Injects one object (a List's items one by one); Left with the reason of a refused pod. */
const injectObject = (
  object: Obj,
  inputs: WorkloadInjectionInputs,
  notes: Array<string>,
): Either.Either<Injected, string> => {
  if (text(object.kind) === "List" && Array.isArray(object.items)) {
    const items: Array<unknown> = []
    let changed = false
    for (const [i, item] of object.items.entries()) {
      if (!isRecord(item)) {
        items.push(item)
        continue
      }
      const result = injectObject(item, inputs, notes)
      if (Either.isLeft(result)) return Either.left(`items[${i}]: ${result.left}`)
      changed ||= result.right._tag === "Changed"
      items.push(result.right._tag === "Changed" ? result.right.object : item)
    }
    return Either.right(changed ? { _tag: "Changed", object: { ...object, items } } : { _tag: "Unchanged" })
  }
  const path = templatePath(object)
  if (path === undefined) return Either.right({ _tag: "Unchanged" })
  const template = getPath(object, path)
  if (!isRecord(template)) return Either.right({ _tag: "Unchanged" })
  const metadata = isRecord(object.metadata) ? object.metadata : {}
  const kind = text(object.kind)
  const name = text(metadata.name)
  const namespace = text(metadata.namespace) || "default"
  const templateMeta = isRecord(template.metadata) ? template.metadata : {}
  const what = `${kind} ${namespace}/${name || "<unnamed>"}`
  // The template as the pod it will make: named after the workload, in its namespace.
  const pod: Obj = {
    ...(path.length === 0 ? template : { apiVersion: "v1", kind: "Pod", spec: template.spec ?? {} }),
    metadata: { ...templateMeta, name: text(templateMeta.name) || name, namespace },
  }
  const outcome = injectPod({
    pod,
    namespace: { name: namespace, labels: {} },
    config: inputs.config,
    values: inputs.values,
    meshConfig: inputs.meshConfig,
    revision: inputs.revision,
    ...(inputs.nativeSidecars !== undefined
      ? { nativeSidecars: inputs.nativeSidecars(isRecord(pod.spec) ? text(pod.spec.nodeName) : "") }
      : {}),
    ...(inputs.compliancePolicy === undefined ? {} : { compliancePolicy: inputs.compliancePolicy }),
    ...(path.length > 0 && name !== ""
      ? { owner: { kind, name, ...(text(object.apiVersion) === "" ? {} : { apiVersion: text(object.apiVersion) }) } }
      : {}),
    // A file's pods are injected unless they opt out: no namespace labels or policy apply.
    mode: "orch-inject",
  })
  switch (outcome._tag) {
    case "Refused":
      return Either.left(`${what}: ${outcome.reason}`)
    case "Skipped":
      notes.push(`${what}: injection skipped: ${outcome.reason}`, ...outcome.warnings.map((w) => `${what}: ${w}`))
      return Either.right({ _tag: "Unchanged" })
    case "Injected": {
      notes.push(...outcome.warnings.map((w) => `${what}: ${w}`))
      const injectedMeta = isRecord(outcome.pod.metadata) ? outcome.pod.metadata : {}
      const replacement: Obj =
        path.length === 0
          ? { ...outcome.pod, metadata: restoreIdentity(injectedMeta, templateMeta) }
          : { ...template, metadata: restoreIdentity(injectedMeta, templateMeta), spec: outcome.pod.spec }
      return Either.right({ _tag: "Changed", object: setPath(object, path, replacement) })
    }
  }
}

const syntaxError = (document: Document.Parsed): string => {
  const [error] = document.errors
  const line = error?.linePos?.[0]?.line
  const reason = (error?.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")
  return `YAML syntax error${line !== undefined ? ` at line ${line}` : ""}: ${reason}`
}

/**
 * A document as it was written — the input's own text, comments and formatting included — without
 * its `---` / `...` markers (the output places its own). `from` is where the previous document
 * ended. A document with directives (`%YAML`) is written from its value instead: they cannot follow the
 * output's separator (`value` is the document's content).
 */
const asWritten = (document: Document.Parsed, value: unknown, source: string, from: number): string => {
  let text = source.slice(from, document.range[2])
  if (document.directives.docStart) {
    const marker = /^---(?:[ \t]+|(?=\n)|$)\n?/m.exec(text)
    if (marker === null || /^%/m.test(text.slice(0, marker.index))) return stringify(value)
    text = text.slice(0, marker.index) + text.slice(marker.index + marker[0].length)
  }
  if (document.directives.docEnd) text = text.replace(/^\.\.\.[ \t]*(?:#.*)?\n?$/m, "")
  return text.endsWith("\n") ? text : `${text}\n`
}

/** Injects every document of `input`; the first document that cannot be read or injected fails it all. */
export const injectWorkloads = (
  input: string,
  inputs: WorkloadInjectionInputs,
): Either.Either<InjectedWorkloads, WorkloadDocumentError> => {
  // Nesting and node bounds as every config reader (config-model/yaml-limits.ts): nothing is
  // written when a document crosses one.
  const { documents: list, problem } = parseDocumentsBounded(input, { prettyErrors: true, uniqueKeys: true })
  if (problem !== undefined)
    return Either.left({ documentIndex: problem.documentIndex, message: `line ${problem.line}: ${problem.message}` })
  const out: Array<string> = []
  const notes: Array<string> = []
  let end = 0
  for (const [documentIndex, document] of list.entries()) {
    const from = end
    end = document.range[2]
    if (document.errors.length > 0) return Either.left({ documentIndex, message: syntaxError(document) })
    // An empty document (`---` alone, or only comments) has nothing to inject or keep.
    const contents = document.contents
    if (contents === null || (isScalar(contents) && contents.value === null)) continue
    let value: unknown
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIASES })
    } catch (e) {
      return Either.left({ documentIndex, message: `cannot read the document: ${(e as Error).message}` })
    }
    const result = isRecord(value) ? injectObject(value, inputs, notes) : Either.right<Injected>({ _tag: "Unchanged" })
    if (Either.isLeft(result)) return Either.left({ documentIndex, message: result.left })
    out.push(result.right._tag === "Changed" ? stringify(result.right.object) : asWritten(document, value, input, from))
  }
  return Either.right({ text: out.join(DOCUMENT_SEPARATOR), notes })
}
