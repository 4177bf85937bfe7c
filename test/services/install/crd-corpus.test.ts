/**
 * Issue 23: the generated CRDs against the validation corpus, the same documents `meshctl
 * validate` and the webhook are checked with. Every valid document passes its kind's CRD schema
 * at every served version; every invalid one is refused by the schema or, when the rule is one a
 * structural schema cannot state, by the `/validate` admission function. `WEBHOOK_ONLY` is the
 * reviewed list of the latter, with the reason: any other invalid document the schema accepts is
 * a regression of the generator, and a listed one the schema starts refusing must leave the list.
 */
import { describe, expect, it } from "vitest"
import { byAdmission, bySchema, loadCorpus, namesField, servedVersions } from "./crd-cases.js"
import { WEBHOOK_ONLY } from "./crd-webhook-only.js"

const CASES = loadCorpus()
const objectOf = (c: (typeof CASES)[number]) => {
  if (typeof c.object === "string") throw new Error(`${c.name}: ${c.object}`)
  return c.object
}
const VALID = CASES.filter((c) => c.expected === "valid")
const INVALID = CASES.filter((c) => c.expected === "invalid")

describe("CRD schemas on the validation corpus", () => {
  it("the corpus is there: every kind has valid and invalid documents", () => {
    expect(VALID.length).toBeGreaterThan(100)
    expect(INVALID.length).toBeGreaterThan(100)
    expect(new Set(VALID.map((c) => c.kind))).toEqual(new Set(INVALID.map((c) => c.kind)))
  })

  it("every valid document is accepted at every version its CRD serves", () => {
    const refused = VALID.flatMap((c) => {
      const object = objectOf(c)
      const versions = servedVersions(object)
      if (versions.length === 0) return [`${c.name}: no CRD`]
      return versions.flatMap((v) => bySchema(object, v).issues.map((issue) => `${c.name} @${v}: ${issue}`))
    })
    expect(refused).toEqual([])
  })

  const verdicts = INVALID.map((c) => ({ case: c, schema: bySchema(objectOf(c)), admission: byAdmission(objectOf(c)) }))
  const bySchemaAlone = verdicts.filter((v) => v.schema.issues.length > 0)
  const onlyByWebhook = verdicts.filter((v) => v.schema.issues.length === 0)

  it("every invalid document is refused by the CRD schema or by admission", () => {
    const accepted = verdicts.filter((v) => v.schema.issues.length === 0 && v.admission.allowed).map((v) => v.case.name)
    expect(accepted).toEqual([])
  })

  it("the schema refuses every invalid document whose rule it can state, naming the field", () => {
    console.log(
      `CRD corpus split: ${bySchemaAlone.length} of ${verdicts.length} invalid documents refused by the CRD schema, ` +
        `${onlyByWebhook.length} only by the webhook (${VALID.length} valid accepted)`,
    )
    const regressions = onlyByWebhook.filter((v) => WEBHOOK_ONLY[v.case.name] === undefined).map((v) => v.case.name)
    expect(regressions, "invalid documents the CRD schema should refuse").toEqual([])
    const wrongField = bySchemaAlone
      .filter((v) => !namesField(v.case.expectedPath, v.schema.paths))
      .map((v) => `${v.case.name} (${v.case.expectedPath}): ${v.schema.issues.join("; ")}`)
    expect(wrongField).toEqual([])
  })

  it("the webhook-only list is exact: each entry an invalid corpus document the schema accepts", () => {
    const names = new Set(INVALID.map((c) => c.name))
    expect(Object.keys(WEBHOOK_ONLY).filter((name) => !names.has(name))).toEqual([])
    const nowRefused = bySchemaAlone.filter((v) => WEBHOOK_ONLY[v.case.name] !== undefined).map((v) => v.case.name)
    expect(nowRefused, "refused by the schema now: remove from WEBHOOK_ONLY").toEqual([])
    for (const reason of Object.values(WEBHOOK_ONLY)) expect(reason.length).toBeGreaterThan(10)
  })
})
