import { describe, expect, it } from "vitest"
import { nodeName, nodeProblem } from "../../../../src/services/xds/protocol/node-id.js"
import { nackCodeLabel, nackMessage, quoted, typeLabel } from "../../../../src/services/xds/protocol/request-limits.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

describe("node ids (as the reference parses type~ip~id~domain)", () => {
  it("accepts proxy node ids, with INSTANCE_IPS standing in for the address", () => {
    expect(nodeProblem({ id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local" }, {})).toBeUndefined()
    expect(nodeProblem({ id: "router~::1~gw.ns~ns.svc" }, {})).toBeUndefined()
    expect(nodeProblem({ id: "sidecar~-~a.ns~ns.svc" }, { INSTANCE_IPS: "10.0.0.1" })).toBeUndefined()
    expect(nodeName("sidecar~10.0.0.1~a.ns~ns.svc")).toBe("a.ns")
  })

  it("refuses missing, empty, malformed and oversized ids, quoting them cut short", () => {
    expect(nodeProblem(undefined, {})).toBe("missing node information")
    expect(nodeProblem({ id: "" }, {})).toBe("missing node information")
    expect(nodeProblem({ id: "a~b" }, {})).toContain("missing parts")
    expect(nodeProblem({ id: "client~10.0.0.1~a.ns~ns" }, {})).toContain("invalid node type")
    expect(nodeProblem({ id: "sidecar~10.0.0~a.ns~ns" }, {})).toContain('invalid IP address "10.0.0"')
    expect(nodeProblem({ id: "x".repeat(5000) }, {})).toContain("5000 characters")
    expect(nodeProblem({ id: `~${"y".repeat(900)}` }, {})!.length).toBeLessThan(250)
  })
})

describe("caller-chosen strings", () => {
  it("only known type URLs and status codes become labels", () => {
    expect(typeLabel(TypeUrl.Cluster)).toBe("cds")
    expect(typeLabel(`type.googleapis.com/${"t".repeat(1000)}`)).toBe("unknown")
    expect(nackCodeLabel(3)).toBe("InvalidArgument")
    expect(nackCodeLabel(undefined)).toBe("Unknown")
    expect(nackCodeLabel(123456)).toBe("Unknown")
  })

  it("NACK text and logged strings are cut short", () => {
    const message = nackMessage({ error_detail: { message: "e".repeat(100_000) } })
    expect(message.length).toBeLessThan(1100)
    expect(message).toContain("(100000 chars)")
    expect(quoted("a\nb")).toBe('"a\\nb"')
    expect(quoted("q".repeat(10_000)).length).toBeLessThan(150)
  })
})
