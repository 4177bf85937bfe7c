import { describe, expect, it } from "vitest"
import {
  crdGroups,
  crdSources,
  planGroup,
  servedPlurals,
  servedVersions,
} from "../../../src/services/config-model/crd-versions.js"

const groupDoc = (versions: ReadonlyArray<string>, preferred = versions[0]) => ({
  versions: versions.map((version) => ({ groupVersion: `g/${version}`, version })),
  ...(preferred !== undefined ? { preferredVersion: { version: preferred } } : {}),
})
const plurals = (entries: Record<string, ReadonlyArray<string>>) =>
  new Map(Object.entries(entries).map(([v, names]) => [v, new Set(names)] as const))
const watchOf = (plan: ReturnType<typeof planGroup>) => plan.watch.map((w) => `${w.source.info.kind}@${w.version}`)

describe("crdSources", () => {
  it("lists every mesh kind under its mesh group and its upstream alias, never orchestrator kinds", () => {
    const sources = crdSources()
    const vs = sources.filter((s) => s.info.kind === "VirtualService").map((s) => `${s.group} ${s.upstream}`)
    expect(vs).toEqual(["networking.mesh.io false", "networking.istio.io true"])
    expect(sources.some((s) => s.info.kind === "Pod" || s.info.kind === "Service")).toBe(false)
    expect(sources.filter((s) => !s.upstream)).toHaveLength(14)
    expect(sources.filter((s) => s.upstream)).toHaveLength(14)
  })

  it("groups come mesh groups first, each once", () => {
    expect(crdGroups()).toEqual([
      "networking.mesh.io",
      "security.mesh.io",
      "telemetry.mesh.io",
      "extensions.mesh.io",
      "networking.istio.io",
      "security.istio.io",
      "telemetry.istio.io",
      "extensions.istio.io",
    ])
  })
})

describe("discovery documents", () => {
  it("reads served versions and plurals, skipping subresources and junk", () => {
    expect(servedVersions({ versions: [{ version: "v1" }, {}, { version: "" }, { version: "v1beta1" }] })).toEqual([
      "v1",
      "v1beta1",
    ])
    expect([
      ...servedPlurals({ resources: [{ name: "virtualservices" }, { name: "virtualservices/status" }, {}] }),
    ]).toEqual(["virtualservices"])
    expect(servedPlurals(undefined).size).toBe(0)
  })
})

describe("planGroup", () => {
  it("a group not served: every kind absent, nothing watched", () => {
    const plan = planGroup("security.mesh.io", undefined, new Map())
    expect(plan.watch).toEqual([])
    expect(plan.absent.map((s) => s.info.kind)).toEqual([
      "PeerAuthentication",
      "RequestAuthentication",
      "AuthorizationPolicy",
    ])
  })

  it("watches the preferred version when known, else the newest known serving the kind", () => {
    const plan = planGroup(
      "networking.mesh.io",
      groupDoc(["v1beta1", "v1", "v1alpha3"]),
      plurals({
        v1: ["virtualservices"],
        v1beta1: ["virtualservices", "destinationrules"],
        v1alpha3: ["virtualservices", "destinationrules", "envoyfilters"],
      }),
    )
    expect(watchOf(plan)).toEqual(["DestinationRule@v1beta1", "VirtualService@v1beta1", "EnvoyFilter@v1alpha3"])
    expect(plan.unknownVersions).toEqual([])
    expect(plan.absent.map((s) => s.info.kind)).toContain("ServiceEntry")
  })

  it("a version it does not know is reported and never watched; a kind served only there is not watched", () => {
    const plan = planGroup(
      "networking.mesh.io",
      groupDoc(["v2", "v1"]),
      plurals({ v2: ["virtualservices", "gateways"], v1: ["virtualservices"] }),
    )
    expect(watchOf(plan)).toEqual(["VirtualService@v1"])
    expect(plan.unknownVersions).toEqual(["v2"])
    expect(plan.onlyUnknown.map((o) => `${o.source.info.kind} ${o.versions.join(",")}`)).toEqual(["Gateway v2"])
    expect(plan.absent.map((s) => s.info.kind)).not.toContain("Gateway")
  })

  it("an upstream alias group plans its own kinds, marked upstream", () => {
    const plan = planGroup("networking.istio.io", groupDoc(["v1alpha3"]), plurals({ v1alpha3: ["sidecars"] }))
    expect(plan.watch.map((w) => `${w.source.group} ${w.source.info.kind}@${w.version} ${w.source.upstream}`)).toEqual([
      "networking.istio.io Sidecar@v1alpha3 true",
    ])
  })
})
