/**
 * Golden cases of the injector: each `golden/<case>.input.yaml` (pod, namespace, config, values,
 * mesh config) against `golden/<case>.expected.yaml` (the outcome). `UPDATE_GOLDEN=1` rewrites
 * the expected files; review their diff before keeping it. Every injected case is also checked
 * through the JSON patch (applied to the original pod, it must give the injected pod) and for
 * idempotence (the injected pod injected again is the same pod).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { injectPod } from "../../../src/services/injection/inject.js"
import { jsonPatch } from "../../../src/services/injection/json-patch.js"
import { type CaseDocument, inputOf } from "./injection-input.js"
import { applyPatch } from "./json-patch-apply.js"

const dir = join(import.meta.dirname, "golden")
const update = process.env.UPDATE_GOLDEN === "1"
const cases = readdirSync(dir)
  .filter((f) => f.endsWith(".input.yaml"))
  .map((f) => f.slice(0, -".input.yaml".length))
  .sort()

describe("injector golden cases", () => {
  it("has at least 40 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40)
  })

  for (const name of cases) {
    it(name, () => {
      const doc = parse(readFileSync(join(dir, `${name}.input.yaml`), "utf8")) as CaseDocument
      const input = inputOf(doc)
      const before = structuredClone(doc.pod)
      const outcome = injectPod(input)
      const expectedFile = join(dir, `${name}.expected.yaml`)
      if (update) writeFileSync(expectedFile, stringify(outcome, { lineWidth: 0, aliasDuplicateObjects: false }))
      expect(outcome).toEqual(parse(readFileSync(expectedFile, "utf8")))
      // The input is never changed.
      expect(input.pod).toEqual(before)
      if (outcome._tag === "Injected") {
        expect(applyPatch(doc.pod, jsonPatch(doc.pod, outcome.pod))).toEqual(outcome.pod)
        // Injecting the injected pod again gives the same pod (the reference re-injects, it does not skip).
        const again = injectPod({ ...input, pod: outcome.pod })
        expect(again._tag).toBe("Injected")
        if (again._tag === "Injected") expect(again.pod).toEqual(outcome.pod)
      }
    })
  }
})
