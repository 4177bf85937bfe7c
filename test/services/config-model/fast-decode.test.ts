/**
 * The fast decoder (fast-decode.ts) is a seam of its own: on every kind's examples it must give
 * what Effect Schema's decoder gives (the same value, the same key order) or step aside.
 */
import { Either, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { fastDecode } from "../../../src/services/config-model/fast-decode.js"
import { lookupKind } from "../../../src/services/config-model/kinds.js"
import { GROUPS } from "./helpers.js"
import { TABLES } from "./kind-tables.js"

describe("fast decoder (fast-decode.ts) against Effect Schema's decoder", () => {
  const options = { errors: "first", onExcessProperty: "error" } as const
  const decodeBoth = (kind: string, spec: unknown) => {
    const info = lookupKind(GROUPS[kind] ?? "", kind)
    if (info === undefined) throw new Error(`no kind ${kind}`)
    const schema = info.schema as Schema.Schema<unknown, unknown>
    return {
      fast: fastDecode(schema, structuredClone(spec ?? {}), options),
      effect: Schema.decodeUnknownEither(schema)(structuredClone(spec ?? {}), options),
    }
  }

  describe.each(Object.entries(TABLES))("%s", (kind, table) => {
    it.each(table.valid.map((spec, i) => [i, spec] as const))("decodes valid example %i as Effect does", (_, spec) => {
      const { fast, effect } = decodeBoth(kind, spec)
      expect(Option.isSome(fast)).toBe(true)
      expect(Either.isRight(effect)).toBe(true)
      if (Option.isSome(fast) && Either.isRight(effect)) {
        expect(fast.value).toStrictEqual(effect.right)
        expect(JSON.stringify(fast.value)).toBe(JSON.stringify(effect.right))
      }
    })

    it.each(table.invalid)("leaves an invalid spec to Effect: %s", (_, spec) => {
      const { fast, effect } = decodeBoth(kind, spec)
      if (Either.isLeft(effect)) expect(Option.isNone(fast)).toBe(true)
      else expect(Option.getOrUndefined(fast)).toStrictEqual(effect.right)
    })
  })

  it("steps aside for a schema it cannot mirror, and keeps doing so", () => {
    const declared = Schema.Struct({ at: Schema.DateFromSelf })
    const input = { at: new Date(0) }
    expect(Either.isRight(Schema.decodeUnknownEither(declared)(input))).toBe(true)
    expect(Option.isNone(fastDecode(declared as Schema.Schema<unknown, unknown>, input, options))).toBe(true)
    expect(Option.isNone(fastDecode(declared as Schema.Schema<unknown, unknown>, input, options))).toBe(true)
  })
})
