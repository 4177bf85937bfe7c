/** VirtualService analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, service, summary } from "./support.js"

const vs = (spec: string, name = "reviews", namespace = "default") => mesh("VirtualService", name, spec, namespace)
const reviews = service("reviews", "{app: reviews}", "[{name: http, port: 9080}]")

describe("virtualservice analyzers", () => {
  it("DestinationHostAnalyzer reports hosts that no Service or ServiceEntry defines", () => {
    const found = analyze(
      "virtualservice.DestinationHostAnalyzer",
      reviews,
      vs("{hosts: [reviews], http: [{route: [{destination: {host: ratings}}]}]}"),
    )
    expect(found.map((m) => m.text)).toEqual(['Referenced host not found: "ratings"'])
    expect(found[0]?.path).toEqual(["spec", "http", 0, "route", 0, "destination", "host"])
    const se = mesh(
      "ServiceEntry",
      "ext",
      "{hosts: ['*.example.com'], ports: [{number: 443, name: https, protocol: HTTPS}], resolution: NONE}",
    )
    expect(
      analyze(
        "virtualservice.DestinationHostAnalyzer",
        reviews,
        se,
        vs(
          "{hosts: [reviews], http: [{route: [{destination: {host: reviews}, weight: 50}, {destination: {host: api.example.com}, weight: 50}]}]}",
        ),
      ),
    ).toEqual([])
  })

  it("DestinationHostAnalyzer: a short destination is <name>.<namespace>.svc, never a ServiceEntry host starting with it", () => {
    // Issue 45 point 1: `a` in namespace default is a.default.svc.cluster.local; a.example.com does not stand in.
    const se = mesh(
      "ServiceEntry",
      "ext",
      "{hosts: [a.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}",
    )
    const route = vs("{hosts: [app.example.com], gateways: [gw], http: [{route: [{destination: {host: a}}]}]}")
    expect(analyze("virtualservice.DestinationHostAnalyzer", se, route).map((m) => m.text)).toEqual([
      'Referenced host not found: "a"',
    ])
    expect(
      analyze(
        "virtualservice.DestinationHostAnalyzer",
        se,
        service("a", "{app: a}", "[{name: http, port: 80}]"),
        route,
      ),
    ).toEqual([])
  })

  it("DestinationRuleAnalyzer reports subsets no DestinationRule defines", () => {
    const dr = mesh("DestinationRule", "reviews", "{host: reviews, subsets: [{name: v1, labels: {version: v1}}]}")
    const route = (subset: string) =>
      vs(`{hosts: [reviews], http: [{route: [{destination: {host: reviews, subset: ${subset}}}]}]}`)
    expect(analyze("virtualservice.DestinationRuleAnalyzer", dr, route("v2")).map((m) => m.text)).toEqual([
      'Referenced host+subset in destinationrule not found: "reviews+v2"',
    ])
    expect(analyze("virtualservice.DestinationRuleAnalyzer", dr, route("v1"))).toEqual([])
  })

  it("GatewayAnalyzer reports missing gateways (and, as the reference, their hosts as unserved), not mesh or existing ones", () => {
    const gw = mesh(
      "Gateway",
      "gw",
      "{selector: {app: gw}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}",
    )
    expect(
      summary(
        analyze(
          "virtualservice.GatewayAnalyzer",
          gw,
          vs("{hosts: [reviews], gateways: [nope], http: [{route: [{destination: {host: reviews}}]}]}"),
        ),
      ),
    ).toEqual(["MSH0101 VirtualService/default/reviews", "MSH0132 VirtualService/default/reviews"])
    expect(
      analyze(
        "virtualservice.GatewayAnalyzer",
        gw,
        vs("{hosts: [reviews], gateways: [mesh, gw, default/gw], http: [{route: [{destination: {host: reviews}}]}]}"),
      ),
    ).toEqual([])
  })

  it("GatewayHostAnalyzer reports hosts the gateway does not serve", () => {
    const gw = mesh(
      "Gateway",
      "gw",
      "{selector: {app: gw}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*.example.com']}]}",
    )
    expect(
      analyze(
        "virtualservice.GatewayHostAnalyzer",
        gw,
        vs("{hosts: [shop.other.org], gateways: [gw], http: [{route: [{destination: {host: reviews}}]}]}"),
      ).map((m) => m.text),
    ).toEqual([
      "one or more host [shop.other.org] defined in VirtualService default/reviews not found in Gateway default/gw.",
    ])
    expect(
      analyze(
        "virtualservice.GatewayHostAnalyzer",
        gw,
        vs("{hosts: [shop.example.com], gateways: [gw], http: [{route: [{destination: {host: reviews}}]}]}"),
      ),
    ).toEqual([])
  })

  it("ConflictingMeshGatewayHostsAnalyzer reports two mesh VirtualServices for one host", () => {
    const a = vs("{hosts: [reviews], http: [{route: [{destination: {host: reviews}}]}]}", "a")
    const b = vs("{hosts: [reviews.default.svc.cluster.local], http: [{route: [{destination: {host: reviews}}]}]}", "b")
    expect(summary(analyze("virtualservice.ConflictingMeshGatewayHostsAnalyzer", a, b))).toEqual([
      "MSH0109 VirtualService/default/a",
      "MSH0109 VirtualService/default/b",
    ])
    expect(
      analyze(
        "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
        a,
        vs("{hosts: [reviews], gateways: [gw], http: [{route: [{destination: {host: reviews}}]}]}", "c"),
      ),
    ).toEqual([])
  })

  it("DestinationHostAnalyzer requires a port for a multi-port service, with or without a gateway", () => {
    const svc = service("reviews", "{app: reviews}", "[{name: http, port: 80}, {name: grpc, port: 90}]")
    const route = (port: string, gateways = "[gw]") =>
      vs(
        `{hosts: [reviews.example.com], gateways: ${gateways}, http: [{route: [{destination: {host: reviews${port}}}]}]}`,
      )
    expect(summary(analyze("virtualservice.DestinationHostAnalyzer", svc, route("")))).toEqual([
      "MSH0112 VirtualService/default/reviews",
    ])
    expect(analyze("virtualservice.DestinationHostAnalyzer", svc, route("", "[mesh]")).map((m) => m.text)).toEqual([
      'This VirtualService routes to a service "reviews" that exposes multiple ports [80 90]. Specifying a port in the destination is required to disambiguate.',
    ])
    expect(analyze("virtualservice.DestinationHostAnalyzer", svc, route(", port: {number: 80}"))).toEqual([])
  })

  it("DestinationHostAnalyzer reports a destination port the host does not serve (Service or ServiceEntry)", () => {
    const route = (host: string, port: number) =>
      vs(`{hosts: [x.example.com], http: [{route: [{destination: {host: ${host}, port: {number: ${port}}}}]}]}`)
    expect(
      analyze("virtualservice.DestinationHostAnalyzer", reviews, route("reviews", 8080)).map((m) => m.text),
    ).toEqual(['Referenced host:port not found: "reviews:8080"'])
    expect(analyze("virtualservice.DestinationHostAnalyzer", reviews, route("reviews", 9080))).toEqual([])
    const se = mesh(
      "ServiceEntry",
      "ext",
      "{hosts: [api.example.com], ports: [{number: 443, name: https, protocol: HTTPS}], resolution: DNS}",
    )
    expect(
      analyze("virtualservice.DestinationHostAnalyzer", se, route("api.example.com", 80)).map((m) => m.text),
    ).toEqual(['Referenced host:port not found: "api.example.com:80"'])
    expect(analyze("virtualservice.DestinationHostAnalyzer", se, route("api.example.com", 443))).toEqual([])
  })

  it("DestinationHostAnalyzer calls a missing mirror a mirror host", () => {
    const found = analyze(
      "virtualservice.DestinationHostAnalyzer",
      reviews,
      vs("{hosts: [reviews], http: [{route: [{destination: {host: reviews}}], mirror: {host: shadow}}]}"),
    )
    expect(found.map((m) => m.text)).toEqual(['Referenced mirror host not found: "shadow"'])
  })

  it("UnreachableRuleAnalyzer reports rules after a catch-all and repeated matches", () => {
    const spec = (rules: string) => vs(`{hosts: [reviews], http: [${rules}]}`)
    const r = "route: [{destination: {host: reviews}}]"
    expect(
      analyze("virtualservice.UnreachableRuleAnalyzer", spec(`{${r}}, {match: [{uri: {prefix: /a}}], ${r}}`)).map(
        (m) => m.path,
      ),
    ).toEqual([["spec", "http", 1]])
    expect(
      analyze(
        "virtualservice.UnreachableRuleAnalyzer",
        spec(`{match: [{uri: {prefix: /a}}], ${r}}, {match: [{uri: {prefix: /a}}], ${r}}`),
      ),
    ).toHaveLength(1)
    expect(
      analyze("virtualservice.UnreachableRuleAnalyzer", spec(`{match: [{uri: {prefix: /a}}], ${r}}, {${r}}`)),
    ).toEqual([])
  })

  it("IneffectiveMatchAnalyzer reports a match repeated from an earlier rule", () => {
    const r = "route: [{destination: {host: reviews}}]"
    const spec = (second: string) =>
      vs(
        `{hosts: [reviews], http: [{match: [{uri: {prefix: /a}}], ${r}}, {match: [${second}, {uri: {prefix: /c}}], ${r}}]}`,
      )
    expect(analyze("virtualservice.IneffectiveMatchAnalyzer", spec("{uri: {prefix: /a}}")).map((m) => m.path)).toEqual([
      ["spec", "http", 1, "match", 0],
    ])
    expect(analyze("virtualservice.IneffectiveMatchAnalyzer", spec("{uri: {prefix: /b}}"))).toEqual([])
  })
})
