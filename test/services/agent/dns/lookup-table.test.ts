/** The DNS proxy's lookup table: the names a NameTable answers for, search expansion, wildcards, A vs AAAA. */
import { describe, expect, it } from "vitest"
import {
  buildLookupTable,
  clusterDomainOf,
  DNS_TTL_SECONDS,
  lookup,
  type PodDns,
} from "../../../../src/services/agent/dns/lookup-table.js"
import { ORCHESTRATOR_REGISTRY } from "../../../../src/services/registry/orchestrator/service.js"
import type { NameTable } from "../../../../src/services/xds/proxygen/nds/name-table.js"

const pod: PodDns = {
  namespace: "default",
  domain: "",
  searchDomains: ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"],
}

const orchestratorService = (name: string, namespace: string, ips: Array<string>) => ({
  [`${name}.${namespace}.svc.cluster.local`]: {
    ips,
    registry: ORCHESTRATOR_REGISTRY,
    shortname: name,
    namespace,
    alt_hosts: [`${name}.${namespace}`, `${name}.${namespace}.svc`],
  },
})

const nameTable: NameTable = {
  table: {
    ...orchestratorService("reviews", "default", ["10.0.0.1"]),
    ...orchestratorService("ratings", "other", ["10.0.0.2", "fd00::2"]),
    ...orchestratorService("db", "default", ["10.1.0.1", "10.1.0.2", "10.1.0.3"]),
    "api.example.com": { ips: ["192.0.2.10"], registry: "External" },
    "*.wild.example.com": { ips: ["192.0.2.20"], registry: "External" },
    "*.example.com": { ips: ["192.0.2.30"], registry: "External" },
    "v6only.example.com": { ips: ["2001:db8::1"], registry: "External" },
    "noaddr.other.test": { ips: [], registry: "External" },
  },
}

const table = buildLookupTable(nameTable, pod)
const data = (name: string, type: string) => lookup(table, name, type)?.map((r) => `${r.type} ${r.name} ${r.data}`)

describe("clusterDomainOf", () => {
  it("drops the pod's namespace from its domain", () => {
    expect(clusterDomainOf({ namespace: "default", domain: "" })).toBe("svc.cluster.local")
    expect(clusterDomainOf({ namespace: "ns1", domain: "ns1.svc.corp.local" })).toBe("svc.corp.local")
    expect(clusterDomainOf({ namespace: "ns1", domain: "svc.corp.local." })).toBe("svc.corp.local")
  })
})

