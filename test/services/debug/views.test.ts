import { describe, expect, it } from "vitest"
import { adsz, isLoopback, shortType, syncz } from "../../../src/services/debug/views.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import type { ConnectionStatus } from "../../../src/services/xds/server.js"

const connection: ConnectionStatus = {
  id: "c1",
  peer: "ipv4:127.0.0.1:5000",
  nodeId: "sidecar~127.0.0.1~a.ns~ns.svc.cluster.local",
  generator: "grpc",
  delta: false,
  connectedAt: 0,
  watches: [
    { typeUrl: TypeUrl.Cluster, wildcard: true, names: [], nonceSent: "n2", nonceAcked: "n1", versionSent: "v2" },
    {
      typeUrl: TypeUrl.Route,
      wildcard: false,
      names: ["a:80"],
      nonceSent: "n3",
      nonceAcked: "n3",
      versionSent: "v3",
      versionAcked: "v3",
      lastError: "bad route",
      warnings: ["requested route a:80 not found: no service has host a"],
    },
  ],
}

describe("debug views", () => {
  it("syncz: one row per proxy and type, empty strings for what was never sent or acked", () => {
    expect(syncz([connection])).toEqual([
      {
        proxy: connection.nodeId,
        connectionId: "c1",
        generator: "grpc",
        delta: false,
        type: "cds",
        typeUrl: TypeUrl.Cluster,
        clusterId: "",
        proxyVersion: "",
        nonceSent: "n2",
        nonceAcked: "n1",
        versionSent: "v2",
        versionAcked: "",
        lastError: "",
        warnings: [],
      },
      {
        proxy: connection.nodeId,
        connectionId: "c1",
        generator: "grpc",
        delta: false,
        type: "rds",
        typeUrl: TypeUrl.Route,
        clusterId: "",
        proxyVersion: "",
        nonceSent: "n3",
        nonceAcked: "n3",
        versionSent: "v3",
        versionAcked: "v3",
        lastError: "bad route",
        warnings: ["requested route a:80 not found: no service has host a"],
      },
    ])
  })

  it("adsz: client count and ISO connection times", () => {
    const view = adsz([connection])
    expect(view.totalClients).toBe(1)
    expect(view.clients[0]!.connectedAt).toBe("1970-01-01T00:00:00.000Z")
  })

  it("short type names", () => {
    expect([TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route].map(shortType)).toEqual([
      "cds",
      "eds",
      "lds",
      "rds",
    ])
  })

  it("loopback callers", () => {
    expect(isLoopback("127.0.0.1")).toBe(true)
    expect(isLoopback("127.1.2.3")).toBe(true)
    expect(isLoopback("::1")).toBe(true)
    expect(isLoopback("::ffff:127.0.0.1")).toBe(true)
    expect(isLoopback("192.0.2.2")).toBe(false)
    expect(isLoopback("::ffff:10.0.0.1")).toBe(false)
    expect(isLoopback(undefined)).toBe(false)
  })
})
