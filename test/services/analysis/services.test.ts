/** Service and Deployment analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, deployment, service, summary } from "./support.js"

describe("service and deployment analyzers", () => {
  it("PortNameAnalyzer reports ports whose name declares no protocol", () => {
    const found = analyze(
      "service.PortNameAnalyzer",
      service("web", "{app: web}", "[{name: web, port: 80, targetPort: 8080}, {name: http-alt, port: 81}]"),
    )
    expect(found.map((m) => m.text)).toEqual([
      "Port name web (port: 80, targetPort: 8080) doesn't follow the naming convention of the mesh's ports.",
    ])
    expect(
      analyze(
        "service.PortNameAnalyzer",
        service("web", "{app: web}", "[{name: grpc, port: 80}, {name: x, port: 81, appProtocol: http}]"),
      ),
    ).toEqual([])
  })

  it("ExternalNameServiceTypeAnalyzer reports TCP or unnamed ports of ExternalName services", () => {
    const ext = (ports: string) => service("ext", "{}", ports, "default", "ExternalName")
    expect(summary(analyze("service.ExternalNameServiceTypeAnalyzer", ext("[{name: tcp, port: 5432}]")))).toEqual([
      "MSH0150 Service/default/ext",
    ])
    expect(analyze("service.ExternalNameServiceTypeAnalyzer", ext("[{name: https, port: 443}]"))).toEqual([])
  })

  it("MultiServiceAnalyzer reports one port with two protocols across services", () => {
    const d = deployment("web", "{app: web}")
    const a = service("a", "{app: web}", "[{name: http, port: 80}]")
    expect(
      summary(analyze("deployment.MultiServiceAnalyzer", d, a, service("b", "{app: web}", "[{name: tcp, port: 80}]"))),
    ).toEqual(["MSH0116 Deployment/default/web"])
    expect(
      analyze("deployment.MultiServiceAnalyzer", d, a, service("b", "{app: web}", "[{name: http-b, port: 80}]")),
    ).toEqual([])
  })

  it("ServiceAssociationAnalyzer reports deployments no service selects", () => {
    expect(summary(analyze("deployment.ServiceAssociationAnalyzer", deployment("web", "{app: web}")))).toEqual([
      "MSH0117 Deployment/default/web",
    ])
    expect(
      analyze(
        "deployment.ServiceAssociationAnalyzer",
        deployment("web", "{app: web}"),
        service("web", "{app: web}", "[{name: http, port: 80}]"),
      ),
    ).toEqual([])
  })

  it("ConflictingPortsAnalyzer reports one port targeting two container ports", () => {
    const d = deployment("web", "{app: web}")
    const a = service("a", "{app: web}", "[{name: http, port: 80, targetPort: 8080}]")
    expect(
      summary(
        analyze(
          "deployment.ConflictingPortsAnalyzer",
          d,
          a,
          service("b", "{app: web}", "[{name: http, port: 80, targetPort: 9090}]"),
        ),
      ),
    ).toEqual(["MSH0137 Deployment/default/web"])
    expect(
      analyze(
        "deployment.ConflictingPortsAnalyzer",
        d,
        a,
        service("b", "{app: web}", "[{name: http, port: 80, targetPort: 8080}]"),
      ),
    ).toEqual([])
  })
})
