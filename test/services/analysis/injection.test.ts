/** Injection analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { analyze, analyzeWith, ns, summary } from "./support.js"

const meshConfigWith = (defaults: { defaultConfig: Record<string, unknown> }) => {
  const base = defaultMeshConfig()
  return { ...base, defaultConfig: { ...base.defaultConfig, ...defaults.defaultConfig } } as typeof base
}

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

  const injector = (values: string, name = "mesh-sidecar-injector") =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: mesh-system}\ndata: {values: '${values}'}\n`
  const hubTag = injector('{"global": {"hub": "docker.io/mesh", "tag": "1.2", "proxy": {"image": "proxy"}}}')

  it("ImageMismatchAnalyzer reports pods not running the injector ConfigMap's proxy image", () => {
    const injected = ns("apps", "{mesh-injection: enabled}")
    const found = analyze(
      "injection.ImageAnalyzer",
      hubTag,
      injected,
      proxied("a", "docker.io/mesh/proxy:1.2"),
      proxied("c", "docker.io/mesh/proxy:1.1"),
      proxied("b", "docker.io/mesh/proxy:1.0"),
    )
    expect(summary(found)).toEqual(["MSH0158 Namespace//apps"])
    expect(found[0]?.text).toBe(
      "The mesh proxy images of the pods running in the namespace do not match the image defined in the injection configuration (pod names: [b c]). This often happens after upgrading the mesh control-plane and can be fixed by redeploying the pods.",
    )
  })

  it("ImageMismatchAnalyzer reads the revision's injector, a full image name, the variant and the pod's own image", () => {
    const canary = ns("apps", "{mesh.io/rev: canary}")
    const full = injector(
      '{"global": {"proxy": {"image": "registry.example/proxy:2"}}}',
      "mesh-sidecar-injector-canary",
    )
    expect(analyze("injection.ImageAnalyzer", full, canary, proxied("a", "registry.example/proxy:2"))).toEqual([])
    expect(summary(analyze("injection.ImageAnalyzer", full, canary, proxied("a", "registry.example/proxy:1")))).toEqual(
      ["MSH0158 Namespace//apps"],
    )
    // The distroless variant configured in the mesh config is the same image.
    const distroless = { meshConfig: meshConfigWith({ defaultConfig: { image: { imageType: "distroless" } } }) }
    expect(
      analyzeWith(
        "injection.ImageAnalyzer",
        distroless,
        hubTag,
        ns("apps", "{mesh-injection: enabled}"),
        proxied("a", "docker.io/mesh/proxy:1.2-distroless"),
      ),
    ).toEqual([])
    // A pod naming its own image, and namespaces without an injector ConfigMap, are not judged.
    const ownImage = `apiVersion: v1\nkind: Pod\nmetadata: {name: own, namespace: apps, annotations: {sidecar.mesh.io/proxyImage: mine}}\nspec: {containers: [{name: mesh-proxy, image: mine}]}\n`
    expect(analyze("injection.ImageAnalyzer", hubTag, ns("apps", "{mesh-injection: enabled}"), ownImage)).toEqual([])
    expect(analyze("injection.ImageAnalyzer", ns("apps", "{mesh-injection: enabled}"), proxied("a", "x:1"))).toEqual([])
  })

  it("PodProxyAnalyzer counts a native-sidecar proxy (init container)", () => {
    const native = `apiVersion: v1\nkind: Pod\nmetadata: {name: native, namespace: apps}\nspec: {initContainers: [{name: mesh-proxy, image: proxy:1, restartPolicy: Always}], containers: [{name: app, image: app:1}]}\n`
    expect(analyze("injection.PodProxyAnalyzer", ns("apps", "{mesh-injection: enabled}"), native)).toEqual([])
  })

  it("Analyzer leaves ambient namespaces alone and reports MSH0148 when the injector injects unlabelled namespaces", () => {
    expect(analyze("injection.Analyzer", ns("apps", "{mesh.io/dataplane-mode: ambient}"))).toEqual([])
    const byDefault = injector('{"sidecarInjectorWebhook": {"enableNamespacesByDefault": true}}')
    const found = analyze("injection.Analyzer", byDefault, ns("apps"))
    expect(summary(found)).toEqual(["MSH0148 Namespace//apps"])
    expect(found[0]?.text).toBe(
      "is enabled for mesh injection, as the mesh is installed with enableNamespacesByDefault as true.",
    )
  })

  it("MultipleLabelsAnalyzer counts the dataplane-mode label unless injection is disabled", () => {
    const found = analyze(
      "injection.MultipleLabelsAnalyzer",
      ns("apps", "{mesh-injection: enabled, mesh.io/dataplane-mode: ambient}"),
    )
    expect(found.map((m) => m.text)).toEqual([
      "The namespace has more than one type of injection labels [mesh-injection=enabled mesh.io/dataplane-mode=ambient], which may lead to undefined behavior. Make sure only one injection label exists.",
    ])
    expect(
      analyze(
        "injection.MultipleLabelsAnalyzer",
        ns("apps", "{mesh-injection: disabled, mesh.io/dataplane-mode: ambient}"),
      ),
    ).toEqual([])
  })
})
