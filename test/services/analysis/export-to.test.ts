/**
 * exportTo in host lookups and conflicts (issue 35 group 3): VirtualService and ServiceEntry
 * `exportTo`, and the Service annotation `networking.mesh.io/exportTo`.
 */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, summary } from "./support.js"

const route = (host: string, namespace: string, exportTo = "") =>
  mesh(
    "VirtualService",
    "vs",
    `{hosts: [front.example.com]${exportTo === "" ? "" : `, exportTo: ${exportTo}`}, http: [{route: [{destination: {host: ${host}}}]}]}`,
    namespace,
  )
const entry = (exportTo: string, host = "api.example.com", resolution = "DNS") =>
  mesh(
    "ServiceEntry",
    "api",
    `{hosts: [${host}], ports: [{number: 80, name: http, protocol: HTTP}], resolution: ${resolution}${exportTo === "" ? "" : `, exportTo: ${exportTo}`}}`,
    "owner",
  )
const exportedService = (annotation: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: owner, annotations: {networking.mesh.io/exportTo: "${annotation}"}}\nspec: {ports: [{name: tcp, port: 5432}]}\n`

const hostFindings = (...docs: ReadonlyArray<string>) =>
  analyze("virtualservice.DestinationHostAnalyzer", ...docs).map((m) => m.text)

describe("exportTo in destination lookups", () => {
  it("a ServiceEntry exported to its own namespace is not found from another", () => {
    expect(hostFindings(entry("['.']"), route("api.example.com", "client"))).toEqual([
      'Referenced host not found: "api.example.com"',
    ])
    expect(hostFindings(entry("['.']"), route("api.example.com", "owner"))).toEqual([])
  })

  it("a ServiceEntry exported to all, by default or with '*', is found everywhere", () => {
    expect(hostFindings(entry(""), route("api.example.com", "client"))).toEqual([])
    expect(hostFindings(entry("['*']"), route("api.example.com", "client"))).toEqual([])
  })

  it("a ServiceEntry exported to a named namespace is found from it, or when the VirtualService's exportTo names it", () => {
    expect(hostFindings(entry("[client]"), route("api.example.com", "client"))).toEqual([])
    expect(hostFindings(entry("[client]"), route("api.example.com", "third"))).toHaveLength(1)
    expect(hostFindings(entry("[client]"), route("api.example.com", "third", "[client]"))).toEqual([])
  })

  it("a wildcard ServiceEntry host is visible only where it is exported", () => {
    const wildcard = entry("['.']", "'*.example.com'", "NONE")
    expect(hostFindings(wildcard, route("api.example.com", "owner"))).toEqual([])
    expect(hostFindings(wildcard, route("api.example.com", "client"))).toHaveLength(1)
  })

  it("a Service's exportTo annotation limits where it is found", () => {
    expect(hostFindings(exportedService("."), route("db.owner.svc.cluster.local", "client"))).toEqual([
      'Referenced host not found: "db.owner.svc.cluster.local"',
    ])
    expect(hostFindings(exportedService("."), route("db.owner.svc.cluster.local", "owner"))).toEqual([])
    expect(hostFindings(exportedService("client, other"), route("db.owner.svc.cluster.local", "client"))).toEqual([])
    expect(hostFindings(exportedService("*"), route("db.owner.svc.cluster.local", "client"))).toEqual([])
  })
})

describe("exportTo in mesh host conflicts", () => {
  const meshRoute = (name: string, namespace: string, exportTo: string, host = "api.example.com") =>
    mesh(
      "VirtualService",
      name,
      `{hosts: ['${host}']${exportTo === "" ? "" : `, exportTo: ${exportTo}`}, http: [{route: [{destination: {host: x}}]}]}`,
      namespace,
    )
  const conflicts = (...docs: ReadonlyArray<string>) =>
    analyze("virtualservice.ConflictingMeshGatewayHostsAnalyzer", ...docs)

  it("two VirtualServices each local to its own namespace do not conflict", () => {
    expect(conflicts(meshRoute("a", "one", "['.']"), meshRoute("b", "two", "['.']"))).toEqual([])
  })

  it("two exported to all conflict, named with the scoped host", () => {
    const found = conflicts(meshRoute("a", "one", ""), meshRoute("b", "two", "['*']"))
    expect(summary(found)).toEqual(["MSH0109 VirtualService/one/a", "MSH0109 VirtualService/two/b"])
    expect(found[0]?.text).toBe(
      "The VirtualServices one/a,two/b associated with mesh gateway define the same host */api.example.com which can lead to undefined behavior. This can be fixed by merging the conflicting VirtualServices into a single resource.",
    )
  })

  it("one exported to a namespace meets one exported to all, wildcards overlapping, once each", () => {
    const found = conflicts(meshRoute("a", "one", "[two]"), meshRoute("b", "two", "", "*.example.com"))
    expect(summary(found)).toEqual(["MSH0109 VirtualService/one/a", "MSH0109 VirtualService/two/b"])
    expect(found[0]?.text).toContain("define the same host two/api.example.com")
  })

  it("two exported to the same namespace conflict; to different namespaces they do not", () => {
    expect(conflicts(meshRoute("a", "one", "[shared]"), meshRoute("b", "two", "[shared]"))).toHaveLength(2)
    expect(conflicts(meshRoute("a", "one", "[ns-x]"), meshRoute("b", "two", "[ns-y]"))).toEqual([])
  })
})
