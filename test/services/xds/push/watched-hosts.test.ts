import { describe, expect, it } from "vitest"
import { makePushContext } from "../../../../src/services/xds/model/push-context.js"
import { makePushRequest } from "../../../../src/services/xds/push/push-request.js"
import { endpointHosts, makeWatchedHosts } from "../../../../src/services/xds/push/watched-hosts.js"
import { input, service } from "../../../fixtures/xds/mesh.js"

describe("watched hosts", () => {
  it("maps cluster names to their hosts once per names object", () => {
    const { clusterHostsOf } = makeWatchedHosts()
    const names = ["outbound|80|v1|echo.demo.svc.cluster.local", "outbound|9080||reviews.demo.svc.cluster.local"]
    const hosts = clusterHostsOf(names)
    expect([...(hosts ?? [])].sort()).toEqual(["echo.demo.svc.cluster.local", "reviews.demo.svc.cluster.local"])
    expect(clusterHostsOf(names)).toBe(hosts)
  })

  it("gives up on names that are not cluster names", () => {
    const { clusterHostsOf } = makeWatchedHosts()
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

  it("maps listener names to service hosts once per names object while the services stay the same", () => {
    const { namedHostsOf } = makeWatchedHosts()
    const echo = "echo.demo.svc.cluster.local"
    const services = [service(echo, [80], "demo")]
    const push = makePushContext(input({ services }))
    const names = [`${echo}:80`, "echo.demo:80", "other.demo.svc.cluster.local:80"]
    const hosts = namedHostsOf(push, names)
    expect([...(hosts ?? [])].sort()).toEqual([echo, "other.demo.svc.cluster.local"])
    // a later PushContext over the same services array reuses it
    expect(namedHostsOf(makePushContext(input({ services })), names)).toBe(hosts)
    // other services: the short name may now mean another host
    const other = "echo.demo"
    const renamed = makePushContext(input({ services: [service(other, [80], "demo")] }))
    expect([...(namedHostsOf(renamed, names) ?? [])].sort()).toEqual(
      [echo, other, "other.demo.svc.cluster.local"].sort(),
    )
    // a name that is no resource name at all: any change may concern the watch
    expect(namedHostsOf(push, ["not a name"])).toBe(null)
  })

  it("keeps its memos per instance: two servers share none", () => {
    const [a, b] = [makeWatchedHosts(), makeWatchedHosts()]
    const names = ["outbound|80|v1|echo.demo.svc.cluster.local"]
    expect(a.clusterHostsOf(names)).toBe(a.clusterHostsOf(names))
    expect(b.clusterHostsOf(names)).not.toBe(a.clusterHostsOf(names))
    expect(b.clusterHostsOf(names)).toEqual(a.clusterHostsOf(names))
    const push = makePushContext(input({ services: [service("echo.demo.svc.cluster.local", [80], "demo")] }))
    const listeners = ["echo.demo.svc.cluster.local:80"]
    expect(b.namedHostsOf(push, listeners)).not.toBe(a.namedHostsOf(push, listeners))
  })
})
