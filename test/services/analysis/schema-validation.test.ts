/**
 * Schema validation as analyzers (issue 35): a mesh resource's schema errors are reported by its
 * kind's `schema.ValidationAnalyzer.<Kind>` (so `--analyzer` selects them), one per mesh kind as
 * the reference has; kinds without one (Gateway-API) and undecodable documents are reported while
 * reading.
 */
import { describe, expect, it } from "@effect/vitest"
import { findAnalyzer } from "../../../src/services/analysis/analyzer.js"
import { REFERENCE_VALIDATED_KINDS } from "../../../src/services/analysis/analyzer-docs.js"
import { ALL_ANALYZERS, DEFAULT_ANALYZERS, selectAnalyzers } from "../../../src/services/analysis/analyzers/index.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { runAnalysis } from "../../../src/services/analysis/run.js"
import { makeSnapshot } from "../../../src/services/analysis/snapshot.js"
import { analyze, mesh, service, summary } from "./support.js"

const GATEWAY_WITHOUT_SERVERS = mesh("Gateway", "gw", "{selector: {app: gw}}")

const codes = (names: ReadonlyArray<string>, ...documents: ReadonlyArray<string>) => {
  const read = readDocuments("f.yaml", documents.join("---\n"), "default")
  return runAnalysis(makeSnapshot(read.entries), read.messages, {
    analyzers: selectAnalyzers(names).analyzers,
    suppressions: [],
    outputThreshold: "Info",
  }).messages.map((m) => `${m.type.code} ${m.resource?.kind}/${m.resource?.name}`)
}

describe("schema.ValidationAnalyzer.<Kind>", () => {
  it("the default set has one per mesh kind, in the reference's order", () => {
    expect(DEFAULT_ANALYZERS.map((a) => a.name).filter((n) => n.startsWith("schema."))).toEqual(
      REFERENCE_VALIDATED_KINDS.map((k) => `schema.ValidationAnalyzer.${k}`),
    )
    expect(REFERENCE_VALIDATED_KINDS).toHaveLength(14)
  })

  it("reports its kind's schema errors on the resource, with the field's path", () => {
    const found = analyze("schema.ValidationAnalyzer.Gateway", GATEWAY_WITHOUT_SERVERS)
    expect(summary(found)).toEqual(["MSH0106 Gateway/default/gw"])
    expect(found[0]?.text).toMatch(/^Schema validation error: spec\.servers/)
    expect(found[0]?.path?.[0]).toBe("spec")
    expect(analyze("schema.ValidationAnalyzer.DestinationRule", GATEWAY_WITHOUT_SERVERS)).toEqual([])
  })

  it("reads nothing of a valid resource", () => {
    expect(
      analyze(
        "schema.ValidationAnalyzer.Gateway",
        mesh(
          "Gateway",
          "gw",
          "{selector: {app: gw}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}",
        ),
      ),
    ).toEqual([])
  })

  it("--analyzer selects them: another analyzer alone does not report schema errors", () => {
    const bad = [GATEWAY_WITHOUT_SERVERS, service("web", "{app: web}", "[{name: web, port: 80}]")]
    expect(codes([], ...bad)).toEqual(expect.arrayContaining(["MSH0106 Gateway/gw", "MSH0118 Service/web"]))
    expect(codes(["service.PortNameAnalyzer"], ...bad)).toEqual(["MSH0118 Service/web"])
    expect(codes(["schema.ValidationAnalyzer.Gateway"], ...bad)).toEqual(["MSH0106 Gateway/gw"])
  })

  it("the VirtualService one also warns of unreachable rules", () => {
    const vs = findAnalyzer(ALL_ANALYZERS, "schema.ValidationAnalyzer.VirtualService")
    expect(vs?.parts?.map((p) => p.name)).toEqual([
      "schema.ValidationAnalyzer.VirtualService",
      "virtualservice.UnreachableRuleAnalyzer",
      "virtualservice.IneffectiveMatchAnalyzer",
    ])
  })

  it("undecodable documents and kinds without an analyzer are reported while reading, whatever is selected", () => {
    const undecodable = mesh("DestinationRule", "dr", "{host: 12}")
    const route = `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: default}\nspec: {rules: [{backendRefs: [{name: web, port: 99999}]}]}\n`
    const read = readDocuments("f.yaml", [undecodable, route].join("---\n"), "default")
    expect(read.messages.map((m) => `${m.type.code} ${m.resource?.kind}/${m.resource?.name}`)).toEqual([
      "MSH0106 DestinationRule/dr",
      "MSH0106 HTTPRoute/r",
    ])
    expect(codes(["service.PortNameAnalyzer"], undecodable, route)).toEqual([
      "MSH0106 DestinationRule/dr",
      "MSH0106 HTTPRoute/r",
    ])
  })
})

describe("selectAnalyzers", () => {
  it("ignores unknown names, as the reference does; with none known the default set runs", () => {
    expect(selectAnalyzers([])).toEqual({ analyzers: DEFAULT_ANALYZERS, unknown: [] })
    expect(selectAnalyzers(["no.Such"])).toEqual({ analyzers: DEFAULT_ANALYZERS, unknown: ["no.Such"] })
    const some = selectAnalyzers(["no.Such", "service.PortNameAnalyzer", "annotations.AlphaAnalyzer"])
    expect(some.analyzers.map((a) => a.name)).toEqual(["service.PortNameAnalyzer", "annotations.AlphaAnalyzer"])
    expect(some.unknown).toEqual(["no.Such"])
  })
})
