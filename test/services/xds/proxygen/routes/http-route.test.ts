import { describe, expect, it } from "@effect/vitest"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import { makePushContext } from "../../../../../src/services/xds/model/push-context.js"
import {
  defaultHttpRoute,
  httpFilterNamesNeeded,
  httpRoutesFor,
  optionalHttpFilter,
  type RouteTarget,
} from "../../../../../src/services/xds/proxygen/routes/http-route.js"
import {
  DEFAULT_RETRY_ON,
  PREVIOUS_HOSTS_TYPE,
  PREVIOUS_PRIORITIES_TYPE,
} from "../../../../../src/services/xds/proxygen/routes/route-policies.js"
import { virtualServicesForProxy } from "../../../../../src/services/xds/proxygen/routes/virtual-services.js"
import { input, service, virtualService } from "../../../../fixtures/xds/mesh.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const REVIEWS = "reviews.default.svc.cluster.local"
const RATINGS = "ratings.default.svc.cluster.local"
const target: RouteTarget = { port: 9080, sourceLabels: { app: "productpage" }, sourceNamespace: "default" }
const services = [service(REVIEWS, [9080]), service(RATINGS, [9080, 9090])]

/** The routes of one VirtualService with `http` for `t`. */
const routesOf = (http: ReadonlyArray<unknown>, t: RouteTarget = target, extra: Record<string, unknown> = {}) => {
  const push = makePushContext(
    input({ services, virtualServices: [virtualService("reviews", { hosts: ["reviews"], http, ...extra })] }),
  )
  const [vs] = virtualServicesForProxy(push, { namespace: "default" })
  const result = httpRoutesFor(push, vs!, t)
  return { routes: result.routes as ReadonlyArray<J>, warnings: result.warnings, push, vs: vs! }
}

const to = (host: string, extra: Record<string, unknown> = {}) => ({ destination: { host, ...extra } })

const DEFAULT_RETRY = {
  retry_on: DEFAULT_RETRY_ON,
  num_retries: { value: 2 },
  retry_host_predicate: [
    { name: "envoy.retry_host_predicates.previous_hosts", typed_config: { "@type": PREVIOUS_HOSTS_TYPE } },
  ],
  host_selection_retry_max_attempts: "5",
  retriable_status_codes: [503],
}
const ZERO = { seconds: "0", nanos: 0 }

describe("defaultHttpRoute", () => {
  it("routes everything to the service cluster with no timeout and the default retries", () => {
    expect(defaultHttpRoute(REVIEWS, 9080)).toEqual({
      name: "default",
      match: { prefix: "/" },
      route: {
        cluster: `outbound|9080||${REVIEWS}`,
        timeout: ZERO,
        max_stream_duration: { max_stream_duration: ZERO, grpc_timeout_header_max: ZERO },
        retry_policy: DEFAULT_RETRY,
      },
      decorator: { operation: `${REVIEWS}:9080/*` },
    })
  })
})

