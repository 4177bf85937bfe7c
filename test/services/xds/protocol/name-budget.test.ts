/**
 * The bounds on resource names ADS callers make the server hold: each request as it is read,
 * each stream's watched names, and the server's total, released when a stream ends.
 */
import { describe, expect, it } from "vitest"
import {
  defaultNameLimits,
  MAX_RESOURCE_NAME_LENGTH,
  makeNameBudget,
  requestNamesProblem,
} from "../../../../src/services/xds/protocol/name-budget.js"

const limits = { streamNames: 4, streamBytes: 20, totalNames: 6, totalBytes: 0 }

describe("a request's names", () => {
  it("are taken within the bounds, from every list and map that names resources", () => {
    expect(requestNamesProblem({ resource_names: ["a", "b"] }, limits)).toBeUndefined()
    expect(
      requestNamesProblem(
        { resource_names_subscribe: ["a"], resource_names_unsubscribe: ["b"], initial_resource_versions: { c: "1" } },
        limits,
      ),
    ).toBeUndefined()
    expect(requestNamesProblem({}, limits)).toBeUndefined()
  })

  it("refuse a name over the length bound with INVALID_ARGUMENT, naming the field", () => {
    const long = "n".repeat(MAX_RESOURCE_NAME_LENGTH + 1)
    expect(requestNamesProblem({ resource_names: [long] }, defaultNameLimits)).toEqual({
      code: "INVALID_ARGUMENT",
      message: `a name in resource_names is ${MAX_RESOURCE_NAME_LENGTH + 1} characters long; at most ${MAX_RESOURCE_NAME_LENGTH} are accepted`,
    })
    expect(requestNamesProblem({ initial_resource_versions: { [long]: "v" } }, defaultNameLimits)?.message).toMatch(
      /^a name in initial_resource_versions/,
    )
    expect(requestNamesProblem({ resource_names: ["n".repeat(MAX_RESOURCE_NAME_LENGTH)] }, defaultNameLimits)).toBe(
      undefined,
    )
  })

  it("refuse more names or characters than a whole stream may hold with RESOURCE_EXHAUSTED, naming the setting", () => {
    expect(requestNamesProblem({ resource_names_subscribe: ["a", "b", "c", "d", "e"] }, limits)).toEqual({
      code: "RESOURCE_EXHAUSTED",
      message: "the request names 5 resources; a stream may watch at most 4 (MESH_XDS_MAX_STREAM_NAMES)",
    })
    expect(requestNamesProblem({ resource_names: ["x".repeat(15), "y".repeat(6)] }, limits)).toEqual({
      code: "RESOURCE_EXHAUSTED",
      message:
        "the request's resource names are 21 characters long; a stream's names may be at most 20 (MESH_XDS_MAX_STREAM_NAME_BYTES)",
    })
    // Names a request unsubscribes are not held: only their length is checked.
    expect(requestNamesProblem({ resource_names_unsubscribe: ["a", "b", "c", "d", "e"] }, limits)).toBeUndefined()
    // 0 = no limit.
    const open = { streamNames: 0, streamBytes: 0, totalNames: 0, totalBytes: 0 }
    expect(requestNamesProblem({ resource_names: Array.from({ length: 1000 }, String) }, open)).toBeUndefined()
  })
})

describe("the server's name budget", () => {
  it("counts each stream's watched names and releases them when the stream ends", () => {
    const budget = makeNameBudget(limits)
    const a = budget.open()
    const b = budget.open()
    expect(a.update([["a1", "a2"], ["a3"]])).toBeUndefined()
    expect(b.update([["b1"]])).toBeUndefined()
    expect(budget.held()).toEqual({ names: 4, bytes: 8 })
    // A watch whose names changed replaces what it counted.
    expect(a.update([["a1"]])).toBeUndefined()
    expect(budget.held()).toEqual({ names: 2, bytes: 4 })
    a.release()
    a.release()
    expect(budget.held()).toEqual({ names: 1, bytes: 2 })
    b.release()
    expect(budget.held()).toEqual({ names: 0, bytes: 0 })
  })

  it("refuses a stream going over its own bounds, and changes nothing", () => {
    const budget = makeNameBudget(limits)
    const a = budget.open()
    expect(a.update([["a", "b", "c"]])).toBeUndefined()
    expect(
      a.update([
        ["a", "b", "c"],
        ["d", "e"],
      ]),
    ).toEqual({
      code: "RESOURCE_EXHAUSTED",
      message: "the stream would watch 5 resource names; at most 4 per stream (MESH_XDS_MAX_STREAM_NAMES)",
    })
    expect(a.update([["x".repeat(21)]])?.message).toBe(
      "the stream's resource names would be 21 characters long; at most 20 per stream (MESH_XDS_MAX_STREAM_NAME_BYTES)",
    )
    expect(budget.held()).toEqual({ names: 3, bytes: 3 })
  })

  it("refuses a stream taking the server over its total, but never one that shrinks", () => {
    const budget = makeNameBudget(limits)
    const a = budget.open()
    const b = budget.open()
    expect(a.update([["a1", "a2", "a3", "a4"]])).toBeUndefined()
    expect(b.update([["b1", "b2"]])).toBeUndefined()
    expect(b.update([["b1", "b2", "b3"]])).toEqual({
      code: "RESOURCE_EXHAUSTED",
      message: "the server's streams watch 6 resource names; at most 6 in all (MESH_XDS_MAX_NAMES)",
    })
    expect(a.update([["a1"]])).toBeUndefined()
    expect(b.update([["b1", "b2", "b3"]])).toBeUndefined()
    expect(budget.held()).toEqual({ names: 4, bytes: 8 })
  })

  it("bounds the total characters too", () => {
    const budget = makeNameBudget({ streamNames: 0, streamBytes: 0, totalNames: 0, totalBytes: 10 })
    const a = budget.open()
    expect(a.update([["x".repeat(8)]])).toBeUndefined()
    expect(budget.open().update([["yyy"]])?.message).toBe(
      "the server's streams watch resource names of 8 characters; at most 10 in all (MESH_XDS_MAX_NAME_BYTES)",
    )
  })

  it("measures a names collection once while the watch keeps it", () => {
    const budget = makeNameBudget(defaultNameLimits)
    const stream = budget.open()
    let walks = 0
    const names = ["a", "b"]
    const counted: Iterable<string> = {
      [Symbol.iterator]: () => {
        walks++
        return names[Symbol.iterator]()
      },
    }
    for (let i = 0; i < 5; i++) expect(stream.update([counted])).toBeUndefined()
    expect(walks).toBe(1)
  })
})
