/**
 * destinationrule.SubsetSelectPodAnalyzer: the DestinationRule's host is visible from it
 * (exportTo honoured, MSH0174) and each subset selects a Pod (MSH0173).
 */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, pod, service } from "./support.js"

const NAME = "destinationrule.SubsetSelectPodAnalyzer"
const rule = (host: string, subsets = "[]", namespace = "default", exportTo = "") =>
  mesh(
    "DestinationRule",
    "dr",
    `{host: ${host}, subsets: ${subsets}${exportTo === "" ? "" : `, exportTo: ${exportTo}`}}`,
    namespace,
  )
const reviews = service("reviews", "{app: reviews}", "[{name: http, port: 9080}]")
const texts = (...docs: ReadonlyArray<string>) => analyze(NAME, ...docs).map((m) => `${m.type.code} ${m.text}`)

describe("destinationrule.SubsetSelectPodAnalyzer", () => {
  it("reports a host no Service or ServiceEntry defines", () => {
    expect(texts(rule("ratings"))).toEqual([
      "MSH0174 The host ratings defined in the DestinationRule does not match any services in the mesh.",
    ])
    expect(texts(reviews, rule("reviews"))).toEqual([])
  })

  it("looks the host up with the DestinationRule's namespace and exportTo", () => {
    const local = mesh(
      "ServiceEntry",
      "api",
      "{hosts: [api.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS, exportTo: ['.']}",
      "owner",
    )
    expect(texts(local, rule("api.example.com", "[]", "client"))).toHaveLength(1)
    expect(texts(local, rule("api.example.com", "[]", "owner"))).toEqual([])
  })

  it("reports each subset that selects no Pod; a matching Pod in any namespace satisfies it", () => {
    const subsets = "[{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]"
    expect(texts(reviews, rule("reviews", subsets), pod("r1", "{app: reviews, version: v1}"))).toEqual([
      "MSH0173 The Subset v2 defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).",
    ])
    expect(
      texts(
        reviews,
        rule("reviews", subsets),
        pod("r1", "{app: reviews, version: v1}"),
        pod("r2", "{version: v2}", "", "elsewhere"),
      ),
    ).toEqual([])
  })

  it("merges a ServiceEntry's workload selector into the subset's labels", () => {
    const entry = mesh(
      "ServiceEntry",
      "vm",
      "{hosts: [vm.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: STATIC, workloadSelector: {labels: {app: vm}}}",
    )
    const subsets = "[{name: v1, labels: {version: v1}}]"
    expect(texts(entry, rule("vm.example.com", subsets), pod("p", "{version: v1}"))).toHaveLength(1)
    expect(texts(entry, rule("vm.example.com", subsets), pod("p", "{app: vm, version: v1}"))).toEqual([])
  })

  it("matches the node's locality and hostname labels as an endpoint carries them", () => {
    const node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {topology.kubernetes.io/zone: z1}}\n"
    const onNode =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, labels: {app: reviews}}\nspec: {nodeName: n1, containers: [{name: app, image: app:1}]}\n"
    const zoned = rule("reviews", "[{name: z1, labels: {topology.kubernetes.io/zone: z1}}]")
    expect(texts(reviews, zoned, node, onNode)).toEqual([])
    expect(texts(reviews, zoned, onNode)).toHaveLength(1)
    const byHost = rule("reviews", "[{name: h, labels: {kubernetes.io/hostname: n1}}]")
    expect(texts(reviews, byHost, onNode)).toEqual([])
  })
})
