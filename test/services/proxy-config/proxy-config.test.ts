/**
 * The pure side of `meshctl proxy-config` on a sidecar dump built from the generators' test
 * resources: dump parsing, each table and its filters, and certificate details checked against
 * openssl's own reading.
 */
import { Either } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { bootstrapSummary } from "../../../src/services/proxy-config/bootstrap.js"
import { clusterTable, NO_CLUSTER_FILTER, parseSubsetKey } from "../../../src/services/proxy-config/clusters.js"
import {
  bootstrapOf,
  type ConfigDump,
  clustersOf,
  listenersOf,
  parseConfigDump,
  routeConfigsOf,
} from "../../../src/services/proxy-config/dump.js"
import {
  endpointsOfClusterStatuses,
  endpointsOfConfigDump,
  endpointTable,
  NO_ENDPOINT_FILTER,
} from "../../../src/services/proxy-config/endpoints.js"
import { listenerTable, NO_LISTENER_FILTER } from "../../../src/services/proxy-config/listeners.js"
import { describeRouteDomains, routeTable } from "../../../src/services/proxy-config/routes.js"
import { rootCaOf, secretsOf, secretTable } from "../../../src/services/proxy-config/secrets.js"
import { formatTable } from "../../../src/services/proxy-config/table.js"
import { buildDumpFixture, type DumpFixture, MYSQL, opensslSerialHex, REVIEWS } from "./dump-fixture.js"

let fixture: DumpFixture
let dump: ConfigDump

beforeAll(() => {
  fixture = buildDumpFixture()
  dump = Either.getOrThrow(parseConfigDump(JSON.stringify(fixture.dump)))
})

/** The cells of a table's lines (columns are separated by at least two spaces). */
const cells = (table: string) =>
  table
    .trimEnd()
    .split("\n")
    .map((line) => line.trimEnd().split(/ {2,}/))

describe("parseConfigDump", () => {
  it("rejects text that is not a config dump, saying why", () => {
    expect(Either.getLeft(parseConfigDump("{nope"))._tag).toBe("Some")
    expect(Either.getLeft(parseConfigDump('{"items": []}')).pipe((o) => o._tag === "Some" && o.value)).toContain(
      '"configs"',
    )
    expect(
      Either.getLeft(parseConfigDump('{"configs": [{"@type": "type.googleapis.com/Foo"}]}')).pipe(
        (o) => o._tag === "Some" && o.value,
      ),
    ).toContain("ConfigDump")
  })

  it("reads static and dynamic resources of every section", () => {
    expect(clustersOf(dump).map((c) => c.name)).toContain("agent")
    expect(clustersOf(dump)).toHaveLength(7)
    expect(listenersOf(dump).map((l) => l.name)).toEqual([
      "0.0.0.0_9080",
      "10.0.0.9_3306",
      "virtualOutbound",
      "virtualInbound",
    ])
    expect(routeConfigsOf(dump).map((r) => r.name)).toEqual(["9080"])
    expect(bootstrapOf(dump)?.node).toBeDefined()
  })
})

describe("formatTable", () => {
  it("pads every column but the last to its widest cell plus five spaces", () => {
    expect(
      formatTable([
        ["A", "BB", "C"],
        ["ccc", "d", "last"],
      ]),
    ).toBe("A       BB     C\nccc     d      last\n")
  })
})

describe("clusters", () => {
  it("parses subset keys and leaves other names alone", () => {
    expect(parseSubsetKey("outbound|80|v1|reviews.default.svc.cluster.local")).toEqual({
      direction: "outbound",
      port: 80,
      subset: "v1",
      fqdn: "reviews.default.svc.cluster.local",
    })
    expect(parseSubsetKey("PassthroughCluster")).toBeUndefined()
  })

  it("prints the reference's columns sorted by FQDN, subset, port, direction", () => {
    const rows = cells(clusterTable(clustersOf(dump), NO_CLUSTER_FILTER))
    expect(rows[0]).toEqual(["SERVICE FQDN", "PORT", "SUBSET", "DIRECTION", "TYPE", "DESTINATION RULE"])
    expect(rows.slice(1).map((r) => r.join("|"))).toEqual([
      "|8080|-|inbound|ORIGINAL_DST",
      "PassthroughCluster|-|-|-|ORIGINAL_DST",
      "agent|-|-|-|STATIC",
      `mysql.default.svc.cluster.local|3306|-|outbound|EDS`,
      `${REVIEWS}|9080|-|outbound|EDS`,
      `${REVIEWS}|9080|v1|outbound|EDS|reviews.default`,
      `${REVIEWS}|9080|v3|outbound|EDS|reviews.default`,
    ])
  })

  it("filters by FQDN, port, subset and direction", () => {
    const names = (filter: Partial<typeof NO_CLUSTER_FILTER>) =>
      cells(clusterTable(clustersOf(dump), { ...NO_CLUSTER_FILTER, ...filter }))
        .slice(1)
        .map((r) => `${r[0]}/${r[2]}`)
    expect(names({ fqdn: "mysql" })).toEqual(["mysql.default.svc.cluster.local/-"])
    expect(names({ port: 9080, subset: "v3" })).toEqual([`${REVIEWS}/v3`])
    expect(names({ direction: "inbound" })).toEqual(["/-"])
    expect(names({ port: 15000 })).toEqual([])
  })
})

