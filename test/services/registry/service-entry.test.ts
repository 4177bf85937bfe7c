import { describe, expect, it } from "vitest"
import { convertServiceEntries, normaliseAddress } from "../../../src/services/registry/service-entry.js"
import { serviceEntry, workloadEntry } from "./fixtures.js"

const noAlloc = { clusterId: "c1", trustDomain: "cluster.local", autoAllocate: false }

describe("convertServiceEntries", () => {
  it("one service per host with ports, protocols, resolution, location, exportTo and labels", () => {
    const { services, endpoints } = convertServiceEntries(
      [
        serviceEntry(
          "ext",
          {
            hosts: ["api.example.com", "www.example.com"],
            addresses: ["10.0.0.1/32", "10.1.0.0/16"],
            ports: [
              { number: 443, name: "https", protocol: "https" },
              { number: 8080, name: "http", protocol: "HTTP", targetPort: 80 },
              { number: 9000, name: "odd", protocol: "weird" },
            ],
            location: "MESH_INTERNAL",
            resolution: "STATIC",
            exportTo: ["."],
            subjectAltNames: ["spiffe://cluster.local/ns/default/sa/api"],
            endpoints: [{ address: "1.1.1.1" }],
          },
          { labels: { app: "api" } },
        ),
      ],
      [],
      noAlloc,
    )
    expect(services.map((s) => s.hostname)).toEqual(["api.example.com", "www.example.com"])
    const api = services[0]!
    expect(api.addresses).toEqual(["10.0.0.1", "10.1.0.0/16"])
    expect(api.autoAllocatedAddresses).toEqual([])
    expect(api.ports).toEqual([
      { name: "https", port: 443, protocol: "HTTPS" },
      { name: "http", port: 8080, protocol: "HTTP", targetPort: 80 },
      { name: "odd", port: 9000, protocol: "UNSUPPORTED" },
    ])
    expect(api.resolution).toBe("STATIC")
    expect(api.location).toBe("MESH_INTERNAL")
    expect(api.exportTo).toEqual(["."])
    expect(api.labels).toEqual({ app: "api" })
    expect(api.registry).toBe("ServiceEntry")
    expect(api.clusterId).toBe("c1")
    expect(api.serviceAccounts).toEqual(["spiffe://cluster.local/ns/default/sa/api"])
    expect(api.source).toBe("ServiceEntry/default/ext")
    // 2 hosts x 3 ports x 1 endpoint
    expect(endpoints).toHaveLength(6)
  })

  it("defaults: location MESH_EXTERNAL, resolution NONE, exportTo empty (mesh default applies)", () => {
    const { services, endpoints } = convertServiceEntries(
      [serviceEntry("x", { hosts: ["x.com"], ports: [{ number: 80, name: "http" }] })].map((se) => ({
        ...se,
        spec: { hosts: se.spec.hosts, ports: se.spec.ports } as never,
      })),
      [],
      noAlloc,
    )
    expect(services[0]).toMatchObject({ location: "MESH_EXTERNAL", resolution: "NONE", exportTo: [] })
    expect(endpoints).toEqual([])
  })

  it("static endpoints: port remapping priority endpoint port > targetPort > number, labels, identity", () => {
    const { endpoints } = convertServiceEntries(
      [
        serviceEntry("db", {
          hosts: ["db.internal"],
          resolution: "STATIC",
          ports: [
            { number: 5432, name: "tcp-pg", protocol: "TCP" },
            { number: 80, name: "http", protocol: "HTTP", targetPort: 8080 },
            { number: 81, name: "http-2", protocol: "HTTP" },
          ],
          endpoints: [
            {
              address: "10.0.0.5",
              ports: { "tcp-pg": 15432 },
              labels: { version: "v1" },
              network: "net1",
              locality: "us/east/a",
              weight: 3,
              serviceAccount: "db",
            },
            { address: "unix:///var/run/db.sock" },
          ],
        }),
      ],
      [],
      noAlloc,
    )
    const first = endpoints.filter((e) => e.address === "10.0.0.5")
    expect(first.map((e) => `${e.servicePortName}:${e.port}`)).toEqual(["tcp-pg:15432", "http:8080", "http-2:81"])
    expect(first[0]).toMatchObject({
      hostname: "db.internal",
      namespace: "default",
      labels: { version: "v1", "topology.mesh.io/network": "net1" },
      network: "net1",
      locality: "us/east/a",
      weight: 3,
      serviceAccount: "spiffe://cluster.local/ns/default/sa/db",
      healthStatus: "HEALTHY",
      clusterId: "c1",
    })
    const unix = endpoints.filter((e) => e.address.startsWith("unix://"))
    expect(unix.map((e) => e.port)).toEqual([0, 0, 0])
    expect(unix[0]?.weight).toBe(1)
  })

  it("DNS without endpoints: one endpoint per port addressed by the host", () => {
    const { endpoints } = convertServiceEntries(
      [
        serviceEntry("dns", {
          hosts: ["a.example.com"],
          resolution: "DNS",
          ports: [
            { number: 443, name: "tls", protocol: "TLS" },
            { number: 80, name: "http", protocol: "HTTP", targetPort: 8080 },
          ],
        }),
        serviceEntry("rr", {
          hosts: ["b.example.com"],
          resolution: "DNS_ROUND_ROBIN",
          ports: [{ number: 80, name: "http" }],
        }),
        serviceEntry("none", { hosts: ["c.example.com"], resolution: "NONE", ports: [{ number: 80, name: "http" }] }),
      ],
      [],
      noAlloc,
    )
    expect(endpoints.map((e) => `${e.hostname}|${e.servicePortName}|${e.address}:${e.port}`)).toEqual([
      "a.example.com|tls|a.example.com:443",
      "a.example.com|http|a.example.com:8080",
      "b.example.com|http|b.example.com:80",
    ])
  })

  it("workloadSelector picks WorkloadEntries of the same namespace by labels (metadata labels win)", () => {
    const { services, endpoints } = convertServiceEntries(
      [
        serviceEntry("vm", {
          hosts: ["vm.svc"],
          resolution: "STATIC",
          location: "MESH_INTERNAL",
          ports: [{ number: 80, name: "http", targetPort: 8080 }],
          workloadSelector: { labels: { app: "vm" } },
        }),
      ],
      [
        workloadEntry("we1", { address: "10.0.0.1", labels: { app: "vm" } }),
        workloadEntry("we2", { address: "10.0.0.2", labels: { app: "other" } }, { labels: { app: "vm" } }),
        workloadEntry("we3", { address: "10.0.0.3", labels: { app: "vm" } }, { labels: { app: "no" } }),
        workloadEntry("we4", { address: "10.0.0.4", labels: { app: "vm" } }, { namespace: "other" }),
        workloadEntry("we5", { address: "10.0.0.5", labels: { app: "vm" }, ports: { http: 9090 } }),
      ],
      noAlloc,
    )
    expect(services[0]?.selector).toEqual({ app: "vm" })
    expect(endpoints.map((e) => `${e.address}:${e.port}`)).toEqual(["10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.5:9090"])
  })

  it("the older entry wins a host defined twice in one namespace; other namespaces are separate", () => {
    const { services, conflicts } = convertServiceEntries(
      [
        serviceEntry(
          "new",
          { hosts: ["h.com"], ports: [{ number: 1, name: "a" }] },
          { creationTimestamp: "2024-02-01T00:00:00Z" },
        ),
        serviceEntry(
          "old",
          { hosts: ["h.com"], ports: [{ number: 2, name: "b" }] },
          { creationTimestamp: "2024-01-01T00:00:00Z" },
        ),
        serviceEntry("elsewhere", { hosts: ["h.com"] }, { namespace: "ns2" }),
      ],
      [],
      noAlloc,
    )
    expect(services.map((s) => `${s.namespace}/${s.hostname}:${s.source}`)).toEqual([
      "default/h.com:ServiceEntry/default/old",
      "ns2/h.com:ServiceEntry/ns2/elsewhere",
    ])
    expect(conflicts).toEqual([
      { key: "default/h.com", winner: "ServiceEntry/default/old", ignored: ["ServiceEntry/default/new"] },
    ])
  })

  it("auto-allocates addresses for entries without addresses, as the reference", () => {
    const opts = { ...noAlloc, autoAllocate: true }
    const { services } = convertServiceEntries(
      [
        serviceEntry("a", { hosts: ["a.com"], resolution: "DNS" }),
        serviceEntry("given", { hosts: ["b.com"], addresses: ["10.0.0.1"] }),
        serviceEntry("wild-none", { hosts: ["*.wild.com"], resolution: "NONE" }),
        serviceEntry("wild-static", {
          hosts: ["*.static.com"],
          resolution: "STATIC",
          endpoints: [{ address: "1.1.1.1" }],
        }),
        serviceEntry("plain-none", { hosts: ["none.com"], resolution: "NONE" }),
        serviceEntry("dyn", { hosts: ["*.dyn.com"], resolution: "DYNAMIC_DNS" as never }),
        serviceEntry(
          "opt-out",
          { hosts: ["out.com"] },
          { labels: { "networking.mesh.io/enable-autoallocate-ip": "false" } },
        ),
      ],
      [],
      opts,
    )
    const byHost = Object.fromEntries(services.map((s) => [s.hostname, s]))
    expect(byHost["a.com"]?.autoAllocatedAddresses).toHaveLength(2)
    expect(byHost["a.com"]?.addresses).toEqual(byHost["a.com"]?.autoAllocatedAddresses)
    expect(byHost["a.com"]?.addresses[0]).toMatch(/^240\.240\.\d+\.\d+$/)
    expect(byHost["a.com"]?.addresses[1]).toMatch(/^2001:2::f0f0:[0-9a-f]+$/)
    expect(byHost["b.com"]?.autoAllocatedAddresses).toEqual([])
    expect(byHost["b.com"]?.addresses).toEqual(["10.0.0.1"])
    expect(byHost["*.wild.com"]?.autoAllocatedAddresses).toEqual([])
    expect(byHost["*.static.com"]?.autoAllocatedAddresses).toHaveLength(2)
    expect(byHost["none.com"]?.autoAllocatedAddresses).toHaveLength(2)
    expect(byHost["*.dyn.com"]?.autoAllocatedAddresses).toEqual([])
    expect(byHost["*.dyn.com"]?.resolution).toBe("DYNAMIC_DNS")
    expect(byHost["out.com"]?.autoAllocatedAddresses).toEqual([])
  })

  it("auto-allocation off: no addresses", () => {
    const { services } = convertServiceEntries(
      [serviceEntry("a", { hosts: ["a.com"], resolution: "DNS" })],
      [],
      noAlloc,
    )
    expect(services[0]?.addresses).toEqual([])
  })
})

