/** The bootstrap template subset: fields, nested fields, toJSON, trim markers, comments, errors. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { renderTemplate } from "../../../../src/services/agent/bootstrap/template.js"

const values = {
  nodeID: "sidecar~1.2.3.4~a.b~b.svc.cluster.local",
  adminPort: 15000,
  flag: true,
  none: null,
  metadata: { LABELS: { app: "x" }, NAME: 'a"b' },
  config: { proxyAdminPort: 15000, tracing: { zipkin: { address: "z:9411" } } },
}

const render = (text: string) => {
  const out = renderTemplate("t.json", text, values)
  if (Either.isLeft(out)) throw new Error(out.left.message)
  return out.right
}
const error = (text: string) => {
  const out = renderTemplate("t.json", text, values)
  if (Either.isRight(out)) throw new Error(`rendered: ${out.right}`)
  return out.left.message
}

describe("renderTemplate", () => {
  it("text without actions is unchanged", () => {
    expect(render('{"a": 1}\n')).toBe('{"a": 1}\n')
  })

  it("prints fields and nested fields", () => {
    expect(render('{"id": "{{ .nodeID }}", "port": {{.adminPort}}, "b": {{ .flag }}, "n": {{ .none }}}')).toBe(
      '{"id": "sidecar~1.2.3.4~a.b~b.svc.cluster.local", "port": 15000, "b": true, "n": null}',
    )
    expect(render("{{ .config.tracing.zipkin.address }}")).toBe("z:9411")
  })

  it("toJSON prints objects, strings with quotes and escapes, and the whole map", () => {
    expect(render("{{ toJSON .metadata }}")).toBe('{"LABELS":{"app":"x"},"NAME":"a\\"b"}')
    expect(render("{{ toJSON .metadata.NAME }}")).toBe('"a\\"b"')
    expect(JSON.parse(render("{{ toJSON . }}"))).toEqual(values)
  })

  it("trim markers remove the white space on their side; comments print nothing", () => {
    expect(render("a  \n  {{- .adminPort -}}  \n  b")).toBe("a15000b")
    expect(render("a {{/* note */}}b")).toBe("a b")
  })

  it("an unknown field is an error naming the template, line and field", () => {
    expect(error('{\n  "x": "{{ .nodeId }}"\n}')).toBe("t.json:2: unknown field .nodeId")
    expect(error("{{ .config.nope.deeper }}")).toBe("t.json:1: unknown field .config.nope.deeper")
    expect(error("{{ toJSON .missing }}")).toBe("t.json:1: unknown field .missing")
    expect(error("{{ .nodeID.x }}")).toBe("t.json:1: unknown field .nodeID.x")
  })

  it("an object printed without toJSON is an error", () => {
    expect(error("{{ .metadata }}")).toBe("t.json:1: .metadata is an object or list: use {{ toJSON .metadata }}")
    expect(error("{{ . }}")).toMatch(/use \{\{ toJSON \. \}\}/)
  })

  it("unsupported actions and syntax errors are errors", () => {
    expect(error("{{ if .flag }}x{{ end }}")).toMatch(/^t\.json:1: unsupported action \{\{ if \.flag \}\}/)
    expect(error("{{ .a | printf }}")).toMatch(/unsupported action/)
    expect(error("{{ toJSON }}")).toMatch(/toJSON takes one field/)
    expect(error("{{ toJSON .a .b }}")).toMatch(/toJSON takes one field/)
    expect(error("{{ }}")).toBe("t.json:1: empty action {{ }}")
    expect(error("x\n{{ .nodeID")).toBe("t.json:2: unclosed action: missing }}")
  })
})
