/**
 * The generated CRDs: one per mesh kind with every served version and one stored, structural
 * schemas (no $ref, a type or an explicit escape at every node), and the example mesh's
 * resources valid against them while invalid ones are refused, naming the field.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { allKinds, isMeshKind, normaliseGroup } from "../../../src/services/config-model/kinds.js"
import { meshCrds } from "../../../src/services/install/crds.js"
import { structuralProblems, validateStructural } from "../../../src/services/install/structural-validation.js"

type Crd = {
  metadata: { name: string }
  spec: {
    group: string
    names: { kind: string }
    versions: Array<{
      name: string
      served: boolean
      storage: boolean
      schema: { openAPIV3Schema: Record<string, unknown> }
    }>
  }
}
const crds = meshCrds({}) as unknown as ReadonlyArray<Crd>
const crdOf = (group: string, kind: string) =>
  crds.find((c) => c.spec.group === normaliseGroup(group) && c.spec.names.kind === kind)

const validate = (doc: Record<string, unknown>): Array<string> => {
  const [group = "", version] = String(doc.apiVersion).split("/")
  const crd = crdOf(group, String(doc.kind))
  const served = crd?.spec.versions.find((v) => v.name === version && v.served)
  if (served === undefined) return [`no CRD serves ${doc.apiVersion} ${doc.kind}`]
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = doc
  return validateStructural(served.schema.openAPIV3Schema, rest).issues.map((i) => `${i.path}: ${i.message}`)
}

describe("mesh CRDs", () => {
  it("one per mesh kind, every version served, exactly one stored", () => {
    const kinds = allKinds().filter(isMeshKind)
    expect(crds.length).toBe(kinds.length)
    for (const info of kinds) {
      const crd = crdOf(info.group, info.kind)
      expect(crd?.metadata.name).toBe(`${info.plural}.${info.group}`)
      expect(crd?.spec.versions.map((v) => v.name)).toEqual(info.versions)
      expect(crd?.spec.versions.filter((v) => v.storage).map((v) => v.name)).toEqual([info.version])
    }
  })

  it("schemas are structural", () => {
    for (const crd of crds) {
      for (const v of crd.spec.versions)
        expect(structuralProblems(v.schema.openAPIV3Schema, crd.metadata.name)).toEqual([])
    }
  })

  const examples = join(import.meta.dirname, "..", "..", "..", "examples", "mesh")
  const files = readdirSync(examples)
    .filter((f) => f.endsWith(".yaml"))
    .sort()
  it("the example mesh has mesh resources to check", () => {
    expect(files.length).toBeGreaterThan(0)
  })
  for (const file of files) {
    it(`examples/mesh/${file} validates against the CRDs`, () => {
      const docs = parseAllDocuments(readFileSync(join(examples, file), "utf8"))
        .map((d) => d.toJS() as Record<string, unknown> | null)
        .filter((d): d is Record<string, unknown> => d !== null && String(d.apiVersion).includes(".io/"))
      for (const doc of docs) expect(validate(doc), `${file} ${doc.kind}`).toEqual([])
    })
  }

  it("refuses a mistyped field, an unknown field and a bad enum, naming them", () => {
    const vs = (spec: unknown) =>
      validate({ apiVersion: "networking.mesh.io/v1", kind: "VirtualService", metadata: {}, spec })
    expect(vs({ hosts: "a" })).toEqual([".spec.hosts: Invalid value: must be of type array"])
    expect(vs({ hosts: ["a"], hostz: 1 })).toEqual(['.spec.hostz: unknown field "hostz"'])
    const pa = validate({
      apiVersion: "security.mesh.io/v1",
      kind: "PeerAuthentication",
      metadata: {},
      spec: { mtls: { mode: "SOMETIMES" } },
    })
    expect(pa.join()).toContain(".spec.mtls.mode: Unsupported value")
    const se = validate({ apiVersion: "networking.istio.io/v1beta1", kind: "ServiceEntry", metadata: {}, spec: {} })
    expect(se).toEqual([".spec.hosts: Required value"])
  })
})
