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
const ingressService = service("ingress", "{app: ingress}", "[{name: http, port: 80, protocol: TCP}]")

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
    const found = analyze(
      "gateway.ConflictingGatewayAnalyzer",
      gateway("a", 80, "[a.example.com]"),
      gateway("b", 80, "[a.example.com, c.example.com]"),
    )
    expect(summary(found)).toEqual(["MSH0145 Gateway/default/a", "MSH0145 Gateway/default/b"])
    expect(found[0]?.text).toBe(
      "Conflict with gateways default/b (workload selector app=ingress, port 80, hosts a.example.com).",
    )
    // Hosts compare as written: a wildcard does not conflict with a name it covers.
    expect(
      analyze(
        "gateway.ConflictingGatewayAnalyzer",
        gateway("a", 80, "[a.example.com]"),
        gateway("b", 80, "['*.example.com']"),
      ),
    ).toEqual([])
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

describe("gateway analyzers: the reference's matching rules (issue 35 group 5)", () => {
  const withSelector = (name: string, selector: string, port: number, hosts: string, tls = "") =>
    mesh(
      "Gateway",
      name,
      `{selector: ${selector}, servers: [{port: {number: ${port}, name: p${port}, protocol: ${tls === "" ? "HTTP" : "HTTPS"}}, hosts: ${hosts}${tls}}]}`,
    )

  it("IngressGatewayPortAnalyzer matches a server port by the Service's target port or port, TCP ports only", () => {
    const targeted = service("ingress", "{app: ingress}", "[{name: http, port: 80, targetPort: 8080, protocol: TCP}]")
    expect(analyze("gateway.IngressGatewayPortAnalyzer", ingressPod, targeted, gateway("gw", 8080, "['*']"))).toEqual(
      [],
    )
    expect(analyze("gateway.IngressGatewayPortAnalyzer", ingressPod, targeted, gateway("gw", 80, "['*']"))).toEqual([])
    const udp = service("ingress", "{app: ingress}", "[{name: dns, port: 80, protocol: UDP}]")
    const found = analyze("gateway.IngressGatewayPortAnalyzer", ingressPod, udp, gateway("gw", 80, "['*']"))
    expect(found.map((m) => m.text)).toEqual([
      "The gateway is listening on a target port (port 80) that is not defined in the Service associated with its workload instances (Pod selector app=ingress). If you need to access the gateway port through the gateway Service, it will not be available.",
    ])
  })

  it("ConflictingGatewayAnalyzer treats a sub-selector sharing a pod as the same workloads", () => {
    const pod2 = pod("ingress-0", "{app: ingress, zone: a}")
    const a = withSelector("a", "{app: ingress}", 80, "[a.example.com]")
    const b = withSelector("b", "{app: ingress, zone: a}", 80, "[a.example.com]")
    expect(summary(analyze("gateway.ConflictingGatewayAnalyzer", pod2, a, b))).toEqual([
      "MSH0145 Gateway/default/a",
      "MSH0145 Gateway/default/b",
    ])
    // Without a pod matching both, the selectors are different workloads.
    expect(analyze("gateway.ConflictingGatewayAnalyzer", pod("other", "{app: ingress, zone: b}"), a, b)).toEqual([])
    // A different bind is a different listener.
    const bound = withSelector("b", "{app: ingress}", 80, "[a.example.com]").replace("hosts:", "bind: 10.0.0.1, hosts:")
    expect(analyze("gateway.ConflictingGatewayAnalyzer", a, bound)).toEqual([])
  })

  it("CertificateAnalyzer compares gateways whose selectors include this one's labels", () => {
    const tls = ", tls: {mode: SIMPLE, credentialName: cert}"
    const narrow = withSelector("narrow", "{app: ingress, zone: a}", 443, "[a.example.com]", tls)
    const wide = withSelector("wide", "{app: ingress}", 443, "[b.example.com]", tls)
    const found = analyze("gateway.CertificateAnalyzer", narrow, wide)
    expect(summary(found)).toEqual(["MSH0138 Gateway/default/wide"])
    expect(found[0]?.text).toBe(
      "Duplicate certificate in multiple gateways [default/wide default/narrow] may cause 404s if clients re-use HTTP2 connections.",
    )
    const elsewhere = withSelector("elsewhere", "{app: other}", 443, "[b.example.com]", tls)
    expect(analyze("gateway.CertificateAnalyzer", narrow, elsewhere)).toEqual([])
    const files = (key: string) => `, tls: {mode: SIMPLE, serverCertificate: /etc/cert.pem, privateKey: ${key}}`
    expect(
      analyze(
        "gateway.CertificateAnalyzer",
        withSelector("gx", "{app: ingress}", 443, "[a]", files("/etc/a.key")),
        withSelector("gy", "{app: ingress}", 443, "[b]", files("/etc/b.key")),
      ),
    ).toEqual([])
  })
})
