/**
 * From the control plane to the agent, without processes: a wildcard ServiceEntry converted by the
 * registry, put in a push context, turned into the NDS name table, and answered by the DNS proxy.
 */
import dnsPacket from "dns-packet"
import { describe, expect, it } from "vitest"
import { decide } from "../../../../src/services/agent/dns/answer.js"
import { buildLookupTable, lookup, type PodDns } from "../../../../src/services/agent/dns/lookup-table.js"
import { convertServiceEntries } from "../../../../src/services/registry/service-entry.js"
import { generateNameTable, type NameTable } from "../../../../src/services/xds/proxygen/nds/index.js"
import { serviceEntry } from "../../registry/fixtures.js"
import { pushOf, sidecar } from "../../xds/proxygen/telemetry/support.js"

const pod: PodDns = {
  namespace: "default",
  domain: "",
  searchDomains: ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"],
}

const entries = [
  serviceEntry("partner", {
    hosts: ["*.partner.example.com"],
    addresses: ["240.0.0.50"],
    ports: [{ number: 443, name: "tls", protocol: "TLS" }],
  }),
  // a wildcard without addresses: nothing to answer with, left to upstream DNS
  serviceEntry("unaddressed", {
    hosts: ["*.unaddressed.example.com"],
    ports: [{ number: 443, name: "tls", protocol: "TLS" }],
  }),
  // resolution DNS: the registry allocates it an address, which a wildcard must not answer with
  serviceEntry("resolved", {
    hosts: ["*.resolved.example.com"],
    resolution: "DNS",
    endpoints: [{ address: "lb.resolved.example.com" }],
    ports: [{ number: 443, name: "tls", protocol: "TLS" }],
  }),
]

const agentTable = (metadata: Record<string, unknown>) => {
  const { services, endpoints } = convertServiceEntries(entries, [])
  const push = pushOf({ services, endpoints })
  const proxy = sidecar("default", {}, { DNS_CAPTURE: "true", ...metadata })
  const generated = generateNameTable(push, proxy)
  return buildLookupTable(generated.resources[0]!.build() as NameTable, pod)
}

describe("wildcard ServiceEntry, control plane to DNS proxy", () => {
  it("the registry did allocate an address to the DNS wildcard (what the table must leave out)", () => {
    const resolved = convertServiceEntries(entries, []).services.find((s) => s.hostname === "*.resolved.example.com")
    expect(resolved?.autoAllocatedAddresses.length).toBeGreaterThan(0)
  })

  it("answers names below the wildcard with the entry's address, and forwards the rest", () => {
    for (const metadata of [{}, { DNS_AUTO_ALLOCATE: "true" }]) {
      const table = agentTable(metadata)
      expect(lookup(table, "api.partner.example.com", "A")?.map((r) => r.data)).toEqual(["240.0.0.50"])
      expect(lookup(table, "a.b.partner.example.com.", "A")?.map((r) => r.data)).toEqual(["240.0.0.50"])
      expect(lookup(table, "partner.example.com", "A")).toBeUndefined()
      expect(lookup(table, "api.unaddressed.example.com", "A")).toBeUndefined()
      expect(lookup(table, "api.resolved.example.com", "A")).toBeUndefined()
    }
  })

  it("replies authoritatively to a query packet for a name below the wildcard", () => {
    const query = dnsPacket.encode({
      id: 7,
      type: "query",
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name: "api.partner.example.com", type: "A", class: "IN" }],
    })
    const decision = decide(agentTable({}), query, "udp")
    expect(decision._tag).toBe("Answer")
    if (decision._tag !== "Answer") return
    const reply = dnsPacket.decode(decision.response)
    expect(reply.answers?.map((a) => [a.name, a.type, a.data])).toEqual([
      ["api.partner.example.com", "A", "240.0.0.50"],
    ])
  })
})
