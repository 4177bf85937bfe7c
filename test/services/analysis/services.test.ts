/** Service and Deployment analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, deployment, ns, service, summary } from "./support.js"

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

  // A Deployment of the mesh: its namespace is labelled for injection.
  const injected = ns("default", "{mesh-injection: enabled}")

  it("MultiServiceAnalyzer reports one port served over two transport protocols", () => {
    const d = deployment("web", "{app: web}")
    const a = service("a", "{app: web}", "[{name: http, port: 80}]")
    const udp = service("b", "{app: web}", "[{name: dns, port: 80, protocol: UDP}]")
    const found = analyze("deployment.MultiServiceAnalyzer", injected, d, a, udp)
    expect(summary(found)).toEqual(["MSH0116 Deployment/default/web"])
    expect(found[0]?.text).toBe(
      "This deployment web is associated with multiple services using port 80 but different protocols: [default/a default/b]",
    )
    // Port names do not make protocols differ: both are TCP.
    expect(
      analyze("deployment.MultiServiceAnalyzer", injected, d, a, service("b", "{app: web}", "[{name: tcp, port: 80}]")),
    ).toEqual([])
  })

  it("ServiceAssociationAnalyzer no longer reports deployments without a service (MSH0117 is retired)", () => {
    expect(analyze("deployment.MultiServiceAnalyzer", injected, deployment("web", "{app: web}"))).toEqual([])
  })

  it("ConflictingPortsAnalyzer reports one target port reached through two ports", () => {
    const d = deployment("web", "{app: web}")
    const a = service("a", "{app: web}", "[{name: http, port: 80, targetPort: 8080}]")
    const b = service("b", "{app: web}", "[{name: http, port: 81, targetPort: 8080}]")
    const found = analyze("deployment.ConflictingPortsAnalyzer", injected, d, a, b)
    expect(summary(found)).toEqual(["MSH0137 Deployment/default/web"])
    expect(found[0]?.text).toBe(
      'This deployment web is associated with multiple services [default/a default/b] using targetPort "8080" but different ports: [80 81].',
    )
    // The reference's analyzer reports both kinds.
    expect(summary(analyze("deployment.MultiServiceAnalyzer", injected, d, a, b))).toEqual([
      "MSH0137 Deployment/default/web",
    ])
    const same = service("b", "{app: web}", "[{name: http, port: 80, targetPort: 9090}]")
    expect(analyze("deployment.ConflictingPortsAnalyzer", injected, d, a, same)).toEqual([])
  })

  it("skips deployments outside the mesh and waypoints", () => {
    const a = service("a", "{app: web}", "[{name: http, port: 80, targetPort: 8080}]")
    const b = service("b", "{app: web}", "[{name: http, port: 81, targetPort: 8080}]")
    expect(
      analyze("deployment.ConflictingPortsAnalyzer", ns("default"), deployment("web", "{app: web}"), a, b),
    ).toEqual([])
    const waypoint = deployment("web", "{app: web}").replace(
      "metadata: {name: web, namespace: default}",
      "metadata: {name: web, namespace: default, labels: {gateway.mesh.io/managed: mesh.io-mesh-controller}}",
    )
    expect(analyze("deployment.ConflictingPortsAnalyzer", injected, waypoint, a, b)).toEqual([])
    // The pod template's own inject label puts it in the mesh.
    const optedIn = deployment("web", "{app: web, sidecar.mesh.io/inject: 'true'}")
    const selecting = (name: string, port: number) =>
      service(name, "{app: web}", `[{name: http, port: ${port}, targetPort: 8080}]`)
    expect(
      summary(analyze("deployment.ConflictingPortsAnalyzer", optedIn, selecting("a", 80), selecting("b", 81))),
    ).toEqual(["MSH0137 Deployment/default/web"])
  })

  it("port name analyzers skip the mesh's own and managed gateway Services, and flag ExternalName `tcp` only", () => {
    const labelled = (labels: string) =>
      service("s", "{app: s}", "[{name: foo, port: 80}]", "mesh-system").replace(
        "metadata: {name: s, namespace: mesh-system}",
        `metadata: {name: s, namespace: mesh-system, labels: ${labels}}`,
      )
    expect(analyze("service.PortNameAnalyzer", labelled("{mesh: ingressgateway}"))).toEqual([])
    expect(analyze("service.PortNameAnalyzer", labelled("{release: mesh}"))).toEqual([])
    expect(
      analyze("service.PortNameAnalyzer", labelled("{gateway.mesh.io/managed: mesh.io-gateway-controller}")),
    ).toEqual([])
    expect(summary(analyze("service.PortNameAnalyzer", labelled("{app: user}")))).toEqual([
      "MSH0118 Service/mesh-system/s",
    ])
    const ext = (ports: string) => service("ext", "{}", ports, "default", "ExternalName")
    expect(analyze("service.ExternalNameServiceTypeAnalyzer", ext("[{name: tcp-db, port: 5432}]"))).toEqual([])
  })
})
