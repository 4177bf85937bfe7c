/** Sidecar/Telemetry selector analyzers, ServiceEntry addresses and ineffective policies. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, pod, summary } from "./support.js"

const sidecar = (name: string, selector = "") =>
  mesh(
    "Sidecar",
    name,
    `{${selector === "" ? "" : `workloadSelector: {labels: ${selector}}, `}egress: [{hosts: ['./*']}]}`,
  )
const telemetry = (name: string, selector = "") =>
  mesh(
    "Telemetry",
    name,
    `{${selector === "" ? "" : `selector: {matchLabels: ${selector}}, `}tracing: [{randomSamplingPercentage: 10}]}`,
    "default",
    "telemetry.mesh.io/v1",
  )

describe("workload selector analyzers", () => {
  it("sidecar.SelectorAnalyzer reports two Sidecars without selector in a namespace", () => {
    expect(summary(analyze("sidecar.SelectorAnalyzer", sidecar("a"), sidecar("b")))).toEqual([
      "MSH0111 Sidecar/default/a",
      "MSH0111 Sidecar/default/b",
    ])
    expect(analyze("sidecar.SelectorAnalyzer", sidecar("a"), sidecar("b", "{app: web}"))).toEqual([])
  })

  it("sidecar.ConflictingSelectorAnalyzer reports two Sidecars selecting one pod", () => {
    const web = pod("web-0", "{app: web, version: v1}")
    expect(
      summary(
        analyze("sidecar.ConflictingSelectorAnalyzer", web, sidecar("a", "{app: web}"), sidecar("b", "{version: v1}")),
      ),
    ).toHaveLength(2)
    expect(
      analyze("sidecar.ConflictingSelectorAnalyzer", web, sidecar("a", "{app: web}"), sidecar("b", "{version: v2}")),
    ).toEqual([])
  })

  it("telemetry.SelectorAnalyzer reports two Telemetries without selector in a namespace", () => {
    expect(summary(analyze("telemetry.SelectorAnalyzer", telemetry("a"), telemetry("b")))).toEqual([
      "MSH0160 Telemetry/default/a",
      "MSH0160 Telemetry/default/b",
    ])
    expect(analyze("telemetry.SelectorAnalyzer", telemetry("a"))).toEqual([])
  })

  it("telemetry.ConflictingSelectorAnalyzer reports two Telemetries selecting one pod", () => {
    const web = pod("web-0", "{app: web}")
    expect(
      summary(
        analyze(
          "telemetry.ConflictingSelectorAnalyzer",
          web,
          telemetry("a", "{app: web}"),
          telemetry("b", "{app: web}"),
        ),
      ),
    ).toHaveLength(2)
    expect(
      analyze("telemetry.ConflictingSelectorAnalyzer", web, telemetry("a", "{app: web}"), telemetry("b", "{app: api}")),
    ).toEqual([])
  })
})

describe("service entry and policy analyzers", () => {
  it("serviceentry.Analyzer reports TCP entries without addresses", () => {
    const se = (extra: string) =>
      mesh(
        "ServiceEntry",
        "db",
        `{hosts: [db.example.com], ${extra}ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS}`,
      )
    expect(summary(analyze("serviceentry.Analyzer", se("")))).toEqual(["MSH0134 ServiceEntry/default/db"])
    expect(analyze("serviceentry.Analyzer", se("addresses: [10.0.0.5], "))).toEqual([])
  })

  it("gateway.IneffectiveSelectorAnalyzer reports a policy selecting a gateway-API gateway's pods", () => {
    const policy = mesh(
      "AuthorizationPolicy",
      "p",
      "{selector: {matchLabels: {app: gw}}, action: DENY, rules: [{}]}",
      "default",
      "security.mesh.io/v1",
    )
    expect(
      summary(
        analyze(
          "gateway.IneffectiveSelectorAnalyzer",
          pod("gw-0", "{app: gw, gateway.networking.k8s.io/gateway-name: gw}"),
          policy,
        ),
      ),
    ).toEqual(["MSH0166 AuthorizationPolicy/default/p"])
    expect(analyze("gateway.IneffectiveSelectorAnalyzer", pod("gw-0", "{app: gw}"), policy)).toEqual([])
  })

  it("peerauthentication.IneffectivePolicyAnalyzer reports port-level mTLS on ports the workloads lack", () => {
    const web = `apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: default, labels: {app: web}}\nspec: {containers: [{name: app, ports: [{containerPort: 8080}]}]}\n`
    const pa = (port: number) =>
      mesh(
        "PeerAuthentication",
        "pa",
        `{selector: {matchLabels: {app: web}}, portLevelMtls: {'${port}': {mode: DISABLE}}}`,
        "default",
        "security.mesh.io/v1",
      )
    expect(summary(analyze("peerauthentication.IneffectivePolicyAnalyzer", web, pa(9090)))).toEqual([
      "MSH0167 PeerAuthentication/default/pa",
    ])
    expect(analyze("peerauthentication.IneffectivePolicyAnalyzer", web, pa(8080))).toEqual([])
  })
})
