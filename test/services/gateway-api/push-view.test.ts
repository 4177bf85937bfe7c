/** The push pipeline's view of the Gateway-API resources: converted once per change of its inputs, or not at all when off. */
import { describe, expect, it } from "vitest"
import { defaultGatewayApiSettings, makeGatewayApiView } from "../../../src/services/gateway-api/push-view.js"
import type { TlsObjects } from "../../../src/services/gateway-api/tls-objects.js"
import { emptyInput, httpRoute, parentGw, service, simpleGateway } from "./fixtures.js"
import { httpsListener, selfSigned, tlsSecret } from "./tls-fixtures.js"

const { services: _services, namespaceLabels: _labels, ...noLists } = emptyInput

describe("the Gateway-API push view", () => {
  const services = [service("reviews", "default", [["http", 9080, "HTTP"]])]
  const lists = {
    ...noLists,
    gateways: [simpleGateway()],
    httpRoutes: [
      httpRoute(
        "reviews",
        { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "reviews", namespace: "default", port: 9080 }] }] },
        { namespace: "infra" },
      ),
    ],
  }

  it("converts the Gateway and its route into a mesh Gateway and VirtualService", () => {
    const view = makeGatewayApiView(defaultGatewayApiSettings)
    const out = view(lists, services, new Map())
    expect(out.gateways.map((g) => g.meta.name)).toHaveLength(1)
    expect(out.virtualServices.length).toBeGreaterThan(0)
  })

  it("converts again only when an input changed (by identity)", () => {
    const view = makeGatewayApiView(defaultGatewayApiSettings)
    const labels = new Map()
    const first = view(lists, services, labels)
    expect(view({ ...lists }, services, labels)).toBe(first)
    expect(view(lists, [...services], labels)).not.toBe(first)
  })

  it("gives nothing when PILOT_ENABLE_GATEWAY_API is off, or when there are no Gateway-API objects", () => {
    expect(makeGatewayApiView({ ...defaultGatewayApiSettings, enabled: false })(lists, services, new Map())).toEqual({
      gateways: [],
      virtualServices: [],
      destinationRules: [],
      services: [],
    })
    expect(makeGatewayApiView(defaultGatewayApiSettings)(noLists, services, new Map())).toEqual({
      gateways: [],
      virtualServices: [],
      destinationRules: [],
      services: [],
    })
  })

  describe("with the cluster's Secrets and ConfigMaps (issue 36 group 3 in the served config)", async () => {
    const good = await selfSigned("good.example.com")
    const goodSecret = tlsSecret("good", { "tls.crt": good.cert, "tls.key": good.key })
    const tlsLists = {
      ...lists,
      gateways: [simpleGateway([httpsListener("ok", "good"), httpsListener("lost", "ghost")])],
    }
    const objects = (extra: Record<string, ReturnType<typeof tlsSecret>> = {}): TlsObjects => ({
      secrets: new Map([["infra/good", goodSecret], ...Object.entries(extra)]),
      configMaps: new Map(),
    })
    const servers = (out: ReturnType<ReturnType<typeof makeGatewayApiView>>) =>
      out.gateways.flatMap((g) => g.spec.servers.map((s) => s.port.name))

    it("a listener whose certificate Secret does not exist is not served; unknown objects are not checked", () => {
      const view = makeGatewayApiView(defaultGatewayApiSettings)
      expect(servers(view(tlsLists, services, new Map()))).toEqual(["ok", "lost"])
      expect(servers(view(tlsLists, services, new Map(), objects()))).toEqual(["ok"])
    })

    it("the Secret appearing serves the listener", () => {
      const view = makeGatewayApiView(defaultGatewayApiSettings)
      expect(servers(view(tlsLists, services, new Map(), objects()))).toEqual(["ok"])
      expect(servers(view(tlsLists, services, new Map(), objects({ "infra/ghost": goodSecret })))).toEqual([
        "ok",
        "lost",
      ])
    })

    it("a change to a Secret no listener references does not convert again", () => {
      const view = makeGatewayApiView(defaultGatewayApiSettings)
      const labels = new Map()
      const first = view(tlsLists, services, labels, objects())
      const unrelated = tlsSecret("unrelated", { "tls.crt": "x", "tls.key": "y" })
      expect(view(tlsLists, services, labels, objects({ "infra/unrelated": unrelated }))).toBe(first)
      // The referenced Secret replaced by another object (its content changed): converted again.
      const changed = objects()
      ;(changed.secrets as Map<string, unknown>).set("infra/good", { ...goodSecret })
      expect(view(tlsLists, services, labels, changed)).not.toBe(first)
    })
  })
})
