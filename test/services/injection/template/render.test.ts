/**
 * The template interpreter on small templates of our own, one per construct the reference's
 * shipped injection templates use (sidecar, gateway, grpc-agent, grpc-simple, waypoint,
 * kube-gateway), plus parse errors naming template and line.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  parseInjectionTemplate,
  renderTemplate,
  templateFunctions,
} from "../../../../src/services/injection/template/index.js"

const functions = templateFunctions({
  env: { MESH_VENDOR: "acme" },
  protoJson: () => undefined,
  proxyContainerName: "mesh-proxy",
})

const data = {
  ObjectMeta: {
    name: "web",
    annotations: { "sidecar.mesh.io/proxyCPU": "200m", "sidecar.mesh.io/userVolume": '{"v1":{"emptyDir":{}}}' },
    labels: { app: "web", version: "v2" },
  },
  Spec: {
    serviceAccountName: "",
    containers: [
      {
        name: "web",
        image: "r/web:1.2",
        ports: [
          { containerPort: 8080, name: "http" },
          { containerPort: 53, protocol: "UDP" },
        ],
      },
      { name: "mesh-proxy", image: "auto" },
    ],
  },
  Values: {
    global: {
      proxy: { image: "proxyv2", statusPort: 15020, resources: { requests: { cpu: "100m", memory: null } } },
      network: "",
    },
    pilot: { env: { ENABLE_X: true } },
  },
  Revision: "",
  NativeSidecars: false,
  DeploymentMeta: { Name: "web", Namespace: "default" },
}

const structs = new WeakSet<object>([data.ObjectMeta, data.Spec, ...data.Spec.containers])

const render = (text: string, d: unknown = data): string => {
  const parsed = parseInjectionTemplate("t", text)
  if (Either.isLeft(parsed)) throw parsed.left
  const out = renderTemplate(parsed.right, d, { functions, structs })
  if (Either.isLeft(out)) throw out.left
  return out.right
}

const parseError = (text: string): string => {
  const parsed = parseInjectionTemplate("custom", text)
  return Either.isLeft(parsed) ? parsed.left.message : "parsed"
}

const renderError = (text: string): string => {
  try {
    return render(text)
  } catch (e) {
    return (e as Error).message
  }
}

describe("template language", () => {
  it("text, actions, fields, trim markers and comments", () => {
    expect(render("a {{ .ObjectMeta.name }} b")).toBe("a web b")
    expect(render("a  {{- .ObjectMeta.name -}}  \n b")).toBe("awebb")
    expect(render("x{{/* note */}}y {{- /* trimmed */ -}} z")).toBe("xyz")
    expect(render("{{ .Spec.ServiceAccountName }}|{{ .Values.global.missing }}|{{ .Values.nothere.deeper }}")).toBe(
      "|<no value>|<no value>",
    )
    expect(render("{{-3}}")).toBe("-3")
  })

  it("if / else if / else, and, or, not, comparisons", () => {
    const t = '{{ if eq .Revision "x" }}X{{ else if not .Revision }}default{{ else }}other{{ end }}'
    expect(render(t)).toBe("default")
    expect(render("{{ if and .Values.global.proxy (gt .Values.global.proxy.statusPort 0) }}on{{ end }}")).toBe("on")
    expect(render("{{ if or .Values.global.network .Revision }}y{{ else }}n{{ end }}")).toBe("n")
    expect(render("{{ if and .Values.nothere .Values.nothere.x }}y{{ else }}n{{ end }}")).toBe("n")
    expect(render('{{ lt 1 2 }} {{ le 2 2 }} {{ ge 1 2 }} {{ ne "a" "b" }} {{ eq 1 3 2 1 }}')).toBe(
      "true true false true true",
    )
    expect(render("{{ eq (.Values.pilot.env).ENABLE_X true }}")).toBe("true")
    expect(renderError('{{ eq 1 "1" }}')).toContain("incompatible types for comparison")
  })

  it("range with $i, $v over lists and maps, else, break, continue, nested variables", () => {
    expect(render("{{ range $i, $c := .Spec.Containers }}{{ $i }}={{ $c.Name }};{{ end }}")).toBe("0=web;1=mesh-proxy;")
    expect(render("{{ range $k, $v := .ObjectMeta.labels }}{{ $k }}:{{ $v }} {{ end }}")).toBe("app:web version:v2 ")
    expect(render("{{ range .Values.none }}x{{ else }}empty{{ end }}")).toBe("empty")
    expect(
      render("{{ range 5 }}{{ if eq . 1 }}{{ continue }}{{ end }}{{ if eq . 3 }}{{ break }}{{ end }}{{ . }}{{ end }}"),
    ).toBe("02")
    const collect =
      '{{- $containers := list }}{{- range $index, $container := .Spec.Containers }}{{ if not (eq $container.Name "mesh-proxy") }}{{ $containers = append $containers $container.Name }}{{ end }}{{- end }}{{ $containers | join "," }} {{ len $containers }}'
    expect(render(collect)).toBe("web 1")
    const first =
      "[{{- $first := true }}{{- range $c := .Spec.Containers }}{{- range $p := $c.Ports }}{{ if not $first }},{{ end }}{{ structToJSON $p }}{{- $first = false }}{{- end }}{{- end }}]"
    expect(render(first)).toBe('[{"containerPort":8080,"name":"http"},{"containerPort":53,"protocol":"UDP"}]')
  })

  it("with / else with, dot and $", () => {
    expect(render('{{ with .ObjectMeta.labels.app }}{{ . }}-{{ $.Revision | default "default" }}{{ end }}')).toBe(
      "web-default",
    )
    expect(
      render("{{ with .Values.global.network }}n{{ else with .ObjectMeta.name }}{{ . }}{{ else }}z{{ end }}"),
    ).toBe("web")
  })

  it("proto getters and wrapper/enum methods on the reference's structs, nil printing", () => {
    const proxy = { holdApplicationUntilProxyStarts: true, interceptionMode: "TPROXY", tracing: { sampling: 1 } }
    const d = { ProxyConfig: proxy, Values: { n: null } }
    const s = new WeakSet<object>([proxy, proxy.tracing])
    const parsed = Either.getOrThrow(
      parseInjectionTemplate(
        "t",
        "{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }} {{ .ProxyConfig.InterceptionMode.String }} {{ .ProxyConfig.GetTracing.Sampling }} {{ .ProxyConfig.StatusPort.GetValue }}|{{ .Values.n }}|{{ printf `%v` .Values.n }}",
      ),
    )
    expect(Either.getOrThrow(renderTemplate(parsed, d, { functions, structs: s }))).toBe(
      "true TPROXY 1 |<no value>|<nil>",
    )
  })

  it("define, template and include", () => {
    const t =
      '{{ define "res" }}cpu: {{ index .ObjectMeta.annotations "sidecar.mesh.io/proxyCPU" | quote }}{{ end }}a {{ template "res" . }} {{ include "res" . | upper }}'
    expect(render(t)).toBe('a cpu: "200m" CPU: "200M"')
  })

  it("the reference's helpers", () => {
    expect(
      render(
        '{{ annotation .ObjectMeta "sidecar.mesh.io/proxyCPU" "1" }} {{ annotation .ObjectMeta "x" .Values.global.proxy.statusPort }}',
      ),
    ).toBe("200m 15020")
    expect(
      render('{{ isset .ObjectMeta.annotations "sidecar.mesh.io/proxyCPU" }} {{ isset .ObjectMeta.annotations "y" }}'),
    ).toBe("true false")
    expect(render('{{ valueOrDefault .Values.global.network "net0" }} {{ valueOrDefault "a" "b" }}')).toBe("net0 a")
    expect(
      render('{{ contains "/" .Values.global.proxy.image }} {{ toLower "ABC" }} {{ directory "/a/b/c.txt" }}'),
    ).toBe("false abc /a/b/")
    expect(render("{{ toYaml (omitNil .Values.global.proxy.resources) | indent 2 }}")).toBe(
      "requests:\n    cpu: 100m\n  ",
    )
    expect(render("x:{{ toYaml .Values.global.proxy.resources | nindent 2 }}")).toBe(
      "x:\n  requests:\n    cpu: 100m\n    memory: null\n  ",
    )
    expect(
      render(
        '{{ range $k, $v := fromJSON (index .ObjectMeta.annotations "sidecar.mesh.io/userVolume") }}{{ $k }}={{ toJson $v }}{{ end }}',
      ),
    ).toBe('v1={"emptyDir":{}}')
    expect(render('{{ toJsonMap (strdict "b" "2" "a" "1") (omit .ObjectMeta.labels "version") }}')).toBe(
      '{"a":"1","app":"web","b":"2"}',
    )
    expect(render("{{ toJSON .ObjectMeta.labels }}")).toBe('{"app":"web","version":"v2"}')
    expect(
      render(
        '{{ includeInboundPorts .Spec.Containers }} {{ excludeInboundPort 15020 "80, 81" }} {{ excludeInboundPort 0 "" }}',
      ),
    ).toBe("8080 80,81,15020 ")
    expect(
      render(
        '{{ appendMultusNetwork "a, b" "mesh-cni" }} {{ appendMultusNetwork "[{\\"name\\":\\"x\\"}]" "ns/mesh-cni" }}',
      ),
    ).toBe('a, b, mesh-cni [{"name":"x"}, {"name": "mesh-cni", "namespace": "ns"}]')
    expect(render('{{ env "MESH_VENDOR" "none" }} {{ env "UNSET" "none" }}')).toBe("acme none")
    expect(render('{{ mergeMaps .ObjectMeta.labels (strdict "app" "x") }}')).toBe("map[app:x version:v2]")
  })

  it("sprig functions and printf", () => {
    expect(render('{{ printf "--proxyLogLevel=%s" "warning" | quote }}')).toBe('"--proxyLogLevel=warning"')
    expect(
      render('{{ printf "%t %d %v %q %5s|%-4d|%.2f %x %%" true 42 .Spec.Containers "a\\"b" "ab" 7 3.14159 255 }}'),
    ).toBe(
      '{{ printf "%t %d %v %q %5s|%-4d|%.2f %x %%" true 42 .Spec.Containers "a\\"b" "ab" 7 3.14159 255 }}'.length > 0
        ? 'true 42 [map[image:r/web:1.2 name:web ports:[map[containerPort:8080 name:http] map[containerPort:53 protocol:UDP]]] map[image:auto name:mesh-proxy]] "a\\"b"    ab|7   |3.14 ff %'
        : "",
    )
    expect(render('{{ printf "%s" }}')).toBe("%!s(MISSING)")
    expect(
      render(
        '{{ "istio-proxy-very-long-name" | trunc 11 | trimAll "-" }} {{ default "d" "" }} {{ default "d" "v" }} {{ first (list 1 2) }} {{ last (list 1 2) }}',
      ),
    ).toBe("istio-proxy d v 1 2")
    expect(
      render(
        '{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ get $d "b" }} {{ hasKey $d "a" }} {{ keys $d }} {{ ternary "y" "n" true }}',
      ),
    ).toBe("2 true [a b] y")
    expect(
      render(
        '{{ replace "." "-" "a.b.c" }} {{ splitList "," "a,b" }} {{ add 1 2 3 }} {{ int "42" }} {{ b64enc "hi" }}',
      ),
    ).toBe("a-b-c [a b] 6 42 aGk=")
  })

  it("parse errors name the template and line", () => {
    expect(parseError("a\n{{ if .X }}\nb")).toBe("template: custom:3: unexpected EOF")
    expect(parseError("a\n\n{{ nosuch .X }}")).toBe('template: custom:3: function "nosuch" not defined')
    expect(parseError("{{ end }}")).toContain("template: custom:1: unexpected {{end}}")
    expect(parseError("x\n{{ .X ")).toContain("template: custom:2: unclosed action")
    expect(parseError('{{ "abc }}')).toContain("template: custom:1: unterminated quoted string")
    expect(parseError("{{ break }}")).toContain("outside {{range}}")
    expect(parseError("{{ (.X }}")).toContain("custom:1:")
    expect(parseError("{{/* open")).toContain("unclosed comment")
  })

  it("execution errors name the template, line and function", () => {
    expect(renderError("a\n{{ index .Spec.Containers 5 }}")).toMatch(
      /^template: t:2: executing "t" at <index>: error calling index: index out of range: 5/,
    )
    expect(renderError("{{ $nope }}")).toContain("undefined variable: $nope")
    expect(renderError("{{ .ObjectMeta.name.Deeper }}")).toContain("can't evaluate field Deeper")
    expect(renderError('{{ template "none" }}')).toContain('no such template "none"')
  })
})
