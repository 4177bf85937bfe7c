/** serviceentry.ConflictingServiceEntryProtocolAnalyzer (MSH0177), exportTo honoured. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, summary } from "./support.js"

const NAME = "serviceentry.ConflictingServiceEntryProtocolAnalyzer"
const entry = (name: string, protocol: string, namespace = "default", exportTo = "", port = 8080) =>
  mesh(
    "ServiceEntry",
    name,
    `{hosts: [api.example.com], ports: [{number: ${port}, name: p, protocol: ${protocol}}], resolution: DNS${exportTo === "" ? "" : `, exportTo: ${exportTo}`}}`,
    namespace,
  )

describe("serviceentry.ConflictingServiceEntryProtocolAnalyzer", () => {
  it("reports each ServiceEntry of a host and port given two protocols", () => {
    const found = analyze(NAME, entry("a", "HTTP"), entry("b", "TCP", "other"))
    expect(summary(found)).toEqual(["MSH0177 ServiceEntry/default/a", "MSH0177 ServiceEntry/other/b"])
    expect(found[0]?.text).toBe(
      'Multiple ServiceEntries (default/a, other/b) define the same host "api.example.com" and port 8080 with conflicting protocols (HTTP, TCP).',
    )
  })

  it("does not report the same protocol (case aside), another port, or entries local to different namespaces", () => {
    expect(analyze(NAME, entry("a", "HTTP"), entry("b", "HTTP", "other"))).toEqual([])
    expect(analyze(NAME, entry("a", "HTTP"), entry("b", "TCP", "other", "", 9090))).toEqual([])
    expect(analyze(NAME, entry("a", "HTTP", "default", "['.']"), entry("b", "TCP", "other", "['.']"))).toEqual([])
  })

  it("an entry exported to one namespace meets one exported to all", () => {
    expect(summary(analyze(NAME, entry("a", "HTTP", "default", "[team]"), entry("b", "GRPC", "other")))).toEqual([
      "MSH0177 ServiceEntry/default/a",
      "MSH0177 ServiceEntry/other/b",
    ])
    expect(
      summary(analyze(NAME, entry("a", "HTTP", "default", "[team]"), entry("b", "GRPC", "other", "[team]"))),
    ).toHaveLength(2)
  })
})
