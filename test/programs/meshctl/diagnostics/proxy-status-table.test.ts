import { describe, expect, it } from "vitest"
import {
  displayName,
  matchesProxy,
  proxyStatuses,
  proxyStatusTable,
  type SyncRow,
  xdsState,
} from "../../../../src/programs/meshctl/diagnostics/proxy-status-table.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const row = (proxy: string, connectionId: string, typeUrl: string, sent: string, acked: string): SyncRow => ({
  proxy,
  connectionId,
  typeUrl,
  clusterId: "c1",
  proxyVersion: "1.0",
  nonceSent: sent,
  nonceAcked: acked,
})

describe("proxy-status table", () => {
  it("judges a type by its nonces as the reference does", () => {
    expect(xdsState("", "")).toBe("NOT SENT")
    expect(xdsState("n1", "n1")).toBe("SYNCED")
    expect(xdsState("n2", "n1")).toBe("STALE")
    expect(xdsState("n1", "")).toBe("STALE (Never Acknowledged)")
  })

  it("names a proxy by pod.namespace of its node id, else by the id", () => {
    expect(displayName("sidecar~10.0.0.1~a-1.ns~ns.svc.cluster.local")).toBe("a-1.ns")
    expect(displayName("grpc-client-7")).toBe("grpc-client-7")
  })

  it("groups rows per connection, sorts by name and fills unwatched types with NOT SENT", () => {
    const b = "sidecar~10.0.0.2~b.ns~ns.svc.cluster.local"
    const a = "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"
    const statuses = proxyStatuses([
      {
        meshd: "meshd-1",
        rows: [
          row(b, "2", TypeUrl.Cluster, "x", "x"),
          row(a, "1", TypeUrl.Cluster, "y", "z"),
          row(a, "1", TypeUrl.Listener, "w", "w"),
        ],
      },
    ])
    expect(statuses.map((s) => s.name)).toEqual(["a.ns", "b.ns"])
    expect(statuses[0]!.xds).toEqual({ CDS: "STALE", LDS: "SYNCED" })
    const table = proxyStatusTable(statuses, 0).split("\n")
    expect(table[1]!.split(/\s{3,}/)).toEqual([
      "a.ns",
      "c1",
      "STALE",
      "SYNCED",
      "NOT SENT",
      "NOT SENT",
      "NOT SENT",
      "meshd-1",
      "1.0",
    ])
    expect(matchesProxy(statuses[1]!, "pod/b", "ns")).toBe(true)
    expect(matchesProxy(statuses[1]!, "b", "default")).toBe(false)
    expect(matchesProxy(statuses[1]!, "b.ns", "")).toBe(true)
  })
})
