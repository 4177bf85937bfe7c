/**
 * Slots: a module-level key, a value held by the owner. A PushContext's own slots go with it (a
 * context derived for an endpoint change starts with none); its input memo's slots are shared by
 * the contexts built from it; contexts built apart share nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { type LocalSlot, makeLocals, memoOf } from "../../../../src/services/xds/model/local-slot.js"
import {
  derivePushContext,
  emptyPushContextInput,
  makePushContext,
  type PushContext,
} from "../../../../src/services/xds/model/push-context.js"
import { ECHO, endpoint, service } from "../../../fixtures/xds/mesh.js"

const mesh = () => ({
  ...emptyPushContextInput,
  services: [service(ECHO)],
  endpoints: [endpoint(ECHO, "10.0.0.1", 8080)],
})

describe("slots", () => {
  it("make the value once per owner, from the owner", () => {
    let made = 0
    const versionSlot: LocalSlot<string, PushContext> = {
      make: (push) => {
        made++
        return push.version
      },
    }
    const a = makePushContext(mesh(), undefined, "a")
    const b = makePushContext(mesh(), undefined, "b")
    expect([a.local(versionSlot), a.local(versionSlot), b.local(versionSlot)]).toEqual(["a", "a", "b"])
    expect(made).toBe(2)
  })

  it("remember a value that is undefined", () => {
    let made = 0
    const slot: LocalSlot<undefined> = {
      make: () => {
        made++
        return undefined
      },
    }
    const locals = makeLocals()
    locals(slot)
    locals(slot)
    expect(made).toBe(1)
  })

  it("of a context are not its derived context's; of its input memo they are", () => {
    const perPush: LocalSlot<Map<string, number>, PushContext> = { make: () => new Map() }
    const perInput: LocalSlot<WeakMap<object, number>> = { make: () => new WeakMap() }
    const first = makePushContext(mesh(), undefined, "1")
    first.local(perPush).set("k", 1)
    const derived = derivePushContext(
      first,
      { ...first.input, endpoints: [endpoint(ECHO, "10.0.0.2", 8080)] },
      new Set([ECHO]),
      "2",
    )
    expect(derived.local(perPush).has("k")).toBe(false)
    expect(derived.local(perPush)).not.toBe(first.local(perPush))
    expect(derived.memo.local(perInput)).toBe(first.memo.local(perInput))
    const rebuilt = makePushContext(derived.input, undefined, "3", derived)
    expect(rebuilt.memo.local(perInput)).toBe(first.memo.local(perInput))
    const apart = makePushContext(mesh(), undefined, "1")
    expect(apart.memo.local(perInput)).not.toBe(first.memo.local(perInput))
  })

  it("memoOf makes a missing entry once", () => {
    const memo = new Map<string, { n: number }>()
    const one = memoOf(memo, "a", () => ({ n: 1 }))
    expect(memoOf(memo, "a", () => ({ n: 2 }))).toBe(one)
  })
})
