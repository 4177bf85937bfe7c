/** Waypoint binding and ambient enrolment rules (our own cases from the reference's rules). */
import { describe, expect, it } from "vitest"
import {
  bindWaypoint,
  describeProblem,
  type Meta,
  podInAmbient,
  requestedWaypoint,
  type WaypointInfo,
  waypointAttachment,
  waypointTrafficType,
} from "../../../../src/services/gateway-api/waypoints/binding.js"

const ns = (name: string, labels: Record<string, string> = {}): Meta => ({ name, namespace: "", labels })
const obj = (
  namespace: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
): Meta => ({
  name: "x",
  namespace,
  labels,
  annotations,
})
const waypoint = (
  namespace: string,
  name: string,
  trafficType: WaypointInfo["trafficType"] = "service",
  attachment: WaypointInfo["attachment"] = { from: "Same" },
): WaypointInfo => ({ ref: { namespace, name }, trafficType, attachment })
const lookupOf =
  (...waypoints: ReadonlyArray<WaypointInfo>) =>
  (key: string) =>
    waypoints.find((w) => `${w.ref.namespace}/${w.ref.name}` === key)

describe("requestedWaypoint", () => {
  it("takes the object's label before its namespace's", () => {
    const r = requestedWaypoint(obj("a", { "mesh.io/use-waypoint": "mine" }), ns("a", { "mesh.io/use-waypoint": "ns" }))
    expect(r).toEqual({ ref: { namespace: "a", name: "mine" }, source: "object" })
  })
  it("falls back to the namespace's label, naming a waypoint in the object's namespace", () => {
    expect(requestedWaypoint(obj("a"), ns("a", { "mesh.io/use-waypoint": "wp" }))).toEqual({
      ref: { namespace: "a", name: "wp" },
      source: "namespace",
    })
  })
  it("none on the object opts out even when the namespace names one", () => {
    expect(
      requestedWaypoint(obj("a", { "mesh.io/use-waypoint": "none" }), ns("a", { "mesh.io/use-waypoint": "wp" })),
    ).toBe(undefined)
  })
  it("use-waypoint-namespace is read from the label holder", () => {
    const own = requestedWaypoint(
      obj("a", { "mesh.io/use-waypoint": "wp", "mesh.io/use-waypoint-namespace": "shared" }),
      ns("a", { "mesh.io/use-waypoint-namespace": "other" }),
    )
    expect(own?.ref).toEqual({ namespace: "shared", name: "wp" })
    const inherited = requestedWaypoint(
      obj("a", { "mesh.io/use-waypoint-namespace": "ignored" }),
      ns("a", { "mesh.io/use-waypoint": "wp", "mesh.io/use-waypoint-namespace": "shared" }),
    )
    expect(inherited?.ref).toEqual({ namespace: "shared", name: "wp" })
  })
})

