/** Gateway analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, pod, service, summary } from "./support.js"

const gateway = (name: string, port: number, hosts: string, tls = "") =>
  mesh(
    "Gateway",
    name,
    `{selector: {app: ingress}, servers: [{port: {number: ${port}, name: p${port}, protocol: ${tls === "" ? "HTTP" : "HTTPS"}}, hosts: ${hosts}${tls}}]}`,
  )
const ingressPod = pod("ingress-0", "{app: ingress}")
const ingressService = service("ingress", "{app: ingress}", "[{name: http, port: 80}]")

describe("gateway analyzers", () => {
  it("IngressGatewayPortAnalyzer reports a selector without pods and ports without a Service port", () => {
    expect(analyze("gateway.IngressGatewayPortAnalyzer", gateway("gw", 80, "['*']")).map((m) => m.text)).toEqual([
      'Referenced selector not found: "app=ingress"',
    ])
    expect(
      summary(analyze("gateway.IngressGatewayPortAnalyzer", ingressPod, ingressService, gateway("gw", 8443, "['*']"))),
    ).toEqual(["MSH0162 Gateway/default/gw"])
    expect(
      analyze("gateway.IngressGatewayPortAnalyzer", ingressPod, ingressService, gateway("gw", 80, "['*']")),
    ).toEqual([])
  })

  it("ConflictingGatewayAnalyzer reports two gateways claiming one host on one port", () => {
    expect(
      summary(
        analyze(
          "gateway.ConflictingGatewayAnalyzer",
          gateway("a", 80, "[a.example.com]"),
          gateway("b", 80, "['*.example.com']"),
        ),
      ),
    ).toEqual(["MSH0145 Gateway/default/a", "MSH0145 Gateway/default/b"])
    expect(
      analyze(
        "gateway.ConflictingGatewayAnalyzer",
        gateway("a", 80, "[a.example.com]"),
        gateway("b", 80, "[b.example.com]"),
      ),
    ).toEqual([])
  })

  it("CertificateAnalyzer reports one credential used by two gateways", () => {
    const tls = (cred: string) => `, tls: {mode: SIMPLE, credentialName: ${cred}}`
    expect(
      summary(
        analyze(
          "gateway.CertificateAnalyzer",
          gateway("a", 443, "[a.example.com]", tls("cert")),
          gateway("b", 443, "[b.example.com]", tls("cert")),
        ),
      ),
    ).toHaveLength(2)
    expect(
      analyze(
        "gateway.CertificateAnalyzer",
        gateway("a", 443, "[a.example.com]", tls("cert-a")),
        gateway("b", 443, "[b.example.com]", tls("cert-b")),
      ),
    ).toEqual([])
  })
})
