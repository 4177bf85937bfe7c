/** Injection analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, ns, summary } from "./support.js"

const proxied = (name: string, image: string, namespace = "apps") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: {containers: [{name: app, image: app:1}, {name: mesh-proxy, image: '${image}'}]}\n`
const bare = (name: string, namespace = "apps", labels = "{}") =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}, labels: ${labels}}\nspec: {containers: [{name: app, image: app:1}]}\n`

describe("injection analyzers", () => {
  it("Analyzer reports namespaces without an injection label, not system ones", () => {
    expect(summary(analyze("injection.Analyzer", ns("apps"), ns("kube-system"), ns("mesh-system")))).toEqual([
      "MSH0102 Namespace//apps",
    ])
    expect(
      analyze("injection.Analyzer", ns("apps", "{mesh-injection: disabled}"), ns("canary", "{mesh.io/rev: canary}")),
    ).toEqual([])
  })

  it("MultipleLabelsAnalyzer reports namespaces with both labels", () => {
    expect(
      summary(
        analyze("injection.MultipleLabelsAnalyzer", ns("apps", "{mesh-injection: enabled, mesh.io/rev: canary}")),
      ),
    ).toEqual(["MSH0123 Namespace//apps"])
    expect(analyze("injection.MultipleLabelsAnalyzer", ns("apps", "{mesh-injection: enabled}"))).toEqual([])
  })

  it("PodProxyAnalyzer reports pods of injected namespaces without the proxy", () => {
    const injected = ns("apps", "{mesh-injection: enabled}")
    expect(summary(analyze("injection.PodProxyAnalyzer", injected, bare("a"), proxied("b", "proxy:1")))).toEqual([
      "MSH0103 Pod/apps/a",
    ])
    expect(
      analyze(
        "injection.PodProxyAnalyzer",
        injected,
        bare("a", "apps", "{sidecar.mesh.io/inject: 'false'}"),
        bare("c", "other"),
      ),
    ).toEqual([])
  })

  it("ImageMismatchAnalyzer reports pods running another proxy image than the rest", () => {
    const injected = ns("apps", "{mesh-injection: enabled}")
    const found = analyze(
      "injection.ImageMismatchAnalyzer",
      injected,
      proxied("a", "proxy:2"),
      proxied("b", "proxy:2"),
      proxied("c", "proxy:1"),
    )
    expect(summary(found)).toEqual(["MSH0158 Namespace//apps"])
    expect(found[0]?.text).toContain("[c]")
    expect(
      analyze("injection.ImageMismatchAnalyzer", injected, proxied("a", "proxy:2"), proxied("b", "proxy:2")),
    ).toEqual([])
  })
})
