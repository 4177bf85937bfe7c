import { describe, expect, it } from "vitest"
import {
  type ContainerRef,
  containerSelected,
  DEFAULT_EXCLUDE,
  deploymentOf,
  filterMatches,
  parseSelectionFilter,
  parseSelectionFilters,
  podSelected,
  type Selection,
  type SelectionFilter,
} from "../../../src/services/bug-report/filter.js"

const ref = (overrides: Partial<ContainerRef> = {}): ContainerRef => ({
  namespace: "shop",
  deployment: "reviews-v1",
  pod: "reviews-v1-abc12",
  labels: { app: "reviews", version: "v1" },
  annotations: { "sidecar.mesh.io/status": "injected", team: "blue" },
  container: "mesh-proxy",
  ...overrides,
})

const filter = (text: string): SelectionFilter => {
  const parsed = parseSelectionFilter(text)
  if (typeof parsed === "string") throw new Error(parsed)
  return parsed
}

const selection = (include: ReadonlyArray<string>, exclude: ReadonlyArray<string> = []): Selection => ({
  include: include.map(filter),
  exclude: exclude.map(filter),
})

describe("parseSelectionFilter", () => {
  it("reads every part, with comma alternatives", () => {
    expect(filter("ns1,ns2/dep/pod-*/app=a,tier/team=blue/mesh-proxy,app")).toEqual({
      namespaces: ["ns1", "ns2"],
      deployments: ["dep"],
      pods: ["pod-*"],
      labels: [{ key: "app", value: "a" }, { key: "tier" }],
      annotations: [{ key: "team", value: "blue" }],
      containers: ["mesh-proxy", "app"],
    })
  })

  it("leaves omitted trailing parts, empty parts and a lone * open", () => {
    const open = { deployments: [], pods: [], labels: [], annotations: [], containers: [] }
    expect(filter("ns1")).toEqual({ namespaces: ["ns1"], ...open })
    expect(filter("ns1//")).toEqual({ namespaces: ["ns1"], ...open })
    expect(filter("ns1/*/*/*/*/*")).toEqual({ namespaces: ["ns1"], ...open })
    expect(filter("")).toEqual({ namespaces: [], ...open })
  })

  it("keeps a label value with = inside and trims spaces", () => {
    expect(filter(" ns / / / k=a=b ").labels).toEqual([{ key: "k", value: "a=b" }])
  })

  it("rejects too many parts, globbed keys and empty keys", () => {
    expect(parseSelectionFilter("a/b/c/d/e/f/g")).toMatch(/at most 6 parts/)
    expect(parseSelectionFilter("ns///ap*=x")).toMatch(/label keys cannot be globs/)
    expect(parseSelectionFilter("ns////te?m=x")).toMatch(/annotation keys cannot be globs/)
    expect(parseSelectionFilter("ns///=x")).toMatch(/empty label key/)
  })

  it("parses lists, skipping blank entries and reporting the first error", () => {
    expect(parseSelectionFilters(["a", " ", "b"])).toHaveLength(2)
    expect(parseSelectionFilters(["a", "x///k*=v", "a/b/c/d/e/f/g"])).toMatch(/globs/)
  })
})

