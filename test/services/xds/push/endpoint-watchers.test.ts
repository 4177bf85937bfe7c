import { describe, expect, it } from "vitest"
import { makeEndpointWatchers } from "../../../../src/services/xds/push/endpoint-watchers.js"

const hosts = (...names: ReadonlyArray<string>): ReadonlySet<string> => new Set(names)

describe("endpoint watchers", () => {
  it("names only the connections watching a changed host, each once", () => {
    const index = makeEndpointWatchers<string>()
    index.set("a", hosts("h1", "h2"))
    index.set("b", hosts("h2"))
    index.set("c", hosts("h3"))
    expect([...index.candidates(["h1"])]).toEqual(["a"])
    expect([...index.candidates(["h1", "h2"])].sort()).toEqual(["a", "b"])
    expect([...index.candidates(["h4"])]).toEqual([])
  })

  it("asks a connection that cannot be indexed about every change", () => {
    const index = makeEndpointWatchers<string>()
    index.set("wildcard", "any")
    index.set("a", hosts("h1"))
    expect([...index.candidates(["h9"])]).toEqual(["wildcard"])
    expect([...index.candidates(["h1"])].sort()).toEqual(["a", "wildcard"])
  })

  it("tells whether a change of some hosts concerns anyone", () => {
    const index = makeEndpointWatchers<string>()
    expect(index.watched(["h1"])).toBe(false)
    index.set("a", hosts("h1"))
    expect(index.watched(["h2", "h1"])).toBe(true)
    expect(index.watched(["h2"])).toBe(false)
    index.set("wildcard", "any")
    expect(index.watched(["h2"])).toBe(true)
    index.delete("wildcard")
    index.delete("a")
    expect(index.watched(["h1"])).toBe(false)
  })

  it("follows a connection's watch as it changes, and forgets it when it goes", () => {
    const index = makeEndpointWatchers<string>()
    index.set("a", hosts("h1"))
    index.set("a", hosts("h2"))
    expect([...index.candidates(["h1"])]).toEqual([])
    expect([...index.candidates(["h2"])]).toEqual(["a"])
    index.set("a", "any")
    expect([...index.candidates(["h7"])]).toEqual(["a"])
    index.set("a", hosts("h3"))
    expect([...index.candidates(["h7"])]).toEqual([])
    // no EDS watch: no endpoint push concerns it
    index.set("a", undefined)
    expect([...index.candidates(["h3"])]).toEqual([])
    index.set("b", hosts("h3"))
    index.delete("b")
    index.delete("never-indexed")
    expect([...index.candidates(["h3"])]).toEqual([])
  })

  it("keeps the index when a connection re-states the same watch", () => {
    const index = makeEndpointWatchers<string>()
    const watch = hosts("h1")
    index.set("a", watch)
    index.set("a", watch)
    index.set("b", watch)
    index.delete("b")
    expect([...index.candidates(["h1"])]).toEqual(["a"])
  })
})
