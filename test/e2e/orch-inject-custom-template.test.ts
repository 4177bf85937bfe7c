/**
 * End-to-end: an injector config's own template, run by `meshctl orch-inject` (the built binary).
 * A custom `csi-socket` template, written in the reference's template language, replaces the
 * workload socket's emptyDir with a CSI driver volume, mounts it read-only in the proxy and in
 * each application container (a range over the pod's containers) and labels the pod; it is applied
 * after the sidecar template and recorded in the status annotation. Hostile templates (nested
 * ranges that would run a billion times, output doubling past the size bound, a template calling
 * itself) are refused quickly with the bound named and a short message; a template that does not
 * parse refuses the config naming template and line.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { ContainerNames, InjectAnnotations } from "../../src/services/injection/names.js"
import { binary, ROOT } from "../support/processes.js"

// biome-ignore lint/suspicious/noExplicitAny: parsed orchestrator objects are walked loosely in assertions
type Obj = Record<string, any>

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly millis: number
}

const meshctl = (args: ReadonlyArray<string>, input: string): Result => {
  const { KUBECONFIG: _cluster, ...rest } = process.env
  const started = Date.now()
  const result = spawnSync(process.execPath, [binary("meshctl"), ...args], {
    cwd: ROOT,
    input,
    encoding: "utf8",
    env: { ...rest, HOME: mkdtempSync(join(tmpdir(), "orch-inject-home-")), NO_COLOR: "1" },
    timeout: 60_000,
  })
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, millis: Date.now() - started }
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ledger, namespace: bank}
spec:
  selector: {matchLabels: {app: ledger}}
  template:
    metadata:
      labels: {app: ledger}
      annotations:
        inject.mesh.io/templates: sidecar,csi-socket
    spec:
      containers:
      - name: ledger
        image: example/ledger:2.0
        ports: [{containerPort: 8443}]
      - name: audit
        image: example/audit:1.0
`

/** The reference's documented way of using a SPIFFE CSI driver for the workload socket, in our names. */
const CSI_TEMPLATE = `
{{- $driver := valueOrDefault (index .ObjectMeta.Annotations "csi.example.com/driver") "csi.spiffe.io" -}}
metadata:
  labels:
    csi.example.com/socket: {{ $driver | replace "." "-" | quote }}
spec:
  containers:
  - name: ${ContainerNames.proxy}
    volumeMounts:
    - name: workload-socket
      mountPath: /var/run/secrets/workload-spiffe-uds
      readOnly: true
  {{- range $i, $c := .Spec.Containers }}
  {{- if not (eq $c.Name "${ContainerNames.proxy}") }}
  - name: {{ $c.Name }}
    env:
    - name: SPIFFE_ENDPOINT_SOCKET
      value: unix:///run/spiffe/socket
    volumeMounts:
    - name: csi-spiffe
      mountPath: /run/spiffe
      readOnly: true
  {{- end }}
  {{- end }}
  volumes:
  - name: workload-socket
    emptyDir: null
    csi:
      driver: {{ $driver | quote }}
      readOnly: true
  - name: csi-spiffe
    csi: {driver: {{ $driver | quote }}, readOnly: true}
`

const config = (templates: Record<string, string>): string =>
  `templates:\n${Object.entries(templates)
    .map(([name, text]) => `  ${name}: |\n${text.replace(/^/gm, "    ")}\n`)
    .join("")}`

const HOSTILE: Readonly<Record<string, string>> = {
  // 1,000 × 1,000 × 1,000 iterations if nothing stopped it.
  "nested-ranges": "{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}x{{ end }}{{ end }}{{ end }}",
  // A string doubling 40 times (a terabyte).
  doubling: '{{ $s := "0123456789" }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}metadata: {}',
  // Half a gigabyte written as output.
  "huge-output": '{{ range 100000 }}{{ printf "%05000d" 1 }}{{ end }}',
  recursion: '{{ define "loop" }}{{ template "loop" . }}{{ end }}{{ template "loop" . }}',
}

