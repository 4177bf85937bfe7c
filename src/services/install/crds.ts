/**
 * The CustomResourceDefinitions of the mesh's configuration kinds (networking, security,
 * telemetry, extensions), one per kind with every version the kind is served at, the
 * normalised version stored. Each version's schema is generated from the kind's own Effect
 * schema (the one `meshctl validate` checks with), so the API server refuses much of what
 * validate refuses; rules a structural schema cannot say (cross-field checks) stay with the
 * `/validate` webhook.
 */
import { JSONSchema, type Schema } from "effect"
import { allKinds, isMeshKind, type KindInfo } from "../config-model/kinds.js"
import type { Obj } from "../orchestrator/json.js"
import { type JsonSchema, type Structural, toStructural } from "./structural-schema.js"

/** The structural schema of a kind's spec (cached: the kinds never change). */
const specSchemas = new Map<string, Structural>()
export const specSchemaOf = (info: KindInfo): Structural => {
  const cached = specSchemas.get(info.kind)
  if (cached !== undefined) return cached
  const json = JSONSchema.make(info.schema as Schema.Schema<unknown, unknown>) as unknown as JsonSchema
  const structural = toStructural(json, (json.$defs as JsonSchema | undefined) ?? {})
  specSchemas.set(info.kind, structural)
  return structural
}

const crdFor = (info: KindInfo, labels: Readonly<Record<string, string>>): Obj => {
  const openAPIV3Schema = {
    type: "object",
    properties: {
      spec: specSchemaOf(info),
      status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
  }
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${info.plural}.${info.group}`, labels: { ...labels } },
    spec: {
      group: info.group,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.kind.toLowerCase(),
        categories: ["mesh-io", `${info.group.split(".")[0]}-mesh-io`],
      },
      scope: info.namespaced ? "Namespaced" : "Cluster",
      versions: info.versions.map((name) => {
        const warning = info.deprecatedVersions?.[name]
        return {
          name,
          served: true,
          storage: name === info.version,
          ...(warning !== undefined ? { deprecated: true, deprecationWarning: warning } : {}),
          schema: { openAPIV3Schema },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }],
        }
      }),
    },
  }
}

/** The CRDs of every mesh kind, sorted by name. */
export const meshCrds = (labels: Readonly<Record<string, string>>): ReadonlyArray<Obj> =>
  allKinds()
    .filter(isMeshKind)
    .map((info) => crdFor(info, labels))
    .sort((a, b) => String((a.metadata as Obj).name).localeCompare(String((b.metadata as Obj).name)))
