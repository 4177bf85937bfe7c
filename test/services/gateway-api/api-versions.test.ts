/**
 * Issue 36 group 1: every version the current Gateway-API release (v1.6) serves for the kinds the
 * mesh reads is accepted, the old ones stay readable (with the CRDs' deprecation warning), a
 * cluster with the v1.6 CRDs is watched at v1, and a route read at v1 converts like any other.
 */
import { describe, expect, it } from "@effect/vitest"
import { planGroup } from "../../../src/services/config-model/crd-versions.js"
import { deprecationWarningOf, lookupKind } from "../../../src/services/config-model/kinds.js"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import type { TCPRouteSpec, TLSRouteSpec } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import {
  convert,
  GW_REF,
  parentConditions,
  routeStatusOf,
  schemaProblems,
  simpleGateway,
  virtualServicesFor,
} from "./fixtures.js"

const GROUP = "gateway.networking.k8s.io"

/** Served versions per kind in the experimental channel of Gateway API v1.6.1 (its CRDs). */
const RELEASE_VERSIONS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["GatewayClass", ["v1", "v1beta1"]],
  ["Gateway", ["v1", "v1beta1"]],
  ["HTTPRoute", ["v1", "v1beta1"]],
  ["GRPCRoute", ["v1"]],
  ["TCPRoute", ["v1", "v1alpha2"]],
  ["TLSRoute", ["v1", "v1alpha3", "v1alpha2"]],
  ["ReferenceGrant", ["v1", "v1beta1"]],
]

const parseOne = (text: string) => parseConfigDocuments("t.yaml", text)

const tlsRouteYaml = (version: string) => `apiVersion: ${GROUP}/${version}
kind: TLSRoute
metadata: {name: pass, namespace: default}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [db.example.com]
  rules: [{backendRefs: [{name: backend, port: 443}]}]
`
const tcpRouteYaml = (version: string) => `apiVersion: ${GROUP}/${version}
kind: TCPRoute
metadata: {name: db, namespace: default}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: tcp}]
  rules: [{backendRefs: [{name: backend, port: 5432}]}]
`

describe("Gateway-API versions of the v1.6 release", () => {
  it.each(RELEASE_VERSIONS)("%s is accepted at every version the release serves: %j", (kind, versions) => {
    const info = lookupKind(GROUP, kind)
    expect(info).toBeDefined()
    for (const v of versions) expect(info?.versions).toContain(v)
  })

  it.each(["v1", "v1alpha3", "v1alpha2"])("a TLSRoute at %s parses and is normalised to v1", (version) => {
    const parsed = parseOne(tlsRouteYaml(version))
    expect(parsed.issues).toEqual([])
    expect(parsed.resources.map((r) => `${r.kind}@${r.version}`)).toEqual(["TLSRoute@v1"])
  })

  it.each(["v1", "v1alpha2"])("a TCPRoute at %s parses and is normalised to v1", (version) => {
    const parsed = parseOne(tcpRouteYaml(version))
    expect(parsed.issues).toEqual([])
    expect(parsed.resources.map((r) => `${r.kind}@${r.version}`)).toEqual(["TCPRoute@v1"])
  })

  it("a ReferenceGrant at v1 parses (kept at v1beta1, the stored version)", () => {
    const parsed = parseOne(`apiVersion: ${GROUP}/v1
kind: ReferenceGrant
metadata: {name: g, namespace: backend}
spec:
  from: [{group: ${GROUP}, kind: HTTPRoute, namespace: frontend}]
  to: [{group: "", kind: Service}]
`)
    expect(parsed.issues).toEqual([])
    expect(parsed.resources.map((r) => `${r.kind}@${r.version}`)).toEqual(["ReferenceGrant@v1beta1"])
  })

  it("the alpha versions of TCPRoute and TLSRoute warn as the CRDs do; v1 does not", () => {
    const tls = lookupKind(GROUP, "TLSRoute")!
    const tcp = lookupKind(GROUP, "TCPRoute")!
    const wording = (kind: string, v: string) =>
      `The ${v} version of ${kind} has been deprecated and will be removed in a future release of the API. Please upgrade to v1.`
    expect(deprecationWarningOf(tls, "v1alpha2")).toBe(wording("TLSRoute", "v1alpha2"))
    expect(deprecationWarningOf(tls, "v1alpha3")).toBe(wording("TLSRoute", "v1alpha3"))
    expect(deprecationWarningOf(tcp, "v1alpha2")).toBe(wording("TCPRoute", "v1alpha2"))
    expect(deprecationWarningOf(tls, "v1")).toBeUndefined()
    expect(deprecationWarningOf(tcp, "v1")).toBeUndefined()
  })

  it("a cluster with the v1.6 standard CRDs is watched at v1 for every route kind, without the alpha switch", () => {
    const plurals = new Map<string, ReadonlySet<string>>([
      [
        "v1",
        new Set([
          "gatewayclasses",
          "gateways",
          "httproutes",
          "grpcroutes",
          "tcproutes",
          "tlsroutes",
          "referencegrants",
        ]),
      ],
      ["v1beta1", new Set(["gatewayclasses", "gateways", "httproutes", "referencegrants"])],
    ])
    const plan = planGroup(
      GROUP,
      { versions: [{ version: "v1" }, { version: "v1beta1" }], preferredVersion: { version: "v1" } },
      plurals,
    )
    expect(plan.watch.map((w) => `${w.source.info.kind}@${w.version}`)).toEqual([
      "GatewayClass@v1",
      "KubernetesGateway@v1",
      "HTTPRoute@v1",
      "GRPCRoute@v1",
      "TCPRoute@v1",
      "TLSRoute@v1",
      "ReferenceGrant@v1",
    ])
    expect(plan.unknownVersions).toEqual([])
    expect(plan.onlyUnknown).toEqual([])
  })

  it("TLSRoute and TCPRoute read at v1 convert to tls and tcp routes with Accepted status", () => {
    const tls = parseOne(tlsRouteYaml("v1")).resources[0] as ConfigResource<TLSRouteSpec>
    const tcp = parseOne(tcpRouteYaml("v1")).resources[0] as ConfigResource<TCPRouteSpec>
    const out = convert({
      gateways: [
        simpleGateway([
          { name: "tcp", port: 9000, protocol: "TCP", allowedRoutes: { namespaces: { from: "All" } } },
          {
            name: "tls",
            port: 8443,
            protocol: "TLS",
            hostname: "*.example.com",
            tls: { mode: "Passthrough" },
            allowedRoutes: { namespaces: { from: "All" } },
          },
        ]),
      ],
      tlsRoutes: [tls],
      tcpRoutes: [tcp],
    })
    expect(schemaProblems(out)).toEqual([])
    const kinds = virtualServicesFor(out, GW_REF).map((vs) => [vs.spec.tls !== undefined, vs.spec.tcp !== undefined])
    expect(kinds).toContainEqual([true, false])
    expect(kinds).toContainEqual([false, true])
    expect(parentConditions(routeStatusOf(out, "TLSRoute", "pass"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
    expect(parentConditions(routeStatusOf(out, "TCPRoute", "db"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
  })
})