describe("httpRoutesFor: matches", () => {
  it("translates uri exact/prefix/regex, ignoreUriCase, headers, withoutHeaders, method, authority, query", () => {
    const { routes } = routesOf([
      {
        name: "r",
        match: [
          { name: "exact", uri: { exact: "/a" }, ignoreUriCase: true },
          { uri: { prefix: "/p" }, headers: { "x-b": { prefix: "v" }, "x-a": { exact: "1" } } },
          {
            uri: { regex: "/r/[0-9]+" },
            withoutHeaders: { "x-c": { regex: "no.*" }, "x-d": {} },
            method: { exact: "GET" },
            authority: { prefix: "reviews" },
            scheme: { exact: "https" },
            queryParams: { q: { exact: "1" }, present: {} },
          },
        ],
        route: [to("reviews")],
      },
    ])
    expect(routes.map((r) => r.match)).toEqual([
      { path: "/a", case_sensitive: { value: false } },
      {
        prefix: "/p",
        headers: [
          { name: "x-a", string_match: { exact: "1" } },
          { name: "x-b", string_match: { prefix: "v" } },
        ],
      },
      {
        safe_regex: { regex: "/r/[0-9]+" },
        headers: [
          { name: "x-c", string_match: { safe_regex: { regex: "no.*" } }, invert_match: true },
          { name: "x-d", present_match: true, invert_match: true },
          { name: ":method", string_match: { exact: "GET" } },
          { name: ":authority", string_match: { prefix: "reviews" } },
          { name: ":scheme", string_match: { exact: "https" } },
        ],
        query_parameters: [
          { name: "present", present_match: true },
          { name: "q", string_match: { exact: "1" } },
        ],
      },
    ])
    expect(routes.map((r) => r.name)).toEqual(["r.exact", "r", "r"])
    expect(routes.map((r) => r.decorator.operation)).toEqual([
      `${REVIEWS}:9080/a`,
      `${REVIEWS}:9080/p*`,
      `${REVIEWS}:9080/r/[0-9]+`,
    ])
  })

  it("a route without match catches everything and ends the list", () => {
    const { routes } = routesOf([
      { match: [{ uri: { prefix: "/" } }, { uri: { prefix: "/never" } }], route: [to("reviews")] },
      { route: [to("ratings")] },
    ])
    expect(routes).toHaveLength(1)
    expect(routes[0].match).toEqual({ prefix: "/" })
  })

  it("filters matches by port, sourceLabels, sourceNamespace and gateways", () => {
    const http = [
      { match: [{ port: 9090, uri: { prefix: "/port" } }], route: [to("reviews")] },
      { match: [{ sourceLabels: { app: "productpage" }, uri: { prefix: "/labels" } }], route: [to("reviews")] },
      { match: [{ sourceLabels: { app: "other" }, uri: { prefix: "/other-labels" } }], route: [to("reviews")] },
      { match: [{ sourceNamespace: "prod", uri: { prefix: "/prod" } }], route: [to("reviews")] },
      { match: [{ gateways: ["mesh"], uri: { prefix: "/mesh" } }], route: [to("reviews")] },
      { match: [{ gateways: ["ingress"], uri: { prefix: "/gateway" } }], route: [to("reviews")] },
    ]
    const prefixes = (t: RouteTarget) =>
      routesOf(http, t, { gateways: ["mesh", "ingress"] }).routes.map((r) => r.match.prefix)
    expect(prefixes(target)).toEqual(["/labels", "/mesh"])
    expect(prefixes({ port: 9090, sourceLabels: {}, sourceNamespace: "prod" })).toEqual(["/port", "/prod", "/mesh"])
    expect(prefixes({ ...target, gateway: "default/ingress" })).toEqual(["/labels", "/gateway"])
  })
})

