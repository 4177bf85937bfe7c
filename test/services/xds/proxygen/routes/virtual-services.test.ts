import { describe, expect, it } from "@effect/vitest"
import {
  defaultProxyGenOptions,
  defaultPushContextOptions,
  makePushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import {
  delegatesOf,
  gatewayVirtualServices,
  resolveGatewayName,
  virtualServicesForProxy,
  virtualServiceWarnings,
} from "../../../../../src/services/xds/proxygen/routes/virtual-services.js"
import { input, service, virtualService } from "../../../../fixtures/xds/mesh.js"

const REVIEWS = "reviews.default.svc.cluster.local"
const names = (list: ReadonlyArray<{ meta: { namespace: string; name: string } }>) =>
  list.map((vs) => `${vs.meta.namespace}/${vs.meta.name}`)

const route = (host: string) => [{ route: [{ destination: { host } }] }]

describe("virtualServicesForProxy", () => {
  it("keeps the VirtualServices exported to the proxy namespace and bound to the mesh", () => {
    const push = makePushContext(
      input({
        services: [service(REVIEWS)],
        virtualServices: [
          virtualService("public", { hosts: ["a"], http: route("reviews") }),
          virtualService("private", { hosts: ["b"], exportTo: ["."], http: route("reviews") }),
          virtualService("to-other", { hosts: ["c"], exportTo: ["other"], http: route("reviews") }),
          virtualService("gateway-only", { hosts: ["d"], gateways: ["ingress"], http: route("reviews") }),
          virtualService("gateway-and-mesh", { hosts: ["e"], gateways: ["ingress", "mesh"], http: route("reviews") }),
        ],
      }),
    )
    expect(names(virtualServicesForProxy(push, { namespace: "default" }))).toEqual([
      "default/gateway-and-mesh",
      "default/private",
      "default/public",
    ])
    expect(names(virtualServicesForProxy(push, { namespace: "other" }))).toEqual([
      "default/gateway-and-mesh",
      "default/public",
      "default/to-other",
    ])
    // memoised per push and namespace: the same array
    expect(virtualServicesForProxy(push, { namespace: "other" })).toBe(
      virtualServicesForProxy(push, { namespace: "other" }),
    )
  })

  it("applies defaultVirtualServiceExportTo when exportTo is empty", () => {
    const push = makePushContext(
      input({ virtualServices: [virtualService("vs", { hosts: ["a"], http: route("a") }, "team")] }),
      { ...defaultPushContextOptions, proxy: { ...defaultProxyGenOptions, defaultVirtualServiceExportTo: ["."] } },
    )
    expect(names(virtualServicesForProxy(push, { namespace: "team" }))).toEqual(["team/vs"])
    expect(virtualServicesForProxy(push, { namespace: "default" })).toEqual([])
  })

  it("merges delegate routes into the root: matches ANDed, unset fields inherited, hosts made absolute", () => {
    const push = makePushContext(
      input({
        virtualServices: [
          virtualService("root", {
            hosts: ["bookinfo.com"],
            http: [
              {
                name: "reviews",
                match: [{ uri: { prefix: "/reviews" } }],
                delegate: { name: "reviews-delegate", namespace: "team" },
                timeout: "5s",
              },
              { name: "rest", route: [{ destination: { host: "productpage" } }] },
            ],
          }),
          virtualService(
            "reviews-delegate",
            {
              http: [
                {
                  name: "v2",
                  match: [{ uri: { prefix: "/reviews/v2" }, headers: { end: { exact: "jason" } } }],
                  route: [{ destination: { host: "reviews", subset: "v2" } }],
                },
                // conflicts with the root's /reviews prefix: dropped
                { match: [{ uri: { prefix: "/ratings" } }], route: [{ destination: { host: "ratings" } }] },
                { route: [{ destination: { host: "reviews" } }], timeout: "1s" },
              ],
            },
            "team",
          ),
        ],
      }),
    )
    const [root] = virtualServicesForProxy(push, { namespace: "default" })
    expect(names(delegatesOf(push, root!))).toEqual(["team/reviews-delegate"])
    expect(root!.spec.http).toEqual([
      {
        name: "reviews-v2",
        match: [{ uri: { prefix: "/reviews/v2" }, headers: { end: { exact: "jason" } } }],
        route: [{ destination: { host: "reviews.team.svc.cluster.local", subset: "v2" } }],
        timeout: "5s",
      },
      {
        name: "reviews",
        match: [{ uri: { prefix: "/reviews" } }],
        route: [{ destination: { host: "reviews.team.svc.cluster.local" } }],
        timeout: "1s",
      },
      { name: "rest", route: [{ destination: { host: "productpage" } }] },
    ])
    // delegates are not VirtualServices of their own
    expect(names(virtualServicesForProxy(push, { namespace: "team" }))).toEqual(["default/root"])
    expect(virtualServiceWarnings(push).map((w) => w.message)).toEqual([
      expect.stringContaining("VirtualService team/reviews-delegate: field http[1].match: conflicts"),
    ])
  })

  it("drops a route whose delegate is missing, not exported to the root, or has hosts, with a warning", () => {
    const push = makePushContext(
      input({
        virtualServices: [
          virtualService("root", {
            hosts: ["a.com"],
            http: [
              { delegate: { name: "missing" } },
              { delegate: { name: "hidden", namespace: "team" } },
              { delegate: { name: "with-hosts" } },
              { route: [{ destination: { host: "a" } }] },
            ],
          }),
          virtualService("hidden", { exportTo: ["."], http: route("x") }, "team"),
          virtualService("with-hosts", { hosts: ["b.com"], http: route("x") }),
        ],
      }),
    )
    const root = virtualServicesForProxy(push, { namespace: "default" }).find((v) => v.meta.name === "root")
    expect(root!.spec.http).toEqual([{ route: [{ destination: { host: "a" } }] }])
    const messages = virtualServiceWarnings(push).map((w) => w.message)
    expect(messages).toHaveLength(3)
    expect(messages[0]).toContain(
      "VirtualService default/root: field http[0].delegate: delegate VirtualService default/missing not found",
    )
    expect(messages[1]).toContain("team/hidden")
    expect(messages[2]).toContain("default/with-hosts")
    expect(virtualServiceWarnings(push).every((w) => w.scope === "model" && w.level === "warning")).toBe(true)
  })
})

describe("gatewayVirtualServices", () => {
  it("keeps the VirtualServices naming one of the gateways (short names in their namespace)", () => {
    const push = makePushContext(
      input({
        virtualServices: [
          virtualService("short", { hosts: ["a.com"], gateways: ["ingress"], http: route("a") }, "edge"),
          virtualService("full", { hosts: ["b.com"], gateways: ["edge/ingress"], http: route("b") }),
          virtualService("other-gw", { hosts: ["c.com"], gateways: ["edge/other"], http: route("c") }),
          virtualService("mesh", { hosts: ["d"], http: route("d") }),
          virtualService("hidden", { hosts: ["e.com"], gateways: ["edge/ingress"], exportTo: ["."], http: route("e") }),
        ],
      }),
    )
    expect(names(gatewayVirtualServices(push, ["edge/ingress"], "edge"))).toEqual(["default/full", "edge/short"])
    expect(names(gatewayVirtualServices(push, ["edge/ingress", "edge/other"], "default"))).toEqual([
      "default/full",
      "default/hidden",
      "default/other-gw",
      "edge/short",
    ])
  })

  it("resolves gateway names: mesh, short, namespace/name and the legacy FQDN form", () => {
    expect(resolveGatewayName("mesh", "ns")).toBe("mesh")
    expect(resolveGatewayName("gw", "ns")).toBe("ns/gw")
    expect(resolveGatewayName("other/gw", "ns")).toBe("other/gw")
    expect(resolveGatewayName("gw.other.svc.cluster.local", "ns")).toBe("other/gw")
  })
})