describe("conversion cache", () => {
  it("reuses the results of unchanged hosts and recomputes changed ones", () => {
    const a = serviceEntry("a", { hosts: ["a.com"], resolution: "DNS", ports: [{ number: 80, name: "http" }] })
    const b = serviceEntry("b", {
      hosts: ["b.com"],
      resolution: "STATIC",
      ports: [{ number: 80, name: "http" }],
      workloadSelector: { labels: { app: "b" } },
    })
    const we1 = workloadEntry("we1", { address: "10.0.0.1", labels: { app: "b" } })
    const cache = new Map()
    const first = convertServiceEntries([a, b], [we1], undefined, undefined, cache)
    const a2 = serviceEntry("a", { hosts: ["a.com"], resolution: "DNS", ports: [{ number: 81, name: "http" }] })
    const second = convertServiceEntries([a2, b], [we1], undefined, first.allocation, cache)
    expect(second.services[1]).toBe(first.services[1])
    expect(second.services[0]).not.toBe(first.services[0])
    expect(second.services[0]?.ports[0]?.port).toBe(81)
    const we2 = workloadEntry("we2", { address: "10.0.0.2", labels: { app: "b" } })
    const third = convertServiceEntries([a2, b], [we1, we2], undefined, second.allocation, cache)
    expect(third.services[0]).toBe(second.services[0])
    expect(third.endpoints.filter((e) => e.hostname === "b.com").map((e) => e.address)).toEqual([
      "10.0.0.1",
      "10.0.0.2",
    ])
    const fourth = convertServiceEntries([b], [we1, we2], undefined, third.allocation, cache)
    expect(fourth.services.map((s) => s.hostname)).toEqual(["b.com"])
    expect(cache.size).toBe(1)
    // Same result as without a cache.
    expect(fourth).toEqual(convertServiceEntries([b], [we1, we2], undefined, third.allocation))
  })
})

describe("normaliseAddress", () => {
  it("turns full-length CIDRs into addresses and keeps others", () => {
    expect(normaliseAddress("1.2.3.4/32")).toBe("1.2.3.4")
    expect(normaliseAddress("2001:db8::1/128")).toBe("2001:db8::1")
    expect(normaliseAddress("10.0.0.0/8")).toBe("10.0.0.0/8")
    expect(normaliseAddress("1.2.3.4")).toBe("1.2.3.4")
  })
})
