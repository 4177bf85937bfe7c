/** Route destinations whose subset no visible DestinationRule for their host defines. */
import { describe, expect, it } from "@effect/vitest"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import { formatWarning, undefinedSubsetWarnings } from "../../../src/services/config-model/subset-references.js"

const res = (kind: string, namespace: string, name: string, spec: unknown, file?: string): ConfigResource => ({
  group: "networking.mesh.io",
  version: "v1",
  kind,
  meta: { name, namespace, labels: {}, annotations: {} },
  spec,
  ...(file !== undefined ? { source: { file, documentIndex: 2 } } : {}),
})

const vs = (namespace: string, destination: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  res("VirtualService", namespace, "vs", { hosts: ["x"], http: [{ route: [{ destination }], ...extra }] })
const dr = (namespace: string, host: string, subsets: ReadonlyArray<string>, exportTo?: ReadonlyArray<string>) =>
  res("DestinationRule", namespace, `dr-${host}`, {
    host,
    subsets: subsets.map((name) => ({ name, labels: { version: name } })),
    ...(exportTo !== undefined ? { exportTo } : {}),
  })

const paths = (resources: ReadonlyArray<ConfigResource>) => undefinedSubsetWarnings(resources).map((w) => w.path)

describe("undefined subset references", () => {
  it("resolves short hosts in each resource's own namespace", () => {
    const dest = { host: "reviews", subset: "v1" }
    expect(paths([vs("a", dest), dr("a", "reviews", ["v1"])])).toEqual([])
    // The DestinationRule's short host means reviews.b...: it does not cover reviews.a...
    expect(paths([vs("a", dest), dr("b", "reviews", ["v1"])])).toEqual(["spec.http[0].route[0].destination.subset"])
    expect(paths([vs("a", dest), dr("b", "reviews.a.svc.cluster.local", ["v1"])])).toEqual([])
  })

  it("honours exportTo and wildcard hosts", () => {
    const dest = { host: "reviews.a.svc.cluster.local", subset: "v1" }
    expect(paths([vs("a", dest), dr("b", "reviews.a.svc.cluster.local", ["v1"], ["."])])).toHaveLength(1)
    expect(paths([vs("a", dest), dr("b", "reviews.a.svc.cluster.local", ["v1"], ["a"])])).toEqual([])
    expect(paths([vs("a", dest), dr("a", "*.a.svc.cluster.local", ["v1"])])).toEqual([])
    expect(paths([vs("a", dest), dr("a", "*.b.svc.cluster.local", ["v1"])])).toHaveLength(1)
  })

  it("checks mirrors too, and says where the resource came from", () => {
    const resources = [
      res(
        "VirtualService",
        "a",
        "vs",
        {
          hosts: ["x"],
          http: [{ route: [{ destination: { host: "x" } }], mirror: { host: "x", subset: "shadow" } }],
        },
        "/cfg/vs.yaml",
      ),
      dr("a", "x", ["v1"]),
    ]
    const [warning] = undefinedSubsetWarnings(resources)
    expect(formatWarning(warning!)).toBe(
      '/cfg/vs.yaml document 2 VirtualService a/vs: field spec.http[0].mirror.subset: referenced host+subset not found: the DestinationRules for host x.a.svc.cluster.local define no subset "shadow" (subsets: v1; requests routed there fail)',
    )
    expect(formatWarning({ ...warning!, file: "" })).toMatch(
      /^VirtualService a\/vs: field spec\.http\[0\]\.mirror\.subset: /,
    )
  })
})
