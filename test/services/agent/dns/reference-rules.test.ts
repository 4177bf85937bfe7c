/**
 * The reference agent's DNS answers, case by case, on a table shaped like the one its own tests
 * use (names ours): exact hosts, search expansion (once, never onto a name that already ends in
 * the first search domain), the short and alternative names of orchestrator services (only in
 * the pod's cluster domain, the bare name only in its namespace), wildcards below a host and
 * below a search expansion (CNAME to the wildcard), A versus AAAA. `forward` means the name is
 * not the mesh's and the query goes upstream as it is.
 */
import { describe, expect, it } from "vitest"
import { buildLookupTable, lookup, type PodDns } from "../../../../src/services/agent/dns/lookup-table.js"
import { ORCHESTRATOR_REGISTRY } from "../../../../src/services/registry/orchestrator/service.js"
import type { NameTable } from "../../../../src/services/xds/proxygen/nds/name-table.js"

const pod: PodDns = {
  namespace: "shop",
  domain: "shop.svc.cluster.local",
  searchDomains: ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local"],
}

const orch = (shortname: string, namespace: string, ips: Array<string>, alt_hosts?: Array<string>) => ({
  ips,
  registry: ORCHESTRATOR_REGISTRY,
  shortname,
  namespace,
  ...(alt_hosts ? { alt_hosts } : {}),
})
const external = (ips: Array<string>) => ({ ips, registry: "External" })
const V6 = "2001:db8::ff00:42:8329"

const nameTable: NameTable = {
  table: {
    "www.search.test": external(["1.1.1.1"]),
    "front.shop.svc.cluster.local": orch("front", "shop", ["9.9.9.9"]),
    "example.blue.svc.cluster.local": orch("example", "blue", ["10.10.10.10"]),
    "details.blue.svc.cluster.remote": orch("details", "blue", ["11.11.11.11", "12.12.12.12"]),
    "alt.shop.svc.cluster.local": orch("alt", "shop", ["15.15.15.15"], ["alt.shop.svc.clusterset.local"]),
    "ipv6.localhost": external([V6]),
    "dual.localhost": external(["2.2.2.2", V6]),
    "ipv4.localhost": external(["2.2.2.2"]),
    "*.b.wildcard": external(["11.11.11.11"]),
    "*.wildcard": external(["10.10.10.10"]),
    "*.svc.mesh.company.net": external(["10.1.2.3"]),
    "example.localhost.": external(["3.3.3.3"]),
  },
}

const table = buildLookupTable(nameTable, pod)
const A = (name: string, ip: string) => `${name} A ${ip}`
const AAAA = (name: string, ip: string) => `${name} AAAA ${ip}`
const CNAME = (name: string, target: string) => `${name} CNAME ${target}`

