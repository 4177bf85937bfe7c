/** virtualservice.JWTClaimRouteAnalyzer (MSH0149): claim-based routes need request authentication on the gateway pods. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, pod, summary } from "./support.js"

const NAME = "virtualservice.JWTClaimRouteAnalyzer"
const gateway = mesh(
  "Gateway",
  "gw",
  "{selector: {app: ingress}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}",
)
const ingress = pod("ingress-0", "{app: ingress}", "", "mesh-system")
const route = (gateways: string, header = "'@request.auth.claims.group'") =>
  mesh(
    "VirtualService",
    "vs",
    `{hosts: [app.example.com], gateways: ${gateways}, http: [{match: [{headers: {${header}: {exact: admin}}}], route: [{destination: {host: x}}]}]}`,
  )
const requestAuth = (namespace: string, selector = "") =>
  mesh(
    "RequestAuthentication",
    "ra",
    `{${selector === "" ? "" : `selector: {matchLabels: ${selector}}, `}jwtRules: [{issuer: example.com}]}`,
    namespace,
    "security.mesh.io/v1",
  )

describe("virtualservice.JWTClaimRouteAnalyzer", () => {
  it("reports each gateway pod without request authentication", () => {
    const found = analyze(NAME, gateway, ingress, route("[gw]"))
    expect(summary(found)).toEqual(["MSH0149 VirtualService/default/vs"])
    expect(found[0]?.text).toBe(
      "The virtual service uses the JWT claim based routing (key: @request.auth.claims.group) but found no request authentication for the gateway (default/gw) pod (ingress-0). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.",
    )
  })

  it("is satisfied by a RequestAuthentication in the system namespace or the pod's, selecting the pod", () => {
    expect(analyze(NAME, gateway, ingress, route("[gw]"), requestAuth("mesh-system"))).toEqual([])
    expect(analyze(NAME, gateway, ingress, route("[gw]"), requestAuth("mesh-system", "{app: ingress}"))).toEqual([])
    expect(analyze(NAME, gateway, ingress, route("[gw]"), requestAuth("mesh-system", "{app: other}"))).toHaveLength(1)
    expect(analyze(NAME, gateway, ingress, route("[gw]"), requestAuth("default"))).toHaveLength(1)
  })

  it("ignores routes on ordinary headers, the mesh gateway and unknown gateways", () => {
    expect(analyze(NAME, gateway, ingress, route("[gw]", "x-user"))).toEqual([])
    expect(analyze(NAME, gateway, ingress, route("[mesh]", "x-user"))).toEqual([])
    expect(analyze(NAME, gateway, ingress, route("[other]"))).toEqual([])
  })
})
