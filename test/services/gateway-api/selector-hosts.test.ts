/**
 * Issue 36 group 4: a listener taking routes from namespaces chosen by a label Selector becomes
 * a server listing exactly those namespaces (`apple/apple.example`), sorted; `~/<host>` (no
 * namespace) when none matches, which only a generated Gateway may carry.
 */
import { describe, expect, it } from "@effect/vitest"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import type { Listener } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { convert, schemaProblems, simpleGateway } from "./fixtures.js"

const selectorListener = (selector: NonNullable<NonNullable<Listener["allowedRoutes"]>["namespaces"]>): Listener => ({
  name: "http",
  port: 80,
  protocol: "HTTP",
  hostname: "apple.example",
  allowedRoutes: { namespaces: selector },
})

const namespaceLabels = new Map<string, Readonly<Record<string, string>>>([
  ["pear", { fruit: "yes", color: "green" }],
  ["apple", { fruit: "yes", color: "red" }],
  ["infra", {}],
  ["kube-system", {}],
])

const serverHosts = (listener: Listener) => {
  const out = convert({ gateways: [simpleGateway([listener])], namespaceLabels })
  expect(schemaProblems(out)).toEqual([])
  return out.gateways[0]!.spec.servers.map((s) => s.hosts)
}

describe("server hosts for allowedRoutes.namespaces.from: Selector", () => {
  it("lists the matched namespaces, sorted", () => {
    expect(serverHosts(selectorListener({ from: "Selector", selector: { matchLabels: { fruit: "yes" } } }))).toEqual([
      ["apple/apple.example", "pear/apple.example"],
    ])
  })

  it("matchExpressions and the namespace name label select too", () => {
    expect(
      serverHosts(
        selectorListener({
          from: "Selector",
          selector: { matchExpressions: [{ key: "color", operator: "In", values: ["red"] }] },
        }),
      ),
    ).toEqual([["apple/apple.example"]])
    expect(
      serverHosts(
        selectorListener({
          from: "Selector",
          selector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
        }),
      ),
    ).toEqual([["kube-system/apple.example"]])
  })

  it("no matching namespace: `~/<host>`, the server kept but taking no routes", () => {
    expect(serverHosts(selectorListener({ from: "Selector", selector: { matchLabels: { fruit: "no" } } }))).toEqual([
      ["~/apple.example"],
    ])
  })

  it("Same and All are unchanged", () => {
    expect(serverHosts(selectorListener({ from: "Same" }))).toEqual([["infra/apple.example"]])
    expect(serverHosts(selectorListener({ from: "All" }))).toEqual([["*/apple.example"]])
  })

  it("a hand-written Gateway may not use the `~` namespace", () => {
    const parsed = parseConfigDocuments(
      "gw.yaml",
      `apiVersion: networking.mesh.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["~/a.example.com"]}]
`,
    )
    expect(parsed.issues.map((i) => i.message)).toEqual(['invalid namespace value "~" in gateway'])
  })
})
