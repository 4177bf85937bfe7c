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
        analyze(
          "annotations.AlphaAnnotationAnalyzer",
          serviceWith("{networking.mesh.io/traffic-distribution: PreferClose}"),
        ),
      ),
    ).toEqual(["MSH0136 Service/default/s"])
    expect(analyze("annotations.AlphaAnnotationAnalyzer", serviceWith("{networking.mesh.io/exportTo: '.'}"))).toEqual(
      [],
    )
  })
})
