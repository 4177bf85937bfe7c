import { describe, expect, it } from "vitest"
import { makePushRequest } from "../../../src/services/xds/push-request.js"
import { clusterHostsOf, endpointHosts } from "../../../src/services/xds/watched-hosts.js"

describe("watched hosts", () => {
  it("maps cluster names to their hosts once per names object", () => {
    const names = ["outbound|80|v1|echo.demo.svc.cluster.local", "outbound|9080||reviews.demo.svc.cluster.local"]
    const hosts = clusterHostsOf(names)
    expect([...(hosts ?? [])].sort()).toEqual(["echo.demo.svc.cluster.local", "reviews.demo.svc.cluster.local"])
    expect(clusterHostsOf(names)).toBe(hosts)
  })

  it("gives up on names that are not cluster names", () => {
    expect(clusterHostsOf(["outbound|80|v1|echo.demo.svc.cluster.local", "echo.demo.svc.cluster.local:80"])).toBe(
      undefined,
    )
    expect(clusterHostsOf(["inbound|80||x"])).toBe(undefined)
  })

  it("reads an endpoints-only request's hosts from its keys, and nothing else", () => {
    const request = (kinds: ReadonlyArray<string>) =>
      makePushRequest({
        full: false,
        configsUpdated: kinds.map((kind, i) => ({ kind, namespace: "demo", name: `h${i}.demo.svc.cluster.local` })),
        reason: "endpoint",
        start: 0,
      })
    expect([...(endpointHosts(request(["ServiceEntry", "ServiceEntry"])) ?? [])].sort()).toEqual([
      "h0.demo.svc.cluster.local",
      "h1.demo.svc.cluster.local",
    ])
    expect(endpointHosts(request(["ServiceEntry", "VirtualService"]))).toBe(undefined)
    expect(endpointHosts(request([]))).toBe(undefined)
  })
})
