/**
 * A service without an address (a DNS ServiceEntry with no `addresses`), seen by a REGISTRY_ONLY
 * sidecar (issue 44 point 5): its HTTP and auto ports share the port's wildcard listener, so a
 * request for a host the registry does not know is answered by the `block_all` virtual host; its
 * TCP port captures every connection to the port; TLS for an unknown name is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { outboundHttp, outboundTcp } from "../../../../support/proxygen/evaluator.js"
import { meshInput, meshPush, proxyConfig, sleepProxy, svc } from "./mesh.js"

const EXTERNAL = "external.example.com"
const ports = [
  ["http", 80, "HTTP"],
  ["auto", 81, "UNSUPPORTED"],
  ["tcp", 82, "TCP"],
  ["tls", 83, "TLS"],
  ["https", 84, "HTTPS"],
  ["grpc", 85, "GRPC"],
  ["h2", 86, "HTTP2"],
] as const

describe("a service without an address on a REGISTRY_ONLY sidecar (issue 44)", () => {
  const push = meshPush({
    services: [...meshInput().services, svc(EXTERNAL, ports, { namespace: "sleep", resolution: "DNS" })],
  })
  const config = proxyConfig(push, sleepProxy())
  const listeners = config.listeners.resources
  const routes = config.routes.resources

  it("every port has its wildcard listener", () => {
    const names = listeners.map((l) => l.name)
    for (const [, port] of ports) expect(names).toContain(`0.0.0.0_${port}`)
  })

  it("HTTP for an unknown host on the HTTP and auto ports is answered by block_all; the service's own name routes", () => {
    for (const port of [80, 81, 85, 86]) {
      const unknown = outboundHttp({ listeners, routes, port, host: "foo", destinationIp: "1.2.3.4" })
      expect(unknown, String(port)).toMatchObject({ kind: "route", virtualHost: { name: "block_all" } })
      const known = outboundHttp({ listeners, routes, port, host: EXTERNAL, destinationIp: "1.2.3.4" })
      expect(known, String(port)).toMatchObject({ kind: "route", cluster: `outbound|${port}||${EXTERNAL}` })
    }
  })

  it("the TCP port captures every connection; TLS for another name is refused", () => {
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 82 })).toMatchObject({
      cluster: `outbound|82||${EXTERNAL}`,
    })
    for (const port of [83, 84]) {
      expect(outboundTcp({ listeners, vip: "1.2.3.4", port, sni: "foo" })).toMatchObject({
        cluster: "BlackHoleCluster",
      })
      expect(outboundTcp({ listeners, vip: "1.2.3.4", port, sni: EXTERNAL })).toMatchObject({
        cluster: `outbound|${port}||${EXTERNAL}`,
      })
    }
  })
})
