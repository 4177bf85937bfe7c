/** The injector ConfigMap's `config` and `values` keys. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { defaultInjectionConfig, parseInjectionConfig } from "../../../src/services/injection/config.js"
import { defaultInjectionValues, parseInjectionValues, valuesView } from "../../../src/services/injection/values.js"

const left = <A>(r: Either.Either<A, string>): string => {
  if (Either.isRight(r)) throw new Error("expected an error")
  return r.left
}

describe("parseInjectionConfig", () => {
  it("an empty config is the default one", () => {
    expect(Either.getOrThrow(parseInjectionConfig(""))).toEqual(defaultInjectionConfig)
  })

  it("reads the reference's fields and lists ConfigMap template names", () => {
    const config = Either.getOrThrow(
      parseInjectionConfig(
        [
          "policy: disabled",
          "defaultTemplates: [sidecar, extra]",
          "alwaysInjectSelector: [{matchLabels: {a: b}}]",
          "neverInjectSelector: [{matchExpressions: [{key: x, operator: Exists}]}]",
          "injectedAnnotations: {k: v}",
          "aliases: {both: [sidecar, grpc-agent]}",
          "templates:",
          "  sidecar: '{{ .Values }}'",
          "  extra: 'metadata: {}'",
        ].join("\n"),
      ),
    )
    expect(config).toEqual({
      policy: "disabled",
      defaultTemplates: ["sidecar", "extra"],
      alwaysInjectSelector: [{ matchLabels: { a: "b" } }],
      neverInjectSelector: [{ matchExpressions: [{ key: "x", operator: "Exists" }] }],
      injectedAnnotations: { k: "v" },
      customTemplates: ["extra", "sidecar"],
      // Only the template not named like a built-in one is run (and so parsed).
      executableTemplates: { extra: expect.objectContaining({ name: "extra" }) },
      aliases: { both: ["sidecar", "grpc-agent"] },
    })
  })

  it("names the field in errors", () => {
    expect(left(parseInjectionConfig("policy: sometimes"))).toContain("policy")
    expect(
      left(parseInjectionConfig("neverInjectSelector: [{matchExpressions: [{key: x, operator: Near}]}]")),
    ).toContain("neverInjectSelector[0]")
    expect(left(parseInjectionConfig("injectedAnnotations: {k: 1}"))).toContain("injectedAnnotations.k")
    expect(left(parseInjectionConfig("aliases: {a: b}"))).toContain("aliases.a")
    expect(left(parseInjectionConfig("policy: [enabled"))).toContain("YAML syntax error")
    expect(left(parseInjectionConfig("- a"))).toContain("mapping")
    expect(left(parseInjectionConfig("templates:\n  csi: |\n    a\n    {{ if .X }}\n"))).toBe(
      "templates.csi: template: csi:3: unexpected EOF",
    )
    expect(left(parseInjectionConfig("templates: {csi: 3}"))).toContain("templates.csi must be a template text")
    // A built-in name's text is never run, so it is not parsed either.
    expect(Either.isRight(parseInjectionConfig("templates: {sidecar: '{{ if'}"))).toBe(true)
  })
})

describe("parseInjectionValues", () => {
  it("merges a partial file over the defaults", () => {
    const values = Either.getOrThrow(
      parseInjectionValues('{"global": {"hub": "r.example/m", "proxy": {"logLevel": "debug"}}}'),
    )
    const view = valuesView(values)
    expect(view.hub).toBe("r.example/m")
    expect(view.proxyLogLevel).toBe("debug")
    expect(view.proxyComponentLogLevel).toBe("misc:error")
    expect(view.resources).toEqual({
      requests: { cpu: "100m", memory: "128Mi" },
      limits: { cpu: "2000m", memory: "1024Mi" },
    })
  })

  it("null fields keep their defaults; mistyped fields are errors naming the path", () => {
    expect(valuesView(Either.getOrThrow(parseInjectionValues("global: {tag: null}"))).tag).toBe("latest")
    expect(left(parseInjectionValues("global: {proxy: {privileged: maybe}}"))).toContain("global.proxy.privileged")
    expect(left(parseInjectionValues("global: [1]"))).toContain("global must be a mapping")
  })

  it("accepts the reference's chart keys", () => {
    const view = valuesView(
      Either.getOrThrow(parseInjectionValues("global: {istioNamespace: istio-system}\nistio_cni: {enabled: true}")),
    )
    expect(view.meshNamespace).toBe("istio-system")
    expect(view.cniEnabled).toBe(true)
    const defaults = valuesView(defaultInjectionValues)
    expect(defaults.meshNamespace).toBe("mesh-system")
    expect(defaults.cniEnabled).toBe(false)
  })
})