describe("listeners", () => {
  it("describes each filter chain's match and destination, by port then address", () => {
    const rows = cells(listenerTable(listenersOf(dump), NO_LISTENER_FILTER, true))
    expect(rows[0]).toEqual(["ADDRESSES", "PORT", "MATCH", "DESTINATION"])
    expect(rows.slice(1).map((r) => r.join("|"))).toEqual([
      `10.0.0.9|3306|ALL|Cluster: ${MYSQL}`,
      "0.0.0.0|9080|ALL|Route: 9080",
      "0.0.0.0|15001|ALL|PassthroughCluster",
      "0.0.0.0|15006|Trans: tls; App: istio-http/1.0,istio-http/1.1,istio-h2; Addr: *:8080|inbound|8080||",
      "0.0.0.0|15006|Trans: raw_buffer; App: HTTP; Addr: *:8080|inbound|8080||",
      "0.0.0.0|15006|Trans: raw_buffer|InboundPassthroughCluster",
    ])
  })

  it("filters by port, type and address; --verbose=false shows one row per listener with its type", () => {
    const short = (filter: Partial<typeof NO_LISTENER_FILTER>) =>
      cells(listenerTable(listenersOf(dump), { ...NO_LISTENER_FILTER, ...filter }, false)).slice(1)
    expect(short({})).toHaveLength(4)
    expect(short({ type: "tcp" }).map((r) => r[1])).toEqual(["3306"])
    expect(short({ type: "HTTP" }).map((r) => r[1])).toEqual(["9080", "15006"])
    expect(short({ address: "10.0.0.9" }).map((r) => r[2])).toEqual(["TCP"])
    expect(short({ port: 15001 }).map((r) => r.join("|"))).toEqual(["0.0.0.0|15001|UNKNOWN"])
  })
})

describe("routes", () => {
  it("shortens domains to the two first portless names without expansions", () => {
    expect(describeRouteDomains(["a.b"])).toBe("a.b")
    expect(
      describeRouteDomains([REVIEWS, `${REVIEWS}:9080`, "reviews", "reviews:9080", "10.0.0.3", "10.0.0.3:9080"]),
    ).toBe(`${REVIEWS}, reviews + 1 more...`)
    expect(describeRouteDomains(["a.svc.cluster.local", "a.svc", "a", "b:80", "c"])).toBe("a, c")
  })

  it("prints a row per route (passthrough routes skipped) and filters by name", () => {
    const rows = cells(routeTable(routeConfigsOf(dump), "", true))
    expect(rows[0]).toEqual(["NAME", "VHOST NAME", "DOMAINS", "MATCH", "VIRTUAL SERVICE"])
    expect(rows.slice(1).map((r) => `${r[1]}|${r[3]}`)).toEqual([
      `${REVIEWS}:9080|/*`,
      `${REVIEWS}:9080|/*`,
      "old.example.com:9080|/moved",
    ])
    expect(cells(routeTable(routeConfigsOf(dump), "9080", false))).toEqual([
      ["NAME", "VIRTUAL HOSTS"],
      ["9080", "3"],
    ])
    expect(cells(routeTable(routeConfigsOf(dump), "80", true))).toHaveLength(1)
  })
})