/** [question, type, answer records or "forward"] */
const cases: ReadonlyArray<readonly [string, "A" | "AAAA", ReadonlyArray<string> | "forward"]> = [
  ["www.search.test.", "A", [A("www.search.test", "1.1.1.1")]],
  [
    "www.search.test.shop.svc.cluster.local.",
    "A",
    [CNAME("www.search.test.shop.svc.cluster.local", "www.search.test"), A("www.search.test", "1.1.1.1")],
  ],
  ["www.elsewhere.test.", "A", "forward"],
  ["front.shop.svc.cluster.local.", "A", [A("front.shop.svc.cluster.local", "9.9.9.9")]],
  // the FQDN already ends in the first search domain: not expanded again, so not the mesh's
  ["front.shop.svc.cluster.local.shop.svc.cluster.local.", "A", "forward"],
  ["front.shop.", "A", [A("front.shop", "9.9.9.9")]],
  ["front.", "A", [A("front", "9.9.9.9")]],
  [
    "front.shop.shop.svc.cluster.local.",
    "A",
    [CNAME("front.shop.shop.svc.cluster.local", "front.shop"), A("front.shop", "9.9.9.9")],
  ],
  ["front.shop.shop.svc.cluster.local.", "AAAA", []],
  ["example.blue.", "A", [A("example.blue", "10.10.10.10")]],
  ["example.blue.svc.cluster.local.", "A", [A("example.blue.svc.cluster.local", "10.10.10.10")]],
  ["example.blue.svc.", "A", [A("example.blue.svc", "10.10.10.10")]],
  // the bare name only in the pod's own namespace
  ["example.", "A", "forward"],
  ["alt.", "A", [A("alt", "15.15.15.15")]],
  ["alt.shop.", "A", [A("alt.shop", "15.15.15.15")]],
  ["alt.shop.svc.", "A", [A("alt.shop.svc", "15.15.15.15")]],
  ["alt.shop.svc.cluster.local.", "A", [A("alt.shop.svc.cluster.local", "15.15.15.15")]],
  ["alt.shop.svc.clusterset.local.", "A", [A("alt.shop.svc.clusterset.local", "15.15.15.15")]],
  [
    "details.blue.svc.cluster.remote.",
    "A",
    [A("details.blue.svc.cluster.remote", "11.11.11.11"), A("details.blue.svc.cluster.remote", "12.12.12.12")],
  ],
  // another cluster domain: no short forms
  ["details.blue.", "A", "forward"],
  ["dual.localhost.", "A", [A("dual.localhost", "2.2.2.2")]],
  ["dual.localhost.", "AAAA", [AAAA("dual.localhost", V6)]],
  ["foo.wildcard.", "A", [A("foo.wildcard", "10.10.10.10")]],
  ["a.b.wildcard.", "A", [A("a.b.wildcard", "11.11.11.11")]],
  [
    "foo.wildcard.shop.svc.cluster.local.",
    "A",
    [CNAME("foo.wildcard.shop.svc.cluster.local", "*.wildcard"), A("*.wildcard", "10.10.10.10")],
  ],
  ["foo.svc.mesh.company.net.", "A", [A("foo.svc.mesh.company.net", "10.1.2.3")]],
  ["foo.foons.svc.mesh.company.net.", "A", [A("foo.foons.svc.mesh.company.net", "10.1.2.3")]],
  [
    "foo.svc.mesh.company.net.shop.svc.cluster.local.",
    "A",
    [
      CNAME("foo.svc.mesh.company.net.shop.svc.cluster.local", "*.svc.mesh.company.net"),
      A("*.svc.mesh.company.net", "10.1.2.3"),
    ],
  ],
  // known names without an address of the asked family: empty (NOERROR), not NXDOMAIN
  ["ipv6.localhost.", "A", []],
  ["ipv4.localhost.", "AAAA", []],
  // a host given with its root dot
  ["example.localhost.", "A", [A("example.localhost", "3.3.3.3")]],
]

describe("the reference agent's DNS answers", () => {
  it.each(cases)("%s %s", (name, type, expected) => {
    const records = lookup(table, name, type)
    if (expected === "forward") expect(records).toBeUndefined()
    else expect(records?.map((r) => `${r.name} ${r.type} ${r.data}`)).toEqual(expected)
  })

  it("knows the names the reference derives from the table, and no others", () => {
    const starting = (prefix: string) => [...table.allHosts].filter((n) => n.startsWith(prefix)).sort()
    expect(starting("front")).toEqual([
      "front",
      "front.shop",
      "front.shop.shop.svc.cluster.local",
      "front.shop.svc",
      "front.shop.svc.cluster.local",
      "front.shop.svc.shop.svc.cluster.local",
    ])
    expect(starting("example.blue")).toEqual([
      "example.blue",
      "example.blue.shop.svc.cluster.local",
      "example.blue.svc",
      "example.blue.svc.cluster.local",
      "example.blue.svc.cluster.local.shop.svc.cluster.local",
      "example.blue.svc.shop.svc.cluster.local",
    ])
    expect(starting("details")).toEqual([
      "details.blue.svc.cluster.remote",
      "details.blue.svc.cluster.remote.shop.svc.cluster.local",
    ])
    expect(starting("*.wildcard")).toEqual(["*.wildcard", "*.wildcard.shop.svc.cluster.local"])
    // other types than A and AAAA are forwarded, whatever the name
    expect(lookup(table, "front.shop.svc.cluster.local", "TXT")).toBeUndefined()
  })
})
