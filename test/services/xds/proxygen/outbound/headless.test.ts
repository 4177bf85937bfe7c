/**
 * Headless services (no VIP, resolution NONE): their TCP ports get a listener per endpoint
 * address, so a connection to a pod IP reaches the service's chain; HTTP ports stay on the
 * wildcard listener. A change of their endpoints is a full push (the listeners change with it).
 */
import { describe, expect, it } from "vitest"
import type { Service } from "../../../../../src/services/registry/model.js"
import { asProtoData } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type PushContextInput,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import {
  generateOutboundListeners,
  generateOutboundRoutes,
} from "../../../../../src/services/xds/proxygen/outbound/index.js"
import { proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { diffInputs } from "../../../../../src/services/xds/push/updates.js"
import { endpoint, input } from "../../../../fixtures/xds/mesh.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import { outboundHttp, outboundTcp } from "../../../../support/proxygen/evaluator.js"

const DB = "db.default.svc.cluster.local"

const headless: Service = {
  hostname: DB,
  namespace: "default",
  ports: [
    { name: "grpc-5432", port: 5432, protocol: "TCP" },
    { name: "grpc-8080", port: 8080, protocol: "HTTP" },
  ],
  addresses: [],
  autoAllocatedAddresses: [],
  resolution: "NONE",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Orchestrator",
  clusterId: "Orchestrator",
}

const inputWith = (ips: ReadonlyArray<string>): PushContextInput => ({
  ...input({
    services: [headless],
    endpoints: ips.flatMap((ip) => [
      endpoint(DB, ip, 5432, { servicePort: 5432 }),
      endpoint(DB, ip, 8080, { servicePort: 8080 }),
    ]),
    virtualServices: [],
    destinationRules: [],
  }),
  proxyConfig: emptyProxyConfigInput,
})

const sidecar = proxyView("sidecar~10.9.0.1~app-1.default~default.svc.cluster.local", { NAMESPACE: "default" })!

const listenersOf = (ips: ReadonlyArray<string>) => {
  const push = makePushContext(inputWith(ips), defaultPushContextOptions)
  const built = generateOutboundListeners(push, sidecar).resources.map((r) => asProtoData(r.build()))
  expectConformant(TypeUrl.Listener, built)
  return built
}

describe("headless services on the sidecar", () => {
  it("a TCP port gets a listener per endpoint address; the HTTP port stays on 0.0.0.0", () => {
    const listeners = listenersOf(["10.1.0.1", "10.1.0.2"])
    const names = listeners.map((l) => l.name)
    expect(names).toEqual(expect.arrayContaining(["10.1.0.1_5432", "10.1.0.2_5432", "0.0.0.0_8080"]))
    expect(names).not.toContain("0.0.0.0_5432")
    for (const vip of ["10.1.0.1", "10.1.0.2"])
      expect(outboundTcp({ listeners, vip, port: 5432 })).toMatchObject({ cluster: `outbound|5432||${DB}` })
    // An address that is not one of its endpoints passes through.
    expect(outboundTcp({ listeners, vip: "10.1.0.9", port: 5432 })).toMatchObject({ cluster: "PassthroughCluster" })
  })

  it("an endpoint change of a headless service is a full push", () => {
    const request = diffInputs(inputWith(["10.1.0.1"]), inputWith(["10.1.0.1", "10.1.0.2"]), 0)
    expect(request?.full).toBe(true)
  })

  it("every port of a headless service reaches its cluster at an endpoint address, whatever the protocol (issue 44)", () => {
    const HL = "headless.default.svc.cluster.local"
    const protocols = [
      ["http", 80, "HTTP"],
      ["auto", 81, "UNSUPPORTED"],
      ["tcp", 82, "TCP"],
      ["tls", 83, "TLS"],
      ["https", 84, "HTTPS"],
    ] as const
    const service: Service = {
      ...headless,
      hostname: HL,
      ports: protocols.map(([name, port, protocol]) => ({ name, port, protocol })),
    }
    const push = makePushContext(
      {
        ...input({
          services: [service],
          endpoints: protocols.map(([name, port]) => ({ ...endpoint(HL, "1.2.3.4", port), servicePortName: name })),
        }),
        proxyConfig: emptyProxyConfigInput,
      },
      defaultPushContextOptions,
    )
    const listeners = generateOutboundListeners(push, sidecar).resources.map((r) => asProtoData(r.build()))
    expectConformant(TypeUrl.Listener, listeners)
    const routes = generateOutboundRoutes(push, sidecar, []).resources.map((r) => asProtoData(r.build()))
    const cluster = (port: number) => `outbound|${port}||${HL}`
    const http = (port: number) => outboundHttp({ listeners, routes, port, destinationIp: "1.2.3.4", host: HL })
    expect(http(80)).toMatchObject({ kind: "route", cluster: cluster(80) })
    expect(http(81)).toMatchObject({ kind: "route", cluster: cluster(81) })
    // TLS and plain TCP to the auto port: its TCP target.
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 81, sni: HL, applicationProtocols: ["h2"] })).toMatchObject({
      cluster: cluster(81),
    })
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 81 })).toMatchObject({ cluster: cluster(81) })
    expect(outboundTcp({ listeners, vip: "1.2.3.4", port: 82 })).toMatchObject({ cluster: cluster(82) })
    // TLS with the short name as SNI.
    for (const port of [83, 84])
      expect(outboundTcp({ listeners, vip: "1.2.3.4", port, sni: "headless.default" })).toMatchObject({
        cluster: cluster(port),
      })
  })
})
