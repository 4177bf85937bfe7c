import { describe, expect, it } from "vitest"
import {
  convertProtocol,
  convertService,
  externalNameEndpoints,
} from "../../../../src/services/registry/orchestrator/service.js"
import { service } from "./objects.js"

const options = { clusterId: "c1", domain: "cluster.local", trustDomain: "example.org" }

const converted = (svc: Parameters<typeof convertService>[0]) => {
  const result = convertService(svc, options)
  if ("problem" in result) throw new Error(result.problem)
  return result
}

describe("convertProtocol", () => {
  it.each([
    [80, "http", undefined, undefined, "HTTP"],
    [80, "http-web", undefined, undefined, "HTTP"],
    [80, "HTTP2-x", undefined, undefined, "HTTP2"],
    [443, "https", undefined, undefined, "HTTPS"],
    [9090, "grpc", undefined, undefined, "GRPC"],
    [9090, "grpc-web", undefined, undefined, "GRPC-Web"],
    [9090, "grpc-web-x", undefined, undefined, "GRPC-Web"],
    [9090, "grpc-x", undefined, undefined, "GRPC"],
    [9000, "tcp-db", undefined, undefined, "TCP"],
    [9000, "tls", undefined, undefined, "TLS"],
    [27018, "mongo", undefined, undefined, "MONGO"],
    [6379, "redis", undefined, undefined, "REDIS"],
    [3307, "mysql-main", undefined, undefined, "MYSQL"],
    [9000, "web", undefined, undefined, "UNSUPPORTED"],
    [9000, "", undefined, undefined, "UNSUPPORTED"],
    // Well-known ports are TCP when the name says nothing.
    [3306, "db", undefined, undefined, "TCP"],
    [53, "", undefined, undefined, "TCP"],
    // appProtocol wins over the name; the orchestrator's standard values map.
    [80, "tcp", undefined, "http", "HTTP"],
    [80, "web", undefined, "kubernetes.io/h2c", "HTTP2"],
    [80, "web", undefined, "kubernetes.io/ws", "HTTP"],
    [443, "web", undefined, "kubernetes.io/wss", "HTTPS"],
    [80, "web", undefined, "grpc", "GRPC"],
    // UDP stays UDP whatever the name.
    [53, "http", "UDP", "http", "UDP"],
  ] as const)("port %i %s (%s, %s) → %s", (port, name, transport, app, expected) => {
    expect(convertProtocol(port, name, transport, app)).toBe(expected)
  })
})

describe("convertService", () => {
  it("a ClusterIP service: host, address, ports, labels, selector, registry, creation time", () => {
    const { service: s } = converted(
      service(
        "reviews",
        {
          ports: [
            { name: "http", port: 9080, targetPort: 8080 },
            { name: "grpc", port: 9090, targetPort: 9090, appProtocol: "grpc" },
            { name: "named", port: 7000, targetPort: "metrics" },
          ],
        },
        { labels: { app: "reviews" } },
      ),
    )
    expect(s).toEqual({
      hostname: "reviews.default.svc.cluster.local",
      namespace: "default",
      ports: [
        { name: "http", port: 9080, protocol: "HTTP", targetPort: 8080 },
        { name: "grpc", port: 9090, protocol: "GRPC" },
        { name: "named", port: 7000, protocol: "UNSUPPORTED" },
      ],
      addresses: ["10.96.0.10"],
      autoAllocatedAddresses: [],
      resolution: "STATIC",
      location: "MESH_INTERNAL",
      exportTo: [],
      labels: { app: "reviews" },
      registry: "Orchestrator",
      clusterId: "c1",
      selector: { app: "reviews" },
      source: "Service/default/reviews",
      creationTimestamp: "2024-01-01T00:00:00Z",
    })
  })

  it("dual-stack addresses come from clusterIPs", () => {
    const { service: s } = converted(service("a", { clusterIP: "10.0.0.1", clusterIPs: ["10.0.0.1", "fd00::1"] }))
    expect(s.addresses).toEqual(["10.0.0.1", "fd00::1"])
  })

  it("a headless service has no address and resolution NONE", () => {
    const { service: s } = converted(service("db", { clusterIP: "None", clusterIPs: ["None"] }))
    expect(s.addresses).toEqual([])
    expect(s.resolution).toBe("NONE")
    expect(s.location).toBe("MESH_INTERNAL")
  })

  it("an ExternalName service resolves by DNS outside the mesh; its endpoints are the external name", () => {
    const result = converted(
      service("ext", { type: "ExternalName", externalName: "api.example.com", clusterIP: "", selector: {} }),
    )
    expect(result.service.resolution).toBe("DNS")
    expect(result.service.location).toBe("MESH_EXTERNAL")
    expect(result.service.addresses).toEqual([])
    expect(result.externalName).toBe("api.example.com")
    const endpoints = externalNameEndpoints(result.service, "api.example.com", "c1")
    expect(endpoints.map((e) => [e.address, e.port, e.servicePortName])).toEqual([["api.example.com", 80, "http"]])
  })

  it("exportTo and identities from annotations (mesh.io, or the upstream istio.io names)", () => {
    const { service: a } = converted(
      service(
        "a",
        {},
        {
          annotations: {
            "networking.mesh.io/exportTo": " ., other ,",
            "alpha.mesh.io/kubernetes-serviceaccounts": "sa1",
          },
        },
      ),
    )
    expect(a.exportTo).toEqual([".", "other"])
    expect(a.serviceAccounts).toEqual(["spiffe://example.org/ns/default/sa/sa1"])
    const { service: b } = converted(service("b", {}, { annotations: { "networking.istio.io/exportTo": "*" } }))
    expect(b.exportTo).toEqual(["*"])
  })

  it("bad ports are skipped and named; an object without a name is refused", () => {
    const result = converted(
      service("a", {
        ports: [
          { name: "http", port: 0 },
          { name: "ok", port: 81 },
          { name: "ok", port: 82 },
        ],
      }),
    )
    expect(result.service.ports.map((p) => p.port)).toEqual([81])
    expect(result.problems).toEqual([
      "spec.ports[0].port is not a port number",
      'spec.ports[2].name "ok" is used twice',
    ])
    expect(convertService({ metadata: { name: "" } } as never, options)).toEqual({
      problem: "metadata.name and metadata.namespace are required",
    })
  })
})
