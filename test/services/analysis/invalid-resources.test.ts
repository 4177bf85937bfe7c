/**
 * Invalid resources are analyzed all the same (issue 35 group 1): a schema error is reported
 * (MSH0106) and the resource's other findings stand, as the reference's file source does; an
 * object that cannot be decoded at all (a field of the wrong type, an unknown field) stays out.
 */
import { describe, expect, it } from "@effect/vitest"
import { DEFAULT_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { runAnalysis } from "../../../src/services/analysis/run.js"
import { makeSnapshot } from "../../../src/services/analysis/snapshot.js"
import { mesh } from "./support.js"

const analyzeAll = (...documents: ReadonlyArray<string>) => {
  const read = readDocuments("f.yaml", documents.join("---\n"), "default")
  return runAnalysis(makeSnapshot(read.entries), read.messages, {
    analyzers: DEFAULT_ANALYZERS,
    suppressions: [],
    outputThreshold: "Info",
  }).messages.map((m) => `${m.type.code} ${m.resource?.kind}/${m.resource?.name}: ${m.text}`)
}

describe("invalid resources", () => {
  it("a Gateway without servers is still checked for its selector", () => {
    const found = analyzeAll(mesh("Gateway", "gw", "{selector: {app: nowhere}}"))
    expect(found).toContain('MSH0101 Gateway/gw: Referenced selector not found: "app=nowhere"')
    expect(found.some((m) => m.startsWith("MSH0106 Gateway/gw: Schema validation error: spec.servers"))).toBe(true)
  })

  it("a VirtualService without routes still has its gateways looked up", () => {
    const found = analyzeAll(mesh("VirtualService", "vs", "{hosts: [a.example.com], gateways: [missing-gw]}"))
    expect(found.some((m) => m.startsWith("MSH0106 VirtualService/vs"))).toBe(true)
    expect(found.some((m) => m.startsWith("MSH0101 VirtualService/vs") && m.includes("missing-gw"))).toBe(true)
  })

  it("an EnvoyFilter with a bad patch is still checked for its operations", () => {
    const filter = mesh(
      "EnvoyFilter",
      "ef",
      "{configPatches: [{applyTo: HTTP_FILTER, match: {listener: {filterChain: {filter: {name: envoy.filters.network.http_connection_manager}}}}, patch: {operation: INSERT_BEFORE}}]}",
      "default",
      "networking.mesh.io/v1alpha3",
    )
    const found = analyzeAll(filter)
    expect(found.some((m) => m.startsWith("MSH0106 EnvoyFilter/ef"))).toBe(true)
    expect(found.some((m) => m.startsWith("MSH0151 EnvoyFilter/ef"))).toBe(true)
  })

  it("a valid resource has no schema error; an undecodable one is reported but not analyzed", () => {
    expect(
      analyzeAll(
        mesh(
          "Gateway",
          "gw",
          "{selector: {app: nowhere}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}",
        ),
      ).filter((m) => m.startsWith("MSH0106")),
    ).toEqual([])
    const wrongType = analyzeAll(mesh("Gateway", "gw", "{selector: {app: nowhere}, servers: oops}"))
    expect(wrongType.some((m) => m.startsWith("MSH0106 Gateway/gw"))).toBe(true)
    expect(wrongType.some((m) => m.startsWith("MSH0101"))).toBe(false)
  })
})