describe("httpRoutesFor: destinations", () => {
  it("weighted clusters over outbound|port|subset|host with per-destination headers", () => {
    const { routes } = routesOf([
      {
        route: [
          {
            ...to("reviews", { subset: "v1" }),
            weight: 75,
            headers: { request: { set: { "x-v": "1", ":authority": "v1.reviews" } }, response: { remove: ["x-r"] } },
          },
          { ...to("reviews", { subset: "v2", port: { number: 9081 } }), weight: 25 },
          { ...to("ratings"), weight: 0 },
        ],
      },
    ])
    expect(routes[0].route.weighted_clusters).toEqual({
      clusters: [
        {
          name: `outbound|9080|v1|${REVIEWS}`,
          weight: { value: 75 },
          request_headers_to_add: [{ header: { key: "x-v", value: "1" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" }],
          response_headers_to_remove: ["x-r"],
          host_rewrite_literal: "v1.reviews",
        },
        { name: `outbound|9081|v2|${REVIEWS}`, weight: { value: 25 } },
      ],
    })
    expect(routes[0].decorator.operation).toBe("reviews:9080/*")
  })

  it("port: the destination's, else the service's only port, else the listener's; unknown hosts warned", () => {
    const { routes, warnings } = routesOf([
      { match: [{ uri: { prefix: "/a" } }], route: [to("reviews")] },
      { match: [{ uri: { prefix: "/b" } }], route: [to("ratings")] },
      { match: [{ uri: { prefix: "/c" } }], route: [to("ratings", { port: { number: 9090 } })] },
      { match: [{ uri: { prefix: "/d" } }], route: [to("unknown.example.com")] },
    ])
    expect(routes.map((r) => r.route.cluster)).toEqual([
      `outbound|9080||${REVIEWS}`,
      `outbound|9080||${RATINGS}`,
      `outbound|9090||${RATINGS}`,
      "outbound|9080||unknown.example.com",
    ])
    expect(warnings).toEqual([
      {
        level: "warning",
        scope: "model",
        message:
          "VirtualService default/reviews: field http[3].route[0].destination.host: unknown.example.com is not in the service registry; requests to it get 503",
      },
    ])
  })

  it("a lone destination's headers join the route's; route headers set/add/remove", () => {
    const { routes } = routesOf([
      {
        headers: {
          request: { set: { "x-set": "s" }, add: { "x-add": "a" }, remove: ["x-gone"] },
          response: { set: { "x-resp": "r" } },
        },
        route: [{ ...to("reviews"), headers: { request: { add: { "x-dest": "d" } } } }],
      },
    ])
    expect(routes[0]).toMatchObject({
      request_headers_to_add: [
        { header: { key: "x-set", value: "s" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" },
        { header: { key: "x-add", value: "a" }, append_action: "APPEND_IF_EXISTS_OR_ADD" },
        { header: { key: "x-dest", value: "d" }, append_action: "APPEND_IF_EXISTS_OR_ADD" },
      ],
      request_headers_to_remove: ["x-gone"],
      response_headers_to_add: [{ header: { key: "x-resp", value: "r" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" }],
    })
    expect(routes[0].route.cluster).toBe(`outbound|9080||${REVIEWS}`)
  })
})

describe("httpRoutesFor: actions", () => {
  it("redirect: uri, authority, port, scheme, code", () => {
    const { routes } = routesOf([
      {
        match: [{ uri: { exact: "/a" } }],
        redirect: { uri: "/b", authority: "new.com", port: 8443, scheme: "https", redirectCode: 302 },
      },
      { match: [{ uri: { exact: "/c" } }], redirect: { uri: "/d", derivePort: "FROM_REQUEST_PORT" } },
      { match: [{ uri: { exact: "/e" } }], redirect: { authority: "x.com", redirectCode: 308 } },
    ])
    expect(routes.map((r) => r.redirect)).toEqual([
      {
        scheme_redirect: "https",
        host_redirect: "new.com",
        port_redirect: 8443,
        path_redirect: "/b",
        response_code: "FOUND",
      },
      { port_redirect: 9080, path_redirect: "/d", response_code: "MOVED_PERMANENTLY" },
      { host_redirect: "x.com", response_code: "PERMANENT_REDIRECT" },
    ])
    expect(routes.every((r) => r.route === undefined)).toBe(true)
  })

  it("redirect prefixRewrite (a Gateway-API ReplacePrefixMatch) rewrites the matched prefix", () => {
    const { routes } = routesOf([
      { match: [{ uri: { prefix: "/old/" } }], redirect: { prefixRewrite: "/new/", redirectCode: 302 } },
      { match: [{ uri: { prefix: "/keep/" } }], redirect: { prefixRewrite: "/", authority: "b.example.com" } },
    ])
    expect(routes[0].redirect).toEqual({ prefix_rewrite: "/new/", response_code: "FOUND" })
    expect(routes[1].redirect).toEqual({
      host_redirect: "b.example.com",
      prefix_rewrite: "/",
      response_code: "MOVED_PERMANENTLY",
    })
  })

  it("directResponse: status and body", () => {
    const { routes } = routesOf([
      { match: [{ uri: { exact: "/s" } }], directResponse: { status: 418, body: { string: "teapot" } } },
      { match: [{ uri: { exact: "/b" } }], directResponse: { status: 200, body: { bytes: "aGk=" } } },
      { directResponse: { status: 503 } },
    ])
    expect(routes.map((r) => r.direct_response)).toEqual([
      { status: 418, body: { inline_string: "teapot" } },
      { status: 200, body: { inline_bytes: "aGk=" } },
      { status: 503 },
    ])
    expect(routes[2].decorator.operation).toBe("reviews:9080/*")
  })

  it("rewrite: uri → prefix_rewrite, uriRegexRewrite → regex_rewrite, authority → host_rewrite_literal", () => {
    const { routes } = routesOf([
      { match: [{ uri: { prefix: "/old" } }], rewrite: { uri: "/new", authority: "internal" }, route: [to("reviews")] },
      { rewrite: { uriRegexRewrite: { match: "^/v1/(.*)", rewrite: "/\\1" } }, route: [to("reviews")] },
    ])
    expect(routes[0].route).toMatchObject({ prefix_rewrite: "/new", host_rewrite_literal: "internal" })
    expect(routes[1].route.regex_rewrite).toEqual({ pattern: { regex: "^/v1/(.*)" }, substitution: "/\\1" })
  })

  it("timeout and retries: set, disabled, custom", () => {
    const { routes } = routesOf([
      { match: [{ uri: { exact: "/a" } }], timeout: "1.5s", retries: { attempts: 0 }, route: [to("reviews")] },
      {
        match: [{ uri: { exact: "/b" } }],
        retries: { attempts: 3, perTryTimeout: "2s", retryOn: "5xx,503,gateway-error", retryRemoteLocalities: true },
        route: [to("reviews")],
      },
      {
        match: [{ uri: { exact: "/c" } }],
        retries: { attempts: 4, retryIgnorePreviousHosts: false },
        route: [to("reviews")],
      },
    ])
    const t = { seconds: "1", nanos: 500_000_000 }
    expect(routes[0].route).toEqual({
      cluster: `outbound|9080||${REVIEWS}`,
      timeout: t,
      max_stream_duration: { max_stream_duration: t, grpc_timeout_header_max: t },
    })
    expect(routes[1].route.retry_policy).toEqual({
      ...DEFAULT_RETRY,
      retry_on: "5xx,gateway-error,retriable-status-codes",
      num_retries: { value: 3 },
      retriable_status_codes: [503],
      per_try_timeout: { seconds: "2", nanos: 0 },
      retry_priority: {
        name: "envoy.retry_priorities.previous_priorities",
        typed_config: { "@type": PREVIOUS_PRIORITIES_TYPE, update_frequency: 2 },
      },
    })
    expect(routes[1].route.timeout).toEqual(ZERO)
    const { retry_host_predicate: _, ...withoutPredicate } = DEFAULT_RETRY
    expect(routes[2].route.retry_policy).toEqual({ ...withoutPredicate, num_retries: { value: 4 } })
  })

  it("fault: delay and abort as the fault filter's per-route config", () => {
    const { routes } = routesOf([
      {
        match: [{ uri: { exact: "/a" } }],
        fault: {
          delay: { fixedDelay: "7s", percentage: { value: 50 } },
          abort: { httpStatus: 500, percentage: { value: 0.1 } },
        },
        route: [to("reviews")],
      },
      { fault: { abort: { grpcStatus: "UNAVAILABLE" } }, route: [to("reviews")] },
    ])
    expect(routes[0].typed_per_filter_config).toEqual({
      "envoy.filters.http.fault": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault",
        delay: { fixed_delay: { seconds: "7", nanos: 0 }, percentage: { numerator: 500_000, denominator: "MILLION" } },
        abort: { http_status: 500, percentage: { numerator: 1000, denominator: "MILLION" } },
      },
    })
    expect(routes[1].typed_per_filter_config["envoy.filters.http.fault"].abort).toEqual({ grpc_status: 14 })
  })

  it("mirror, mirrorPercentage and mirrors → request_mirror_policies", () => {
    const { routes } = routesOf([
      {
        match: [{ uri: { exact: "/a" } }],
        mirror: { host: "ratings" },
        mirrorPercentage: { value: 25 },
        route: [to("reviews")],
      },
      { match: [{ uri: { exact: "/b" } }], mirror: { host: "ratings", subset: "v2" }, route: [to("reviews")] },
      {
        mirrors: [{ destination: { host: "ratings" } }, { destination: { host: "reviews" }, percentage: { value: 0 } }],
        route: [to("reviews")],
      },
    ])
    expect(routes.map((r) => r.route.request_mirror_policies)).toEqual([
      [
        {
          cluster: `outbound|9080||${RATINGS}`,
          runtime_fraction: { default_value: { numerator: 250_000, denominator: "MILLION" } },
          trace_sampled: { value: false },
        },
      ],
      [
        {
          cluster: `outbound|9080|v2|${RATINGS}`,
          runtime_fraction: { default_value: { numerator: 100, denominator: "HUNDRED" } },
          trace_sampled: { value: false },
        },
      ],
      [
        {
          cluster: `outbound|9080||${RATINGS}`,
          runtime_fraction: { default_value: { numerator: 100, denominator: "HUNDRED" } },
          trace_sampled: { value: false },
        },
      ],
    ])
  })

  it("corsPolicy → the CORS filter's per-route CorsPolicy", () => {
    const { routes } = routesOf([
      {
        corsPolicy: {
          allowOrigins: [{ exact: "https://a.com" }, { regex: ".*\\.b\\.com" }],
          allowMethods: ["GET", "POST"],
          allowHeaders: ["x-a", "x-b"],
          exposeHeaders: ["x-c"],
          maxAge: "24h",
          allowCredentials: true,
        },
        route: [to("reviews")],
      },
    ])
    expect(routes[0].typed_per_filter_config).toEqual({
      "envoy.filters.http.cors": {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy",
        allow_origin_string_match: [{ exact: "https://a.com" }, { safe_regex: { regex: ".*\\.b\\.com" } }],
        allow_methods: "GET,POST",
        allow_headers: "x-a,x-b",
        expose_headers: "x-c",
        max_age: "86400",
        allow_credentials: { value: true },
        filter_enabled: { default_value: { numerator: 100, denominator: "HUNDRED" } },
      },
    })
  })

  it("httpFilterNamesNeeded names fault before cors, only when used", () => {
    const { routes } = routesOf([
      { match: [{ uri: { exact: "/a" } }], corsPolicy: { allowOrigins: [{ exact: "x" }] }, route: [to("reviews")] },
      { fault: { abort: { httpStatus: 503, percentage: { value: 100 } } }, route: [to("reviews")] },
    ])
    expect(httpFilterNamesNeeded(routes as ReadonlyArray<ProtoObject>)).toEqual([
      "envoy.filters.http.fault",
      "envoy.filters.http.cors",
    ])
    expect(httpFilterNamesNeeded([defaultHttpRoute(REVIEWS, 9080)])).toEqual([])
    expect(optionalHttpFilter("envoy.filters.http.cors")).toEqual({
      name: "envoy.filters.http.cors",
      typed_config: { "@type": "type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors" },
    })
  })

  it("memoises per push, VirtualService and target", () => {
    const { push, vs } = routesOf([{ route: [to("reviews")] }])
    expect(httpRoutesFor(push, vs, target)).toBe(httpRoutesFor(push, vs, { ...target, sourceLabels: { other: "x" } }))
    expect(httpRoutesFor(push, vs, target)).not.toBe(httpRoutesFor(push, vs, { ...target, port: 1 }))
  })
})
