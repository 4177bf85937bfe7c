/** Sidecar mode's pure parts: the proxy's arguments, bootstrap and active-connection parsing. */
import { describe, expect, it } from "@effect/vitest"
import { activeConnections, proxyArgs, proxyBootstrap } from "../../../../src/services/agent/proxy/proxy.js"

describe("proxy command line and bootstrap", () => {
  it("passes drain time, log levels and concurrency like the reference", () => {
    expect(
      proxyArgs({
        configFile: "/c.json",
        drainSeconds: 45,
        logLevel: "info,upstream:debug",
        componentLogLevel: "misc:error",
        concurrency: 0,
      }),
    ).toEqual([
      "-c",
      "/c.json",
      "--drain-time-s",
      "45",
      "--drain-strategy",
      "immediate",
      "--local-address-ip-version",
      "v4",
      "--file-flush-interval-msec",
      "1000",
      "--disable-hot-restart",
      "--allow-unknown-static-fields",
      "-l",
      "info",
      "--component-log-level",
      "misc:error,upstream:debug",
    ])
  })

  it("bootstraps ADS through the agent's xDS socket and SDS through the identity socket", () => {
    const b = proxyBootstrap({
      node: { id: "sidecar~1.2.3.4~a.ns~ns.svc.cluster.local", metadata: { NAMESPACE: "ns" } },
      serviceCluster: "mesh-proxy",
      adminPort: 15000,
      xdsSocket: "/x/XDS",
      sdsSocket: "/x/socket",
    })
    expect(b.node).toEqual({
      id: "sidecar~1.2.3.4~a.ns~ns.svc.cluster.local",
      cluster: "mesh-proxy",
      metadata: { NAMESPACE: "ns" },
    })
    expect(
      b.static_resources.clusters.map((c) => [
        c.name,
        c.load_assignment.endpoints[0]!.lb_endpoints[0]!.endpoint.address.pipe.path,
      ]),
    ).toEqual([
      ["xds-grpc", "/x/XDS"],
      ["sds-grpc", "/x/socket"],
    ])
  })

  it("sums listener downstream_cx_active from the admin stats", () => {
    expect(
      activeConnections(
        "listener.0.0.0.0_15006.downstream_cx_active: 2\nlistener.0.0.0.0_15001.downstream_cx_active: 3\ncluster.x.upstream_cx_active: 9\n",
      ),
    ).toBe(5)
  })
})
