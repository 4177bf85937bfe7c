/** conditions.ConditionAnalyzer (MSH0171): status conditions reporting a problem. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, summary } from "./support.js"

const NAME = "conditions.ConditionAnalyzer"
const condition = (type: string, status: string, reason = "R") =>
  `{type: ${type}, status: '${status}', reason: ${reason}, message: m}`
const serviceEntry = (conditions: string) =>
  `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: se, namespace: default}\nspec: {hosts: [a.example.com], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS}\nstatus: {conditions: [${conditions}]}\n`
const policy = (conditions: string) =>
  `apiVersion: security.mesh.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: ap, namespace: default}\nspec: {}\nstatus: {conditions: [${conditions}]}\n`
const service = (conditions: string) =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: default}\nspec: {ports: [{port: 80}]}\nstatus: {conditions: [${conditions}]}\n`
const route = (conditions: string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: default}\nspec: {parentRefs: [{name: gw}]}\nstatus: {parents: [{parentRef: {name: gw}, controllerName: mesh.io/gateway-controller, conditions: [${conditions}]}]}\n`
const gateway = (conditions: string) =>
  `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw, namespace: default}\nspec: {gatewayClassName: mesh, listeners: [{name: http, port: 80, protocol: HTTP}]}\nstatus: {conditions: [${conditions}]}\n`

describe("conditions.ConditionAnalyzer", () => {
  it("reports negative conditions of each watched kind", () => {
    const found = analyze(
      NAME,
      serviceEntry(condition("mesh.io/WaypointBound", "False", "NotFound")),
      policy(condition("ZtunnelAccepted", "False")),
      service(condition("mesh.io/WaypointBound", "False")),
      route(condition("ResolvedRefs", "False", "BackendNotFound")),
      gateway(condition("Programmed", "False")),
    )
    expect([...summary(found)].sort()).toEqual([
      "MSH0171 AuthorizationPolicy/default/ap",
      "MSH0171 Gateway/default/gw",
      "MSH0171 HTTPRoute/default/r",
      "MSH0171 Service/default/s",
      "MSH0171 ServiceEntry/default/se",
    ])
    expect(found.find((m) => m.resource?.kind === "ServiceEntry")?.text).toBe(
      "A condition with a negative status is present: type=mesh.io/WaypointBound, reason=NotFound, message=m.",
    )
  })

  it("reports a policy the waypoint accepted only in part, whatever its status", () => {
    expect(summary(analyze(NAME, policy(condition("WaypointAccepted", "True", "PartiallyInvalid"))))).toEqual([
      "MSH0171 AuthorizationPolicy/default/ap",
    ])
  })

  it("ignores true conditions and condition types not watched", () => {
    expect(
      analyze(
        NAME,
        serviceEntry(condition("mesh.io/WaypointBound", "True")),
        policy(condition("Reconciled", "False")),
        route(condition("Accepted", "True")),
        gateway(condition("Accepted", "True")),
      ),
    ).toEqual([])
  })
})