describe("endpoints", () => {
  it("reads a config dump's EDS section and filters by address, port, cluster and status", () => {
    const rows = endpointsOfConfigDump(dump)
    const table = (filter: Partial<typeof NO_ENDPOINT_FILTER>) =>
      cells(endpointTable(rows, { ...NO_ENDPOINT_FILTER, ...filter })).slice(1)
    expect(table({}).map((r) => r.join("|"))).toEqual([
      `10.1.0.11:9080|HEALTHY|OK|outbound|9080|v1|${REVIEWS}`,
      `10.1.0.13:9080|HEALTHY|OK|outbound|9080|v3|${REVIEWS}`,
      `10.1.0.20:3306|HEALTHY|OK|${MYSQL}`,
    ])
    expect(table({ port: 3306 }).map((r) => r[0])).toEqual(["10.1.0.20:3306"])
    expect(table({ address: "10.1.0.13" }).map((r) => r[0])).toEqual(["10.1.0.13:9080"])
    expect(table({ cluster: MYSQL }).map((r) => r[0])).toEqual(["10.1.0.20:3306"])
    expect(table({ status: "unhealthy" })).toEqual([])
  })

  it("reads the admin /clusters JSON with outlier results", () => {
    const rows = endpointsOfClusterStatuses({
      cluster_statuses: [
        {
          name: MYSQL,
          host_statuses: [
            {
              address: { socket_address: { address: "10.1.0.21", port_value: 3306 } },
              health_status: { eds_health_status: "UNHEALTHY", failed_outlier_check: true },
            },
          ],
        },
      ],
    })
    expect(cells(endpointTable(rows, NO_ENDPOINT_FILTER))[1]).toEqual(["10.1.0.21:3306", "UNHEALTHY", "FAILED", MYSQL])
  })
})

describe("secrets", () => {
  it("shows each certificate's serial (as openssl reads it), validity and window", () => {
    const rows = secretsOf(dump)
    expect(rows.map((r) => [r.name, r.type, r.state, r.valid])).toEqual([
      ["default", "Cert Chain", "ACTIVE", true],
      ["ROOTCA", "CA", "ACTIVE", true],
    ])
    expect(BigInt(rows[0]!.serialNumber)).toBe(BigInt(`0x${opensslSerialHex(fixture.dir, fixture.certPem)}`))
    expect(BigInt(rows[1]!.serialNumber)).toBe(BigInt(`0x${opensslSerialHex(fixture.dir, fixture.caPem)}`))
    expect(rows[0]!.notAfter).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(Date.parse(rows[0]!.notAfter) - Date.parse(rows[0]!.notBefore)).toBe(24 * 3600 * 1000)
    const header = cells(secretTable(rows))[0]
    expect(header).toEqual([
      "RESOURCE NAME",
      "TYPE",
      "STATUS",
      "VALID CERT",
      "SERIAL NUMBER",
      "NOT AFTER",
      "NOT BEFORE",
    ])
  })

  it("marks certificates outside their window invalid", () => {
    const later = new Date(Date.now() + 3 * 24 * 3600 * 1000)
    expect(secretsOf(dump, later).map((r) => r.valid)).toEqual([false, false])
  })

  it("finds the trusted root", () => {
    expect(rootCaOf(dump)).toBe(fixture.caPem.trim())
  })
})

describe("bootstrap", () => {
  it("summarises the node", () => {
    const rows = cells(bootstrapSummary(bootstrapOf(dump)!))
    expect(rows[1]).toEqual([
      "sidecar~10.1.0.7~sleep-5d8f.default~default.svc.cluster.local",
      "sleep.default",
      "-",
      "1.24.0",
      "default",
    ])
  })
})

describe("a proxyless gRPC client's dump (mesh-discovery /debug/config_dump)", () => {
  it("lists its API listeners by the host:port they serve", () => {
    const grpcDump = Either.getOrThrow(
      parseConfigDump(
        JSON.stringify({
          configs: [
            {
              "@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
              dynamic_listeners: [
                {
                  name: `${REVIEWS}:9080`,
                  active_state: {
                    listener: {
                      name: `${REVIEWS}:9080`,
                      api_listener: { api_listener: { "@type": "type.googleapis.com/x.HttpConnectionManager" } },
                    },
                  },
                },
              ],
            },
          ],
        }),
      ),
    )
    expect(cells(listenerTable(listenersOf(grpcDump), NO_LISTENER_FILTER, false))[1]).toEqual([
      REVIEWS,
      "9080",
      "UNKNOWN",
    ])
    expect(cells(listenerTable(listenersOf(grpcDump), { ...NO_LISTENER_FILTER, port: 9080 }, true))).toHaveLength(1)
  })
})
