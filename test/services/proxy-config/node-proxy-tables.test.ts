/** node-proxy-config's tables over a node proxy dump in the reference's shape (services/proxy-config/node-proxy-*.ts). */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseNodeProxyDump } from "../../../src/services/proxy-config/node-proxy-dump.js"
import {
  certificateTable,
  connectionsTable,
  filteredWorkloadStates,
  fullSummary,
  serviceTable,
  workloadTable,
} from "../../../src/services/proxy-config/node-proxy-tables.js"
import { NODE_A, nodeProxyDump } from "./node-proxy-dump-fixture.js"

const now = new Date("2026-06-01T12:00:00Z")
const dump = () => Either.getOrThrow(parseNodeProxyDump(JSON.stringify(nodeProxyDump(now))))
const all = { namespace: "", direction: "", raw: false, workload: "" }

describe("parseNodeProxyDump", () => {
  it("reads lists and maps alike, and workloadState under any case", () => {
    const d = dump()
    expect(d.workloads).toHaveLength(4)
    expect(d.services).toHaveLength(2)
    const lower = { ...nodeProxyDump(now), workloadstate: nodeProxyDump(now).workloadState, workloadState: undefined }
    expect(Either.getOrThrow(parseNodeProxyDump(JSON.stringify(lower))).workloadState).toHaveLength(2)
  })
  it("says why a text is not a node proxy dump", () => {
    expect(Either.getLeft(parseNodeProxyDump("{"))).toEqual(
      expect.objectContaining({ value: expect.stringContaining("not JSON") }),
    )
    expect(parseNodeProxyDump(JSON.stringify({ kind: "Pod" }))).toEqual(
      Either.left(expect.stringContaining("not a node proxy config dump")),
    )
    expect(parseNodeProxyDump(JSON.stringify({ configs: [], workloads: [] }))).toEqual(
      Either.left(expect.stringContaining("use proxy-config")),
    )
  })
})

describe("tables", () => {
  it("workloads: sorted, waypoint by service name or VIP, filtered by node", () => {
    expect(workloadTable(dump(), {})).toBe(
      [
        "NAMESPACE POD NAME      ADDRESS   NODE   WAYPOINT PROTOCOL",
        "demo      sleep-5b6c    10.1.0.20 node-a None     HBONE",
        "demo      waypoint-6f7d 10.1.0.30 node-b None     TCP",
        "demo      web-7d9f      10.1.0.11 node-a waypoint HBONE",
        "demo      web-8c2a      10.1.0.12 node-b None     HBONE",
        "",
      ].join("\n"),
    )
    expect(workloadTable(dump(), { node: NODE_A }).trimEnd().split("\n").slice(1)).toEqual([
      expect.stringMatching(/^demo +sleep-5b6c /),
      expect.stringMatching(/^demo +web-7d9f /),
    ])
  })
  it("services: VIP without its network, healthy endpoints over all, waypoint by VIP", () => {
    expect(serviceTable(dump()).split("\n").slice(1, 3)).toEqual([
      "demo      waypoint     10.96.0.30  None     1/1",
      "demo      web          10.96.0.10  waypoint 1/2",
    ])
  })
  it("certificates: leaf and root rows with hex serials and validity at now; a pending identity as NA", () => {
    expect(certificateTable(dump(), now).split("\n").slice(1, 4)).toEqual([
      "spiffe://cluster.local/ns/demo/sa/web       Leaf     Available        true           ff                2026-06-02T11:00:00Z     2026-06-01T11:00:00Z",
      "spiffe://cluster.local/ns/demo/sa/web       Root     Available        false          1000              2026-06-01T11:00:00Z     2026-06-01T10:00:00Z",
      "spiffe://cluster.local/ns/demo/sa/sleep     NA       Initializing     false          NA                NA                       NA",
    ])
  })
  it("connections: service VIPs and workload IPs named, --raw, direction and workload filters", () => {
    expect(connectionsTable(dump(), all).split("\n").slice(0, 3)).toEqual([
      "WORKLOAD        DIRECTION LOCAL                 REMOTE                   REMOTE TARGET                 PROTOCOL",
      "sleep-5b6c.demo Outbound  sleep-5b6c.demo:41000 waypoint-6f7d.demo:15008 web.demo.svc.cluster.local:80 HBONE",
      "web-7d9f.demo   Inbound   web-7d9f.demo:8080    sleep-5b6c.demo:41000    web.demo.svc.cluster.local    HBONE",
    ])
    expect(connectionsTable(dump(), { ...all, raw: true })).toContain("10.1.0.30:15008")
    expect(connectionsTable(dump(), { ...all, direction: "inbound" })).not.toContain("Outbound")
    expect(connectionsTable(dump(), { ...all, direction: "outbound" })).not.toContain("Inbound ")
    expect(filteredWorkloadStates(dump(), { ...all, workload: "WEB-7d9f" })).toHaveLength(1)
    expect(filteredWorkloadStates(dump(), { ...all, namespace: "other" })).toHaveLength(0)
  })
  it("all: every table after an empty line", () => {
    const text = fullSummary(dump(), {}, now)
    for (const header of ["NAMESPACE SERVICE NAME", "NAMESPACE POLICY NAME", "CERTIFICATE NAME", "WORKLOAD "])
      expect(text).toContain(`\n\n${header}`)
    expect(text.startsWith("\nNAMESPACE POD NAME")).toBe(true)
    expect(text).toMatch(/^demo +allow-sleep +Allow +Namespace$/m)
  })
})