describe("lookup", () => {
  it("answers a host with its addresses, TTL 30 s, whatever the case and trailing dot", () => {
    expect(data("reviews.default.svc.cluster.local", "A")).toEqual(["A reviews.default.svc.cluster.local 10.0.0.1"])
    expect(data("Reviews.Default.SVC.cluster.local.", "A")).toEqual(["A reviews.default.svc.cluster.local 10.0.0.1"])
    expect(lookup(table, "reviews.default.svc.cluster.local", "A")![0]!.ttl).toBe(DNS_TTL_SECONDS)
  })

  it("gives a v4-only host an empty AAAA answer and a v6-only host an empty A answer (NOERROR, not forwarded)", () => {
    expect(data("reviews.default.svc.cluster.local", "AAAA")).toEqual([])
    expect(data("v6only.example.com", "A")).toEqual([])
    expect(data("v6only.example.com", "AAAA")).toEqual(["AAAA v6only.example.com 2001:db8::1"])
    expect(data("ratings.other.svc.cluster.local", "AAAA")).toEqual(["AAAA ratings.other.svc.cluster.local fd00::2"])
  })

  it("forwards other types than A and AAAA, even of a known name (the table holds addresses only)", () => {
    expect(data("reviews.default.svc.cluster.local", "MX")).toBeUndefined()
    expect(data("reviews.default.svc.cluster.local", "TXT")).toBeUndefined()
    expect(data("ratings.other.default.svc.cluster.local", "CNAME")).toBeUndefined()
    expect(data("foo.wild.example.com", "SRV")).toBeUndefined()
  })

  it("answers every address of a service (headless: all its endpoints)", () => {
    expect(data("db.default.svc.cluster.local", "A")).toEqual([
      "A db.default.svc.cluster.local 10.1.0.1",
      "A db.default.svc.cluster.local 10.1.0.2",
      "A db.default.svc.cluster.local 10.1.0.3",
    ])
  })

  it("answers the short forms of orchestrator services; the bare name only in the pod's namespace", () => {
    expect(data("reviews", "A")).toEqual(["A reviews 10.0.0.1"])
    expect(data("reviews.default", "A")).toEqual(["A reviews.default 10.0.0.1"])
    expect(data("reviews.default.svc", "A")).toEqual(["A reviews.default.svc 10.0.0.1"])
    expect(data("ratings.other", "A")).toEqual(["A ratings.other 10.0.0.2"])
    expect(data("ratings.other.svc", "A")).toEqual(["A ratings.other.svc 10.0.0.2"])
    expect(data("ratings", "A")).toBeUndefined()
  })

  it("answers names expanded with the first search domain by a CNAME to the name and its addresses", () => {
    expect(data("ratings.other.default.svc.cluster.local", "A")).toEqual([
      "CNAME ratings.other.default.svc.cluster.local ratings.other",
      "A ratings.other 10.0.0.2",
    ])
    expect(data("api.example.com.default.svc.cluster.local", "A")).toEqual([
      "CNAME api.example.com.default.svc.cluster.local api.example.com",
      "A api.example.com 192.0.2.10",
    ])
    // `reviews` + first search domain is the service's own name: an address, no CNAME
    expect(data("reviews.default.svc.cluster.local", "A")).toEqual(["A reviews.default.svc.cluster.local 10.0.0.1"])
    // only the first search domain is precomputed (resolvers try it first)
    expect(data("api.example.com.svc.cluster.local", "A")).toBeUndefined()
    // a CNAME never comes alone: without addresses of the asked family the answer is empty
    expect(data("api.example.com.default.svc.cluster.local", "AAAA")).toEqual([])
    expect(data("reviews.default.default.svc.cluster.local", "AAAA")).toEqual([])
  })

  it("does not expand a name that already ends in the first search domain: its double expansion goes upstream", () => {
    expect(data("reviews.default.svc.cluster.local.default.svc.cluster.local", "A")).toBeUndefined()
    expect(data("db.default.svc.cluster.local.default.svc.cluster.local", "AAAA")).toBeUndefined()
    // a name of another namespace does not end in it: expanded once
    expect(data("ratings.other.svc.cluster.local.default.svc.cluster.local", "A")).toEqual([
      "CNAME ratings.other.svc.cluster.local.default.svc.cluster.local ratings.other.svc.cluster.local",
      "A ratings.other.svc.cluster.local 10.0.0.2",
    ])
  })

  it("answers names below a wildcard with the most specific wildcard, under the asked name", () => {
    expect(data("foo.wild.example.com", "A")).toEqual(["A foo.wild.example.com 192.0.2.20"])
    expect(data("a.b.wild.example.com", "A")).toEqual(["A a.b.wild.example.com 192.0.2.20"])
    expect(data("other.example.com", "A")).toEqual(["A other.example.com 192.0.2.30"])
    // an exact host wins over the wildcard
    expect(data("api.example.com", "A")).toEqual(["A api.example.com 192.0.2.10"])
    // the wildcard's own domain is not below it
    expect(data("example.com", "A")).toBeUndefined()
    // below a wildcard's search expansion: a CNAME to the wildcard, the addresses under the wildcard
    expect(data("foo.wild.example.com.default.svc.cluster.local", "A")).toEqual([
      "CNAME foo.wild.example.com.default.svc.cluster.local *.wild.example.com",
      "A *.wild.example.com 192.0.2.20",
    ])
    expect(data("a.b.wild.example.com.default.svc.cluster.local", "A")).toEqual([
      "CNAME a.b.wild.example.com.default.svc.cluster.local *.wild.example.com",
      "A *.wild.example.com 192.0.2.20",
    ])
    expect(data("other.example.com.default.svc.cluster.local", "A")).toEqual([
      "CNAME other.example.com.default.svc.cluster.local *.example.com",
      "A *.example.com 192.0.2.30",
    ])
    // the wildcard's own name answers as an entry of the table
    expect(data("*.wild.example.com", "A")).toEqual(["A *.wild.example.com 192.0.2.20"])
  })

  it("answers alternative hosts of an orchestrator service (a multi-cluster name) with their search expansion", () => {
    const withAlt = buildLookupTable(
      {
        table: {
          "mcs.default.svc.cluster.local": {
            ips: ["10.5.0.1"],
            registry: ORCHESTRATOR_REGISTRY,
            shortname: "mcs",
            namespace: "default",
            alt_hosts: ["mcs.default.svc.clusterset.local"],
          },
        },
      },
      pod,
    )
    const names = (name: string) => lookup(withAlt, name, "A")?.map((r) => `${r.type} ${r.name} ${r.data}`)
    for (const name of ["mcs", "mcs.default", "mcs.default.svc", "mcs.default.svc.clusterset.local"])
      expect(names(`${name}.`)).toEqual([`A ${name} 10.5.0.1`])
    expect(names("mcs.default.svc.clusterset.local.default.svc.cluster.local")).toEqual([
      "CNAME mcs.default.svc.clusterset.local.default.svc.cluster.local mcs.default.svc.clusterset.local",
      "A mcs.default.svc.clusterset.local 10.5.0.1",
    ])
    // five names, three expansions (the FQDN ends in the search domain; `mcs` expanded is the FQDN)
    expect(withAlt.allHosts.size).toBe(8)
  })

  it("forwards names it does not know, and hosts without addresses", () => {
    expect(data("www.google.com", "A")).toBeUndefined()
    expect(data("productpage.default.svc.cluster.local", "A")).toBeUndefined()
    expect(data("noaddr.other.test", "A")).toBeUndefined()
  })

  it("gives no short forms to services outside the pod's cluster domain or of another registry", () => {
    const other = buildLookupTable(
      {
        table: {
          "svc1.ns1.svc.other.domain": {
            ips: ["10.9.0.1"],
            registry: ORCHESTRATOR_REGISTRY,
            shortname: "svc1",
            namespace: "ns1",
            alt_hosts: ["svc1.ns1", "svc1.ns1.svc"],
          },
          "se.ns1.svc.cluster.local": { ips: ["10.9.0.2"], registry: "External", shortname: "se", namespace: "ns1" },
        },
      },
      pod,
    )
    expect(lookup(other, "svc1.ns1.svc.other.domain", "A")).toHaveLength(1)
    expect(lookup(other, "svc1.ns1", "A")).toBeUndefined()
    expect(lookup(other, "se.ns1", "A")).toBeUndefined()
  })

  it("precomputes no expansions without search domains", () => {
    const bare = buildLookupTable(nameTable, { ...pod, searchDomains: [] })
    expect(lookup(bare, "reviews", "A")).toHaveLength(1)
    expect(lookup(bare, "reviews.default.svc.cluster.local.default.svc.cluster.local", "A")).toBeUndefined()
  })
})