describe("filterMatches", () => {
  it("matches names exactly or as globs", () => {
    expect(filterMatches(filter("shop"), ref())).toBe(true)
    expect(filterMatches(filter("sho"), ref())).toBe(false)
    expect(filterMatches(filter("sh*"), ref())).toBe(true)
    expect(filterMatches(filter("*op"), ref())).toBe(true)
    expect(filterMatches(filter("s?op"), ref())).toBe(true)
    expect(filterMatches(filter("s.op"), ref())).toBe(false)
    expect(filterMatches(filter("shop/reviews-*/reviews-v1-*"), ref())).toBe(true)
    expect(filterMatches(filter("shop/ratings"), ref())).toBe(false)
  })

  it("ORs alternatives within a part and ANDs the parts", () => {
    expect(filterMatches(filter("other,shop/other,reviews-v1"), ref())).toBe(true)
    expect(filterMatches(filter("other,shop/other"), ref())).toBe(false)
    expect(filterMatches(filter("*/*/*/*/*/app,mesh-proxy"), ref())).toBe(true)
    expect(filterMatches(filter("*/*/*/*/*/app"), ref())).toBe(false)
  })

  it("matches label values as globs but keys only exactly", () => {
    expect(filterMatches(filter("//" + "/app=rev*"), ref())).toBe(true)
    expect(filterMatches(filter("///app=ratings"), ref())).toBe(false)
    expect(filterMatches(filter("///App=reviews"), ref())).toBe(false)
    expect(filterMatches(filter("///version"), ref())).toBe(true)
    expect(filterMatches(filter("///missing"), ref())).toBe(false)
    expect(filterMatches(filter("///missing=x,version=v*"), ref())).toBe(true)
  })

  it("matches annotations like labels", () => {
    expect(filterMatches(filter("////team=bl*"), ref())).toBe(true)
    expect(filterMatches(filter("////team=red"), ref())).toBe(false)
    expect(filterMatches(filter("////sidecar.mesh.io/status"), ref())).toBe(false) // '/' splits parts
  })

  it("needs a deployment when one is named", () => {
    expect(filterMatches(filter("shop/reviews-v1"), ref({ deployment: "" }))).toBe(false)
    expect(filterMatches(filter("shop/*"), ref({ deployment: "" }))).toBe(true)
  })
})

describe("containerSelected and podSelected", () => {
  it("selects everything without filters", () => {
    expect(containerSelected(selection([]), ref())).toBe(true)
    expect(podSelected(selection([]), ref())).toBe(true)
  })

  it("needs one include filter and no exclude filter", () => {
    const s = selection(["other", "shop"], ["shop/*/*/*/*/mesh-proxy"])
    expect(containerSelected(s, ref())).toBe(false)
    expect(containerSelected(s, ref({ container: "app" }))).toBe(true)
    expect(containerSelected(s, ref({ namespace: "third", container: "app" }))).toBe(false)
    // The pod stays (its app container is wanted) though one container is excluded.
    expect(podSelected(s, ref())).toBe(true)
  })

  it("drops a pod that an exclude filter without container part matches", () => {
    const s = selection([], ["shop/*/reviews-*"])
    expect(podSelected(s, ref())).toBe(false)
    expect(podSelected(s, ref({ pod: "ratings-1" }))).toBe(true)
  })

  it("drops a pod no include filter could match, whatever its containers", () => {
    const s = selection(["shop/*/*/*/*/app"])
    expect(podSelected(s, ref())).toBe(true)
    expect(podSelected(s, ref({ namespace: "other" }))).toBe(false)
  })

  it("excludes the orchestrator's system namespaces by default", () => {
    const s = selection([], DEFAULT_EXCLUDE)
    for (const ns of ["kube-system", "kube-public", "kube-node-lease", "local-path-storage"])
      expect(podSelected(s, ref({ namespace: ns }))).toBe(false)
    expect(podSelected(s, ref({ namespace: "mesh-system" }))).toBe(true)
  })
})

describe("deploymentOf", () => {
  it("strips the pod-template-hash of the ReplicaSet owner", () => {
    expect(
      deploymentOf({
        metadata: {
          labels: { "pod-template-hash": "5d9c8f" },
          ownerReferences: [{ kind: "ReplicaSet", name: "reviews-v1-5d9c8f" }],
        },
      }),
    ).toBe("reviews-v1")
    expect(deploymentOf({ metadata: { ownerReferences: [{ kind: "ReplicaSet", name: "web-77" }] } })).toBe("web")
    expect(deploymentOf({ metadata: { ownerReferences: [{ kind: "StatefulSet", name: "db" }] } })).toBe("")
    expect(deploymentOf({ metadata: {} })).toBe("")
  })
})
