/** Sidecar/Telemetry selector analyzers, ServiceEntry addresses and ineffective policies. */
import { describe, expect, it } from "@effect/vitest"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { analyze, analyzeWith, mesh, pod, summary } from "./support.js"

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
  it("sidecar.SelectorAnalyzer reports two Sidecars without selector in a namespace, names sorted", () => {
    const found = analyze("sidecar.SelectorAnalyzer", sidecar("b"), sidecar("a"))
    expect(summary(found)).toEqual(["MSH0111 Sidecar/default/b", "MSH0111 Sidecar/default/a"])
    expect(found[0]?.text).toBe(
      'The Sidecars [a b] in namespace "default" have no workload selector, which can lead to undefined behavior.',
    )
    const web = pod("web-0", "{app: web}")
    expect(analyze("sidecar.SelectorAnalyzer", web, sidecar("a"), sidecar("b", "{app: web}"))).toEqual([])
  })

  it("sidecar.SelectorAnalyzer reports a selector that selects no pod of its namespace", () => {
    const elsewhere = pod("web-0", "{app: web}", "", "other")
    const found = analyze("sidecar.SelectorAnalyzer", elsewhere, sidecar("a", "{version: v1, app: web}"))
    expect(found.map((m) => `${m.type.code} ${m.text}`)).toEqual([
      'MSH0101 Referenced selector not found: "app=web,version=v1"',
    ])
    expect(found[0]?.path).toEqual(["spec", "workloadSelector", "labels"])
    expect(
      analyze("sidecar.SelectorAnalyzer", pod("web-0", "{app: web, version: v1}"), sidecar("a", "{app: web}")),
    ).toEqual([])
  })

  it("sidecar.SelectorAnalyzer reports two Sidecars selecting one pod, once per pod", () => {
    const pods = [pod("web-0", "{app: web, version: v1}"), pod("web-1", "{app: web, version: v1}")]
    const found = analyze(
      "sidecar.SelectorAnalyzer",
      ...pods,
      sidecar("b", "{app: web}"),
      sidecar("a", "{version: v1}"),
    )
    expect(summary(found)).toHaveLength(4)
    expect(found[0]?.text).toBe(
      'The Sidecars [a b] in namespace "default" select the same workload pod "web-0", which can lead to undefined behavior.',
    )
    expect(
      analyze(
        "sidecar.SelectorAnalyzer",
        pod("web-0", "{app: web, version: v1}"),
        pod("web-2", "{version: v2}"),
        sidecar("a", "{app: web}"),
        sidecar("b", "{version: v2}"),
      ),
    ).toEqual([])
  })

  it("telemetry.DefaultSelectorAnalyzer reports two Telemetries without selector in a namespace", () => {
    expect(summary(analyze("telemetry.DefaultSelectorAnalyzer", telemetry("a"), telemetry("b")))).toEqual([
      "MSH0160 Telemetry/default/a",
      "MSH0160 Telemetry/default/b",
    ])
    expect(analyze("telemetry.DefaultSelectorAnalyzer", telemetry("a"))).toEqual([])
  })

  it("telemetry.SelectorAnalyzer reports a selector selecting no pod", () => {
    expect(analyze("telemetry.SelectorAnalyzer", telemetry("a", "{app: web}")).map((m) => m.text)).toEqual([
      'Referenced selector not found: "app=web"',
    ])
    expect(analyze("telemetry.SelectorAnalyzer", pod("web-0", "{app: web}"), telemetry("a", "{app: web}"))).toEqual([])
  })

  it("telemetry.SelectorAnalyzer reports two Telemetries selecting one pod", () => {
    const web = pod("web-0", "{app: web}")
    expect(
      summary(analyze("telemetry.SelectorAnalyzer", web, telemetry("a", "{app: web}"), telemetry("b", "{app: web}"))),
    ).toHaveLength(2)
    expect(
      analyze(
        "telemetry.SelectorAnalyzer",
        web,
        pod("api-0", "{app: api}"),
        telemetry("a", "{app: web}"),
        telemetry("b", "{app: api}"),
      ),
    ).toEqual([])
  })
})

describe("telemetry.ProviderAnalyzer", () => {
  const logging = (entries: string) =>
    mesh("Telemetry", "logs", `{accessLogging: ${entries}}`, "default", "telemetry.mesh.io/v1")

  it("reports access logging without providers when the mesh config has no default provider", () => {
    expect(analyze("telemetry.ProviderAnalyzer", logging("[{}]")).map((m) => `${m.type.code} ${m.text}`)).toEqual([
      'MSH0157 The Telemetry logs in namespace "default" with empty providers will be ignored.',
    ])
    expect(analyze("telemetry.ProviderAnalyzer", logging("[{disabled: true}]"))).toEqual([])
    expect(analyze("telemetry.ProviderAnalyzer", logging("[{providers: [{name: envoy}]}]"))).toEqual([])
  })

  it("is silent when the mesh config names a default access-logging provider", () => {
    const base = defaultMeshConfig()
    const meshConfig = { ...base, defaultProviders: { ...base.defaultProviders, accessLogging: ["envoy"] } }
    expect(analyzeWith("telemetry.ProviderAnalyzer", { meshConfig }, logging("[{}]"))).toEqual([])
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

  it("serviceentry.Analyzer reports each TCP or unset-protocol port, not other protocols", () => {
    const se = mesh(
      "ServiceEntry",
      "db",
      "{hosts: [db.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}, {number: 6379, name: redis, protocol: REDIS}, {number: 27017, name: mongo, protocol: MONGO}, {number: 80, name: http, protocol: HTTP}], resolution: DNS}",
    )
    expect(analyze("serviceentry.Analyzer", se).map((m) => m.path)).toEqual([["spec", "ports", 0]])
  })

  it("serviceentry.Analyzer is silent when the mesh config has proxies capture DNS and auto-allocate", () => {
    const se = mesh(
      "ServiceEntry",
      "db",
      "{hosts: [db.example.com], ports: [{number: 5432, name: tcp, protocol: TCP}], resolution: DNS}",
    )
    const withMetadata = (proxyMetadata: Record<string, string>) => {
      const base = defaultMeshConfig()
      return { meshConfig: { ...base, defaultConfig: { ...base.defaultConfig, proxyMetadata } } }
    }
    const capture = { MESH_META_DNS_CAPTURE: "true" }
    expect(
      analyzeWith("serviceentry.Analyzer", withMetadata({ ...capture, MESH_META_DNS_AUTO_ALLOCATE: "true" }), se),
    ).toEqual([])
    expect(
      analyzeWith("serviceentry.Analyzer", withMetadata({ ...capture, PILOT_ENABLE_IP_AUTOALLOCATE: "true" }), se),
    ).toEqual([])
    expect(analyzeWith("serviceentry.Analyzer", withMetadata(capture), se)).toHaveLength(1)
    expect(
      analyzeWith("serviceentry.Analyzer", withMetadata({ MESH_META_DNS_AUTO_ALLOCATE: "true" }), se),
    ).toHaveLength(1)
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
          "k8sgateway.SelectorAnalyzer",
          pod("gw-0", "{app: gw, gateway.networking.k8s.io/gateway-name: gw}"),
          policy,
        ),
      ),
    ).toEqual(["MSH0166 AuthorizationPolicy/default/p"])
    expect(analyze("k8sgateway.SelectorAnalyzer", pod("gw-0", "{app: gw}"), policy)).toEqual([])
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
