/**
 * Issue 36 group 8 (timeouts): `timeouts.request` is the route timeout; `timeouts.backendRequest`
 * bounds each try when the rule retries, and without a retry policy it is the route timeout
 * (the one backend request), no retry policy being invented for it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { HTTPRouteRule } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { convert, httpRoute, parentGw, schemaProblems, simpleGateway, vsForHost } from "./fixtures.js"

const routeOf = (rule: Omit<HTTPRouteRule, "backendRefs">) => {
  const out = convert({
    gateways: [simpleGateway()],
    httpRoutes: [
      httpRoute("r", {
        parentRefs: [parentGw],
        hostnames: ["t.example.com"],
        rules: [{ ...rule, backendRefs: [{ name: "backend", port: 8080 }] }],
      }),
    ],
  })
  expect(schemaProblems(out)).toEqual([])
  const [http] = vsForHost(out, "t.example.com").spec.http!
  return { timeout: http!.timeout, retries: http!.retries }
}

describe("HTTPRoute timeouts and retries", () => {
  it("request only: the route timeout", () => {
    expect(routeOf({ timeouts: { request: "10s" } })).toEqual({ timeout: "10s", retries: undefined })
  })

  it("backendRequest without retries: the route timeout (over request), and no retry policy", () => {
    expect(routeOf({ timeouts: { backendRequest: "2s" } })).toEqual({ timeout: "2s", retries: undefined })
    expect(routeOf({ timeouts: { request: "10s", backendRequest: "2s" } })).toEqual({
      timeout: "2s",
      retries: undefined,
    })
  })

  it("backendRequest with retries: each try's timeout; request stays the route timeout", () => {
    expect(
      routeOf({ timeouts: { request: "10s", backendRequest: "2s" }, retry: { attempts: 3, codes: [503] } }),
    ).toEqual({
      timeout: "10s",
      retries: {
        attempts: 3,
        retryOn: "connect-failure,refused-stream,unavailable,cancelled,503",
        perTryTimeout: "2s",
      },
    })
  })
})
