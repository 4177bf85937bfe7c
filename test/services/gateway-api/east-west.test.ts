/**
 * Issue 36 group 2: the east-west gateway class (the reference's `istio-east-west`, here
 * `mesh-east-west` of controller `mesh.io/eastwest-controller`). What it serves: port 15008 HBONE
 * (TLS Terminate) is the proxy's own tunnel listener, programmed without a server or routes;
 * other ports are TLS Passthrough listeners served as any Gateway's; another listener is not
 * Accepted (UnsupportedProtocol) yet served, as the reference. What it deploys: the Gateway's own
 * name, a LoadBalancer Service, pods managed by the east-west controller (never captured by a
 * waypoint).
 */
import { describe, expect, it } from "vitest"
import type { Listener } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import {
  EAST_WEST_CLASS_NAME,
  EAST_WEST_CONTROLLER_NAME,
  managedClasses,
  objectNames,
} from "../../../src/services/gateway-api/deployment/names.js"
import { service, workloadLabels } from "../../../src/services/gateway-api/deployment/objects.js"
import { EAST_WEST_CONTROLLER } from "../../../src/services/gateway-api/waypoints/binding.js"
import {
  conditionOf,
  convert,
  gateway,
  gatewayClass,
  gatewayStatusOf,
  listenerOf,
  parentConditions,
  service as registryService,
  routeStatusOf,
  schemaProblems,
  tlsRoute,
} from "./fixtures.js"

const HBONE: Listener = {
  name: "mesh",
  port: 15008,
  protocol: "HBONE",
  tls: { mode: "Terminate", options: { x: "y" } },
}
const PASSTHROUGH: Listener = {
  name: "tls",
  port: 15443,
  protocol: "TLS",
  tls: { mode: "Passthrough" },
  allowedRoutes: { namespaces: { from: "All" } },
}

const eastWest = (listeners: ReadonlyArray<Listener>, className = "ew") =>
  gateway("gw", { gatewayClassName: className, listeners }, { namespace: "infra" })
const ewClass = gatewayClass("ew", EAST_WEST_CONTROLLER_NAME)

const UNSUPPORTED =
  'East-west gateway listeners must be either port 15008 with protocol "HBONE" and TLS.Mode == Terminate, or TLS with TLS.Mode == Passthrough'

describe("east-west gateway class", () => {
  it("HBONE on 15008 is programmed without a server; TLS Passthrough listeners are served and take TLSRoutes", () => {
    const out = convert({
      gatewayClasses: [ewClass],
      gateways: [eastWest([HBONE, PASSTHROUGH])],
      tlsRoutes: [
        tlsRoute(
          "remote",
          {
            parentRefs: [{ name: "gw", namespace: "infra", sectionName: "tls" }],
            hostnames: ["backend.default.svc.cluster.local"],
            rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
          },
          { namespace: "default" },
        ),
      ],
    })
    expect(conditionOf(gatewayStatusOf(out).conditions, "Accepted")).toEqual({
      status: "True",
      reason: "Accepted",
    })
    const status = gatewayStatusOf(out)
    const mesh = listenerOf(status, "mesh")
    expect(mesh.supportedKinds).toEqual([])
    expect(mesh.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      "Accepted=True",
      "Programmed=True",
      "ResolvedRefs=True",
      "Conflicted=False",
    ])
    expect(listenerOf(status, "tls").attachedRoutes).toBe(1)
    expect(out.gateways.map((g) => g.spec.servers)).toEqual([
      [{ port: { number: 15443, name: "tls", protocol: "TLS" }, hosts: ["*/*"], tls: { mode: "PASSTHROUGH" } }],
    ])
    expect(parentConditions(routeStatusOf(out, "TLSRoute", "remote"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
    expect(schemaProblems(out)).toEqual([])
  })

  it("any other listener is not Accepted (UnsupportedProtocol) but still served, as the reference", () => {
    const out = convert({
      gatewayClasses: [ewClass],
      gateways: [
        eastWest([
          HBONE,
          { name: "web", port: 80, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } },
          { name: "terminate", port: 15443, protocol: "TLS", tls: { mode: "Terminate", options: { a: "b" } } },
          { name: "hbone-elsewhere", port: 15009, protocol: "HBONE", tls: { mode: "Terminate", options: { a: "b" } } },
        ]),
      ],
    })
    const status = gatewayStatusOf(out)
    for (const name of ["web", "terminate", "hbone-elsewhere"]) {
      const accepted = listenerOf(status, name).conditions.find((c) => c.type === "Accepted")
      expect(accepted).toMatchObject({ status: "False", reason: "UnsupportedProtocol", message: UNSUPPORTED })
    }
    // HTTP is served (a server exists); HBONE off 15008 cannot be.
    expect(out.gateways[0]?.spec.servers.map((s) => s.port.name)).toContain("web")
    expect(conditionOf(listenerOf(status, "hbone-elsewhere").conditions, "Programmed").status).toBe("False")
  })

  it("the built-in class exists with ambient multi-network only; HBONE on another class is unsupported", () => {
    const builtIn = (eastWestClass: boolean) =>
      convert({ gateways: [eastWest([HBONE, PASSTHROUGH], EAST_WEST_CLASS_NAME)] }, { eastWestClass }).statuses.some(
        (s) => s.kind === "KubernetesGateway",
      )
    expect(builtIn(true)).toBe(true)
    expect(builtIn(false)).toBe(false)
    const onDefault = gatewayStatusOf(convert({ gateways: [eastWest([HBONE, PASSTHROUGH], "mesh")] }))
    expect(conditionOf(listenerOf(onDefault, "mesh").conditions, "Accepted").reason).toBe("UnsupportedProtocol")
  })

  it("is Programmed once a Service serves 15008 and its TLS ports", () => {
    const svc = registryService("gw", "infra", [
      ["tunnel", 15008, "TCP"],
      ["tls", 15443, "TLS"],
    ])
    const gw = gateway(
      "gw",
      { gatewayClassName: "ew", listeners: [HBONE, PASSTHROUGH], addresses: [{ type: "Hostname", value: "gw" }] },
      { namespace: "infra" },
    )
    const status = gatewayStatusOf(convert({ gatewayClasses: [ewClass], gateways: [gw], services: [svc] }))
    expect(conditionOf(status.conditions, "Programmed")).toEqual({ status: "True", reason: "Programmed" })
  })

  it("deploys under the Gateway's own name, behind a LoadBalancer, managed by the east-west controller", () => {
    const classes = managedClasses([{ name: "ew", controllerName: EAST_WEST_CONTROLLER_NAME }], { eastWestClass: true })
    expect(classes.get("ew")).toBe("east-west")
    expect(classes.get(EAST_WEST_CLASS_NAME)).toBe("east-west")
    expect(managedClasses([]).has(EAST_WEST_CLASS_NAME)).toBe(false)
    const names = objectNames({ name: "gw", annotations: {} }, "ew", "east-west")
    expect(names).toEqual({ deployment: "gw", serviceAccount: "gw" })
    const m = {
      gateway: {
        apiVersion: "gateway.networking.k8s.io/v1",
        name: "gw",
        namespace: "infra",
        uid: "u",
        labels: {},
        annotations: {},
        spec: { gatewayClassName: "ew", listeners: [HBONE, PASSTHROUGH] },
      },
      kind: "east-west" as const,
      names,
    }
    expect((service(m) as { spec: { type: string } }).spec.type).toBe("LoadBalancer")
    expect(workloadLabels(m)["gateway.mesh.io/managed"]).toBe(EAST_WEST_CONTROLLER)
  })
})
