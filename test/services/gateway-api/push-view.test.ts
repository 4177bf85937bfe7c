/** The push pipeline's view of the Gateway-API resources: converted once per change of its inputs, or not at all when off. */
import { describe, expect, it } from "vitest"
import { defaultGatewayApiSettings, makeGatewayApiView } from "../../../src/services/gateway-api/push-view.js"
import { emptyInput, httpRoute, parentGw, service, simpleGateway } from "./fixtures.js"

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
    })
    expect(makeGatewayApiView(defaultGatewayApiSettings)(noLists, services, new Map())).toEqual({
      gateways: [],
      virtualServices: [],
    })
  })
})
