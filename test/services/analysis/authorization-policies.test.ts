/** auth.AuthorizationPoliciesAnalyzer (MSH0127, MSH0101): policies that apply to no mesh workload, unknown namespaces. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, ns, summary } from "./support.js"

const NAME = "auth.AuthorizationPoliciesAnalyzer"
const policy = (name: string, spec: string, namespace = "default") =>
  mesh("AuthorizationPolicy", name, spec, namespace, "security.mesh.io/v1")
const meshPod = (name: string, labels: string, namespace = "default") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}, labels: ${labels}}\nspec: {containers: [{name: app, image: a}, {name: mesh-proxy, image: proxy:1}]}\n`
const plainPod = (name: string, labels: string, namespace = "default") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}, labels: ${labels}}\nspec: {containers: [{name: app, image: a}]}\n`

describe("auth.AuthorizationPoliciesAnalyzer", () => {
  it("reports a selector matching no mesh pod of its namespace, and a namespace without mesh pods", () => {
    const found = analyze(
      NAME,
      ns("default"),
      ns("empty"),
      plainPod("outside", "{app: web}"),
      meshPod("other-ns", "{app: web}", "empty2"),
      policy("selective", "{selector: {matchLabels: {app: web, tier: front}}}"),
      policy("namespace-wide", "{}", "empty"),
    )
    expect(summary(found)).toEqual([
      "MSH0127 AuthorizationPolicy/default/selective",
      "MSH0127 AuthorizationPolicy/empty/namespace-wide",
    ])
    expect(found.map((m) => m.text)).toEqual([
      "No matching workloads for this resource with the following labels: app=web,tier=front",
      "No matching workloads for this resource with the following labels: ",
    ])
  })

  it("accepts mesh pods: a proxy, the inject label, an injected namespace, ambient redirection", () => {
    const selective = policy("selective", "{selector: {matchLabels: {app: web}}}")
    expect(analyze(NAME, ns("default"), meshPod("p", "{app: web}"), selective)).toEqual([])
    expect(
      analyze(NAME, ns("default"), plainPod("p", "{app: web, sidecar.mesh.io/inject: 'true'}"), selective),
    ).toEqual([])
    expect(analyze(NAME, ns("default", "{mesh-injection: enabled}"), plainPod("p", "{app: web}"), selective)).toEqual(
      [],
    )
    const ambient = `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: web}, annotations: {ambient.mesh.io/redirection: enabled}}\nspec: {containers: [{name: app, image: a}]}\n`
    expect(analyze(NAME, ns("default"), ambient, selective)).toEqual([])
  })

  it("matches a root-namespace policy's selector against mesh pods of every namespace", () => {
    const root = policy("root", "{selector: {matchLabels: {app: web}}}", "mesh-system")
    expect(analyze(NAME, ns("mesh-system"), ns("apps"), meshPod("p", "{app: web}", "apps"), root)).toEqual([])
    expect(summary(analyze(NAME, ns("mesh-system"), plainPod("p", "{app: web}", "apps"), root))).toEqual([
      "MSH0127 AuthorizationPolicy/mesh-system/root",
    ])
    expect(analyze(NAME, ns("mesh-system"), policy("root-wide", "{}", "mesh-system"))).toEqual([])
  })

  it("reports source namespaces (and patterns) that match no Namespace", () => {
    const rules =
      "{rules: [{from: [{source: {namespaces: [apps, 'prod-*', '*-test', missing]}}, {source: {notNamespaces: [gone]}}]}]}"
    const found = analyze(
      NAME,
      ns("default"),
      ns("apps"),
      ns("prod-eu"),
      ns("ci-test"),
      meshPod("p", "{}"),
      policy("p", rules),
    )
    expect(found.map((m) => m.text)).toEqual([
      'Referenced namespace not found: "missing"',
      'Referenced namespace not found: "gone"',
    ])
  })
})
