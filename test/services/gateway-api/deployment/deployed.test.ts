/**
 * The Gateways the controller deploys and their readiness, as both the controller and the
 * status writer see them: only deployed classes and managed addresses, looked up under the
 * names the objects get (overrides included).
 */
import { describe, expect, it } from "vitest"
import { deployedStates } from "../../../../src/services/gateway-api/deployment/deployed.js"
import { managedClasses } from "../../../../src/services/gateway-api/deployment/names.js"
import type { OrchService } from "../../../../src/services/orchestrator/objects.js"

const classes = managedClasses([{ name: "other", controllerName: "example.com/controller" }])
const header = (name: string, className: string, extra: Record<string, unknown> = {}) => ({
  namespace: "default",
  name,
  annotations: {},
  className,
  ...extra,
})

describe("deployedStates", () => {
  it("covers deployed Gateways only, looking up the names their objects get", () => {
    const lookedUp: Array<string> = []
    const ready = { metadata: { name: "x" }, status: { readyReplicas: 1 } }
    const svc: OrchService = { metadata: { name: "x" }, spec: { type: "ClusterIP", clusterIP: "10.96.0.3" } }
    const states = deployedStates(
      [
        header("gw", "mesh"),
        header("wp", "mesh-waypoint"),
        header("edge", "mesh", { annotations: { "gateway.mesh.io/name-override": "edge-proxy" } }),
        header("theirs", "other"),
        header("manual", "mesh", { addresses: [{ type: "Hostname", value: "proxy.example.com" }] }),
      ],
      classes,
      {
        deployment: (ns, name) => {
          lookedUp.push(`${ns}/${name}`)
          return name === "wp" ? ready : undefined
        },
        service: (_ns, name) => (name === "wp" ? svc : undefined),
      },
    )
    expect([...states.keys()].sort()).toEqual(["default/edge", "default/gw", "default/wp"])
    expect(lookedUp.sort()).toEqual(["default/edge-proxy", "default/gw-mesh", "default/wp"])
    expect(states.get("default/wp")).toEqual({ addresses: [{ type: "IPAddress", value: "10.96.0.3" }] })
    expect(states.get("default/gw")?.pending?.reason).toBe("Pending")
  })
})
