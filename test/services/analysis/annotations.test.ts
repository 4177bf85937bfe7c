/** Annotation analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, deployment, summary } from "./support.js"

const podWith = (annotations: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default, annotations: ${annotations}}\nspec: {containers: [{name: app}]}\n`
const serviceWith = (annotations: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: default, annotations: ${annotations}}\nspec: {ports: [{name: http, port: 80}]}\n`

describe("annotation analyzers", () => {
  it("UnknownAnnotationAnalyzer reports unknown keys of the mesh's domains only", () => {
    expect(
      analyze(
        "annotations.UnknownAnnotationAnalyzer",
        podWith("{sidecar.mesh.io/nonsense: x, example.com/other: y}"),
      ).map((m) => m.text),
    ).toEqual(["Unknown annotation: sidecar.mesh.io/nonsense"])
    expect(analyze("annotations.UnknownAnnotationAnalyzer", podWith("{proxy.mesh.io/config: '{}'}"))).toEqual([])
  })

  it("MisplacedAnnotationAnalyzer reports a pod annotation on a Service, and reads pod templates", () => {
    expect(
      summary(analyze("annotations.MisplacedAnnotationAnalyzer", serviceWith("{sidecar.mesh.io/proxyCPU: 100m}"))),
    ).toEqual(["MSH0107 Service/default/s"])
    expect(
      analyze(
        "annotations.MisplacedAnnotationAnalyzer",
        deployment("d", "{app: d}", "{sidecar.mesh.io/proxyCPU: 100m}"),
      ),
    ).toEqual([])
  })

  it("InvalidAnnotationAnalyzer reports values of the wrong form", () => {
    expect(
      summary(
        analyze(
          "annotations.InvalidAnnotationAnalyzer",
          podWith("{traffic.sidecar.mesh.io/excludeOutboundPorts: 'http,99999'}"),
        ),
      ),
    ).toEqual(["MSH0125 Pod/default/p"])
    expect(
      analyze(
        "annotations.InvalidAnnotationAnalyzer",
        podWith("{traffic.sidecar.mesh.io/excludeOutboundPorts: '80,443'}"),
      ),
    ).toEqual([])
  })

  it("DeprecatedAnnotationAnalyzer and AlphaAnnotationAnalyzer report their annotations", () => {
    expect(
      summary(
        analyze("annotations.DeprecatedAnnotationAnalyzer", podWith("{sidecar.mesh.io/statsInclusionPrefixes: a}")),
      ),
    ).toEqual(["MSH0135 Pod/default/p"])
    expect(analyze("annotations.DeprecatedAnnotationAnalyzer", podWith("{sidecar.mesh.io/proxyCPU: 100m}"))).toEqual([])
    expect(
      summary(
        analyze("annotations.AlphaAnalyzer", serviceWith("{networking.mesh.io/traffic-distribution: PreferClose}")),
      ),
    ).toEqual(["MSH0136 Service/default/s"])
    // A beta annotation is not alpha.
    expect(analyze("annotations.AlphaAnalyzer", podWith("{sidecar.mesh.io/inject: 'true'}"))).toEqual([])
  })
})

describe("annotation analyzers: the reference's table and rules (issue 35 group 7)", () => {
  const ingressWith = (annotations: string) =>
    `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: ing, namespace: default, annotations: ${annotations}}\nspec: {rules: [{host: a.example.com}]}\n`
  const deploymentWith = (annotations: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default, annotations: ${annotations}}\nspec: {selector: {matchLabels: {app: d}}, template: {metadata: {labels: {app: d}}, spec: {containers: [{name: app}]}}}\n`

  it("checks Ingresses (the ingress class is the mesh's) and Deployments' own annotations", () => {
    expect(
      analyze("annotations.MisplacedAnnotationAnalyzer", ingressWith("{kubernetes.io/ingress.class: mesh}")),
    ).toEqual([])
    expect(
      summary(analyze("annotations.MisplacedAnnotationAnalyzer", serviceWith("{kubernetes.io/ingress.class: mesh}"))),
    ).toEqual(["MSH0107 Service/default/s"])
    expect(
      summary(analyze("annotations.MisplacedAnnotationAnalyzer", deploymentWith("{sidecar.mesh.io/proxyCPU: 100m}"))),
    ).toEqual(["MSH0107 Deployment/default/d"])
    expect(summary(analyze("annotations.UnknownAnnotationAnalyzer", ingressWith("{ingress.mesh.io/what: x}")))).toEqual(
      ["MSH0108 Ingress/default/ing"],
    )
  })

  it("knows the whole table, skips what the mesh writes itself and annotations for any kind", () => {
    expect(
      analyze(
        "annotations.UnknownAnnotationAnalyzer",
        podWith(
          "{sidecar.mesh.io/statsFlushInterval: 5s, ambient.mesh.io/dns-capture: 'true', sidecar.mesh.io/status: '{}'}",
        ),
      ),
    ).toEqual([])
    expect(
      analyze("annotations.MisplacedAnnotationAnalyzer", serviceWith("{galley.mesh.io/analyze-suppress: MSH0102}")),
    ).toEqual([])
    expect(analyze("annotations.UnknownAnnotationAnalyzer", serviceWith("{mesh.io/rev: canary}"))).toEqual([])
  })

  it("reports the deprecated inject annotation unless the inject label is there, saying to use the label", () => {
    const found = analyze("annotations.DeprecatedAnnotationAnalyzer", podWith("{sidecar.mesh.io/inject: 'true'}"))
    expect(found.map((m) => m.text)).toEqual([
      'Annotation "sidecar.mesh.io/inject" has been deprecated in favor of the "sidecar.mesh.io/inject" label and may not work in future mesh versions.',
    ])
    const labelled = podWith("{sidecar.mesh.io/inject: 'true'}").replace(
      "metadata: {name: p,",
      "metadata: {name: p, labels: {sidecar.mesh.io/inject: 'true'},",
    )
    expect(analyze("annotations.DeprecatedAnnotationAnalyzer", labelled)).toEqual([])
  })

  it("does not report the injector's redirection annotations as alpha on pods without its init container", () => {
    expect(analyze("annotations.AlphaAnalyzer", podWith("{sidecar.mesh.io/interceptionMode: REDIRECT}"))).toEqual([])
    const withInit = podWith("{sidecar.mesh.io/interceptionMode: REDIRECT}").replace(
      "spec: {containers",
      "spec: {initContainers: [{name: mesh-init}], containers",
    )
    expect(summary(analyze("annotations.AlphaAnalyzer", withInit))).toEqual(["MSH0136 Pod/default/p"])
  })
})
