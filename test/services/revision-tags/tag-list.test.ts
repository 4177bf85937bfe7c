/** `tag list` rows and table, and the removal warning and confirmation of `tag remove`. */
import { describe, expect, it } from "vitest"
import type { Obj } from "../../../src/services/orchestrator/json.js"
import { confirmed, describeTags, removalWarning, tagTable } from "../../../src/services/revision-tags/tag-list.js"

const webhook = (tag: string, revision: string): Obj => ({
  metadata: { name: `mesh-revision-tag-${tag}`, labels: { "mesh.io/tag": tag, "mesh.io/rev": revision } },
})
const namespace = (name: string, labels: Record<string, string> = {}): Obj => ({ metadata: { name, labels } })

describe("describeTags", () => {
  it("lists each tag with its revision and the namespaces labelled with it, sorted", () => {
    const tags = describeTags(
      [webhook("prod", "canary"), webhook("default", "stable"), { metadata: { name: "untagged" } }],
      [
        namespace("shop", { "mesh.io/rev": "prod" }),
        namespace("bank", { "mesh.io/rev": "prod" }),
        namespace("other", { "mesh.io/rev": "canary" }),
        namespace("plain"),
      ],
    )
    expect(tags).toEqual([
      { tag: "default", revision: "stable", namespaces: [] },
      { tag: "prod", revision: "canary", namespaces: ["bank", "shop"] },
    ])
    expect(tagTable(tags)).toBe(
      ["TAG     REVISION NAMESPACES", "default stable   ", "prod    canary   bank,shop", ""].join("\n"),
    )
  })

  it("prints only the header when there are no tags", () => {
    expect(tagTable(describeTags([], []))).toBe("TAG REVISION NAMESPACES\n")
  })
})

describe("tag removal", () => {
  it("warns with the count and names of the namespaces still using the tag", () => {
    expect(removalWarning("prod", ["bank", "shop"])).toMatch(
      /^Caution, found 2 namespace\(s\) still injected by tag "prod": bank shop\n/,
    )
  })

  it("proceeds only on an explicit yes", () => {
    expect(["y", "Y", "yes", " yes "].map(confirmed)).toEqual([true, true, true, true])
    expect(["", "n", "no", "yess"].map(confirmed)).toEqual([false, false, false, false])
  })
})
