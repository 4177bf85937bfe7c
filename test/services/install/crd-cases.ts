/**
 * The validation corpus of issue 21 (test/services/config-model/corpus) read as the objects an
 * orchestrator client sends, and judged two ways: by the generated CRD schema of the document's
 * kind (what the API server checks, `structural-validation.ts`) and by mesh-discovery's
 * `/validate` admission function.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { lookupKind, normaliseGroup } from "../../../src/services/config-model/kinds.js"
import { readYamlDocuments } from "../../../src/services/config-model/parse.js"
import { meshCrds } from "../../../src/services/install/crds.js"
import { type StructuralNode, validateStructural } from "../../../src/services/install/structural-validation.js"
import { admit } from "../../../src/services/webhook/validation.js"

export const CORPUS = join(import.meta.dirname, "..", "config-model", "corpus")

export interface CorpusCase {
  /** Corpus-relative name (`DestinationRule/invalid/warmup-percent.yaml`). */
  readonly name: string
  readonly kind: string
  readonly expected: "valid" | "invalid"
  /** The field the refusal must name (`# path:` line), if the case names one. */
  readonly expectedPath?: string
  /** The object a client sends (JSON), or why the text cannot be sent as one. */
  readonly object: Record<string, unknown> | string
}

const yamlFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .sort()

export const loadCorpus = (): ReadonlyArray<CorpusCase> =>
  readdirSync(CORPUS)
    .sort()
    .filter((kind) => statSync(join(CORPUS, kind)).isDirectory())
    .flatMap((kind) =>
      (["valid", "invalid"] as const).flatMap((expected) =>
        yamlFiles(join(CORPUS, kind, expected)).map((file): CorpusCase => {
          const text = readFileSync(join(CORPUS, kind, expected, file), "utf8")
          const path = /^#\s*path:\s*(\S+)\s*$/.exec(text.split("\n")[1] ?? "")?.[1]
          const read = readYamlDocuments(text)
          const documents = Either.isRight(read) ? read.right.filter((d) => d !== null) : []
          const object = Either.isLeft(read)
            ? `YAML: ${read.left}`
            : documents.length !== 1
              ? `${documents.length} documents`
              : (JSON.parse(JSON.stringify(documents[0])) as Record<string, unknown>)
          return {
            name: `${kind}/${expected}/${file}`,
            kind,
            expected,
            object,
            ...(path !== undefined ? { expectedPath: path } : {}),
          }
        }),
      ),
    )

interface Crd {
  readonly spec: {
    readonly group: string
    readonly names: { readonly kind: string }
    readonly versions: ReadonlyArray<{
      readonly name: string
      readonly served: boolean
      readonly schema: { readonly openAPIV3Schema: StructuralNode }
    }>
  }
}
const CRDS = meshCrds({}) as unknown as ReadonlyArray<Crd>

const splitApiVersion = (apiVersion: unknown) => {
  const text = typeof apiVersion === "string" ? apiVersion : ""
  const slash = text.lastIndexOf("/")
  return { group: slash < 0 ? "" : text.slice(0, slash), version: text.slice(slash + 1) }
}

export interface SchemaVerdict {
  /** Issues as `path: message`, paths without the leading dot (`spec.hosts[0]: ...`). */
  readonly issues: ReadonlyArray<string>
  readonly paths: ReadonlyArray<string>
}

/**
 * The API server's verdict on the object at `version` (its own when not given): the CRD schema of
 * that version, applied to everything but apiVersion, kind and metadata (metadata has the API
 * server's own rules, not the CRD's).
 */
export const bySchema = (object: Record<string, unknown>, version?: string): SchemaVerdict => {
  const { group, version: own } = splitApiVersion(object.apiVersion)
  const crd = CRDS.find((c) => c.spec.group === normaliseGroup(group) && c.spec.names.kind === object.kind)
  const served = crd?.spec.versions.find((v) => v.name === (version ?? own) && v.served)
  if (served === undefined)
    return { issues: [`no CRD serves ${String(object.apiVersion)} ${String(object.kind)}`], paths: [""] }
  const { apiVersion: _a, kind: _k, metadata: _m, ...body } = object
  const { issues } = validateStructural(served.schema.openAPIV3Schema, body)
  const paths = issues.map((i) => i.path.replace(/^\./, ""))
  return { issues: issues.map((i, n) => `${paths[n]}: ${i.message}`), paths }
}

/** The versions the CRD of the object's kind serves. */
export const servedVersions = (object: Record<string, unknown>): ReadonlyArray<string> => {
  const { group } = splitApiVersion(object.apiVersion)
  const crd = CRDS.find((c) => c.spec.group === normaliseGroup(group) && c.spec.names.kind === object.kind)
  return crd?.spec.versions.filter((v) => v.served).map((v) => v.name) ?? []
}

/** mesh-discovery's admission decision for a CREATE of the object. */
export const byAdmission = (
  object: Record<string, unknown>,
): { readonly allowed: boolean; readonly message: string } => {
  const { group, version } = splitApiVersion(object.apiVersion)
  const metadata = (object.metadata ?? {}) as Record<string, unknown>
  const decision = admit({
    uid: "crd-corpus",
    operation: "CREATE",
    resource: { group, version, resource: lookupKind(group, String(object.kind))?.plural ?? "" },
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : "default",
    object,
  })
  return { allowed: decision.allowed, message: decision.message ?? "" }
}

/** The object or list element holding a field (`spec.a[0].b` → `spec.a[0]`, `spec.a[0]` → `spec.a`). */
const holderOf = (path: string): string => path.replace(/(\.[^.[]+|\[\d+\])$/, "")

/**
 * Whether some path names `field`, a field below it, or the object holding it: the API server
 * reports a rule between sibling fields (value validations, list-map duplicates) at their holder.
 */
export const namesField = (field: string | undefined, paths: ReadonlyArray<string>): boolean =>
  field === undefined ||
  paths.some((p) => p === field || p.startsWith(`${field}.`) || p.startsWith(`${field}[`) || p === holderOf(field))