describe("meshctl orch-inject with the injector config's own templates (built binary)", () => {
  let dir: string

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "orch-inject-custom-"))
  })

  const configFile = (name: string, text: string): string => {
    const path = join(dir, `${name}.yaml`)
    writeFileSync(path, text)
    return path
  }

  it("applies a custom CSI-socket template after the sidecar template", () => {
    const file = configFile("csi", config({ "csi-socket": CSI_TEMPLATE }))
    const result = meshctl(["orch-inject", "-f", "-", "--injectConfigFile", file], DEPLOYMENT)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    const [deployment] = parseAllDocuments(result.stdout).map((d) => d.toJS() as Obj)
    const template = deployment?.spec.template as Obj
    const spec = template.spec as Obj
    const byName = (list: Array<Obj>, name: string) => list.find((e) => e.name === name) as Obj

    // The workload socket is the CSI driver's now, with nothing left of the emptyDir.
    expect(byName(spec.volumes, "workload-socket")).toEqual({
      name: "workload-socket",
      csi: { driver: "csi.spiffe.io", readOnly: true },
    })
    expect(byName(spec.volumes, "csi-spiffe")).toEqual({
      name: "csi-spiffe",
      csi: { driver: "csi.spiffe.io", readOnly: true },
    })
    // The proxy's existing mount became read-only; its other mounts are still there.
    const proxy = byName(spec.containers, ContainerNames.proxy)
    expect(byName(proxy.volumeMounts, "workload-socket")).toEqual({
      name: "workload-socket",
      mountPath: "/var/run/secrets/workload-spiffe-uds",
      readOnly: true,
    })
    expect(proxy.volumeMounts.length).toBeGreaterThan(3)
    expect(proxy.image).toContain("proxyv2")
    for (const app of ["ledger", "audit"]) {
      const c = byName(spec.containers, app)
      expect(c.image).toContain(app)
      expect(c.volumeMounts).toEqual([{ name: "csi-spiffe", mountPath: "/run/spiffe", readOnly: true }])
      expect(c.env).toEqual([{ name: "SPIFFE_ENDPOINT_SOCKET", value: "unix:///run/spiffe/socket" }])
    }
    // The app's ports and the container order are kept; the proxy stays last.
    expect(spec.containers.map((c: Obj) => c.name)).toEqual(["ledger", "audit", ContainerNames.proxy])
    expect(template.metadata.labels["csi.example.com/socket"]).toBe("csi-spiffe-io")
    const status = JSON.parse(template.metadata.annotations[InjectAnnotations.status])
    expect(status.volumes).toContain("csi-spiffe")
    expect(status.containers).toEqual([ContainerNames.proxy])
  })

  for (const [name, text] of Object.entries(HOSTILE)) {
    it(`refuses the hostile template "${name}" quickly, naming the bound`, () => {
      const file = configFile(name, config({ [name]: text }))
      const pod = DEPLOYMENT.replace("sidecar,csi-socket", name)
      const result = meshctl(["orch-inject", "-f", "-", "--injectConfigFile", file], pod)
      expect(result.code).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toContain(`template "${name}" failed: template: `)
      expect(result.stderr).toMatch(/bound|maximum template depth/)
      // A short reason, not the output it was building; well under the 60 s timeout (under load).
      expect(result.stderr.length).toBeLessThan(2_000)
      expect(result.millis).toBeLessThan(20_000)
    })
  }

  it("refuses a config whose template does not parse, naming template and line", () => {
    const file = configFile("broken", config({ broken: "metadata:\n  labels:\n    a: {{ .X | nosuch }}\n" }))
    const result = meshctl(["orch-inject", "-f", "-", "--injectConfigFile", file], DEPLOYMENT)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('templates.broken: template: broken:3: function "nosuch" not defined')
  })
})
