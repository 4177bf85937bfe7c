/**
 * Which Gateways are deployed and what their objects are called: the built-in `mesh` and
 * `mesh-waypoint` classes, classes naming our controller or the mesh controller, a class object
 * of another controller shadowing a built-in name; addresses that leave the proxy to the user;
 * a newer controller's Gateway; `<gateway>-<class>` names (waypoints: the Gateway's own), and
 * the name and service-account overrides in both spellings.
 */
import { describe, expect, it } from "vitest"
import {
  CONTROLLER_VERSION,
  isManaged,
  managedByNewerController,
  managedClasses,
  objectNames,
  WAYPOINT_CONTROLLER_NAME,
} from "../../../../src/services/gateway-api/deployment/names.js"

const OURS = "mesh.io/gateway-controller"

describe("managedClasses", () => {
  it("counts the built-in classes as existing", () => {
    const kinds = managedClasses([], { controllerName: OURS })
    expect(kinds.get("mesh")).toBe("gateway")
    expect(kinds.get("mesh-waypoint")).toBe("waypoint")
    expect(kinds.size).toBe(2)
  })

  it("follows the default class name", () => {
    const kinds = managedClasses([], { controllerName: OURS, defaultClassName: "edge" })
    expect(kinds.get("edge")).toBe("gateway")
    expect(kinds.has("mesh")).toBe(false)
  })

  it("deploys classes naming our controller or the mesh controller, not others", () => {
    const kinds = managedClasses(
      [
        { name: "internal", controllerName: OURS },
        { name: "east-west", controllerName: WAYPOINT_CONTROLLER_NAME },
        { name: "other", controllerName: "example.com/controller" },
      ],
      { controllerName: OURS },
    )
    expect(kinds.get("internal")).toBe("gateway")
    expect(kinds.get("east-west")).toBe("waypoint")
    expect(kinds.has("other")).toBe(false)
  })

  it("lets a class object of another controller take a built-in name", () => {
    const kinds = managedClasses([{ name: "mesh", controllerName: "example.com/controller" }], { controllerName: OURS })
    expect(kinds.has("mesh")).toBe(false)
    expect(kinds.get("mesh-waypoint")).toBe("waypoint")
  })
})

describe("isManaged", () => {
  it("deploys without addresses or with one IP address", () => {
    expect(isManaged(undefined)).toBe(true)
    expect(isManaged([])).toBe(true)
    expect(isManaged([{ value: "10.0.0.1" }])).toBe(true)
    expect(isManaged([{ type: "IPAddress", value: "10.0.0.1" }])).toBe(true)
  })

  it("leaves a Hostname or several addresses to the user", () => {
    expect(isManaged([{ type: "Hostname", value: "gw.default.svc.cluster.local" }])).toBe(false)
    expect(isManaged([{ value: "10.0.0.1" }, { value: "10.0.0.2" }])).toBe(false)
  })
})

describe("managedByNewerController", () => {
  it("skips Gateways a newer controller version manages", () => {
    expect(managedByNewerController({})).toBe(false)
    expect(managedByNewerController({ "gateway.mesh.io/controller-version": String(CONTROLLER_VERSION) })).toBe(false)
    expect(managedByNewerController({ "gateway.mesh.io/controller-version": String(CONTROLLER_VERSION + 1) })).toBe(
      true,
    )
    expect(managedByNewerController({ "gateway.istio.io/controller-version": String(CONTROLLER_VERSION + 1) })).toBe(
      true,
    )
  })
})

describe("objectNames", () => {
  it("suffixes gateways with their class; waypoints keep the Gateway's name", () => {
    expect(objectNames({ name: "gw", annotations: {} }, "mesh", "gateway")).toEqual({
      deployment: "gw-mesh",
      serviceAccount: "gw-mesh",
    })
    expect(objectNames({ name: "waypoint", annotations: {} }, "mesh-waypoint", "waypoint")).toEqual({
      deployment: "waypoint",
      serviceAccount: "waypoint",
    })
  })

  it("honours the name and service-account annotations, upstream spelling too", () => {
    expect(
      objectNames(
        {
          name: "gw",
          annotations: { "gateway.mesh.io/name-override": "edge", "gateway.istio.io/service-account": "sa" },
        },
        "mesh",
        "gateway",
      ),
    ).toEqual({ deployment: "edge", serviceAccount: "sa" })
  })
})