describe("bindWaypoint", () => {
  it("binds a service to a service waypoint and refuses a workload-only one", () => {
    const object = obj("a", { "mesh.io/use-waypoint": "wp" })
    expect(bindWaypoint("service", object, ns("a"), lookupOf(waypoint("a", "wp"))).waypoint?.ref.name).toBe("wp")
    const refused = bindWaypoint("service", object, ns("a"), lookupOf(waypoint("a", "wp", "workload")))
    expect(refused.waypoint).toBeUndefined()
    expect(refused.problem).toEqual({ _tag: "UnsupportedTrafficType", waypoint: "a/wp", wanted: "service" })
  })
  it("a workload inheriting a service-only waypoint has none, without a problem; its own label is a problem", () => {
    const lookup = lookupOf(waypoint("a", "wp", "service"))
    expect(bindWaypoint("workload", obj("a"), ns("a", { "mesh.io/use-waypoint": "wp" }), lookup)).toEqual({})
    const own = bindWaypoint("workload", obj("a", { "mesh.io/use-waypoint": "wp" }), ns("a"), lookup)
    expect(own.problem?._tag).toBe("UnsupportedTrafficType")
    expect(
      bindWaypoint(
        "workload",
        obj("a"),
        ns("a", { "mesh.io/use-waypoint": "wp" }),
        lookupOf(waypoint("a", "wp", "all")),
      ).waypoint?.ref.name,
    ).toBe("wp")
  })
  it("a missing waypoint is not ready", () => {
    const b = bindWaypoint("service", obj("a", { "mesh.io/use-waypoint": "gone" }), ns("a"), lookupOf())
    expect(b.problem).toEqual({ _tag: "NotReady", waypoint: "a/gone" })
    expect(describeProblem(b.problem!)).toContain("a/gone is not ready")
  })
  it("a waypoint in another namespace needs its listener to allow the namespace", () => {
    const object = obj("app", { "mesh.io/use-waypoint": "wp", "mesh.io/use-waypoint-namespace": "infra" })
    expect(bindWaypoint("service", object, ns("app"), lookupOf(waypoint("infra", "wp"))).problem?._tag).toBe(
      "AttachmentDenied",
    )
    expect(
      bindWaypoint("service", object, ns("app"), lookupOf(waypoint("infra", "wp", "service", { from: "All" })))
        .waypoint,
    ).toBeDefined()
    const selected = waypoint("infra", "wp", "service", {
      from: "Selector",
      selector: { matchLabels: { team: "blue" } },
    })
    expect(bindWaypoint("service", object, ns("app", { team: "blue" }), lookupOf(selected)).waypoint).toBeDefined()
    expect(bindWaypoint("service", object, ns("app", { team: "red" }), lookupOf(selected)).problem?._tag).toBe(
      "AttachmentDenied",
    )
  })
  it("a waypoint's own Service never uses a waypoint", () => {
    const object = obj("a", { "gateway.mesh.io/managed": "mesh.io-mesh-controller" })
    expect(
      bindWaypoint("service", object, ns("a", { "mesh.io/use-waypoint": "wp" }), lookupOf(waypoint("a", "wp"))),
    ).toEqual({})
  })
})

describe("waypoint facts", () => {
  it("traffic type: the Gateway's label, then its class's, then service", () => {
    expect(waypointTrafficType({ "mesh.io/waypoint-for": "all" }, { "mesh.io/waypoint-for": "workload" })).toBe("all")
    expect(waypointTrafficType({}, { "mesh.io/waypoint-for": "workload" })).toBe("workload")
    expect(waypointTrafficType(undefined, undefined)).toBe("service")
    expect(waypointTrafficType({ "mesh.io/waypoint-for": "bogus" }, undefined)).toBe("none")
  })
  it("attachment comes from the HBONE listener on 15008", () => {
    expect(waypointAttachment([{ name: "mesh", port: 15008, protocol: "HBONE" }])).toEqual({ from: "Same" })
    expect(
      waypointAttachment([
        { name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } },
        { name: "mesh", port: 15008, protocol: "HBONE", allowedRoutes: { namespaces: { from: "All" } } },
      ]),
    ).toEqual({ from: "All" })
  })
})

describe("podInAmbient", () => {
  const ambientNs = { "mesh.io/dataplane-mode": "ambient" }
  it("a pod of an ambient namespace is enrolled unless it says none", () => {
    expect(podInAmbient(obj("a"), ambientNs)).toBe(true)
    expect(podInAmbient(obj("a", { "mesh.io/dataplane-mode": "none" }), ambientNs)).toBe(false)
    expect(podInAmbient(obj("a"), {})).toBe(false)
  })
  it("a pod's own ambient label enrols it in any namespace", () => {
    expect(podInAmbient(obj("a", { "mesh.io/dataplane-mode": "ambient" }), undefined)).toBe(true)
  })
  it("sidecar-injected and host-network pods are never enrolled", () => {
    expect(podInAmbient(obj("a", {}, { "sidecar.mesh.io/status": "{}" }), ambientNs)).toBe(false)
    expect(podInAmbient({ ...obj("a", { "mesh.io/dataplane-mode": "ambient" }), hostNetwork: true }, ambientNs)).toBe(
      false,
    )
  })
})
