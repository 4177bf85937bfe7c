/**
 * Issue 36 group 3: a Gateway's `infrastructure.parametersRef` must name a ConfigMap of its
 * namespace. Another kind, or (when the ConfigMaps are known) a missing ConfigMap, is Accepted
 * False with reason InvalidParameters; as in the reference, the listeners are still served and
 * Programmed is not affected.
 */
import { describe, expect, it } from "vitest"
import type { TlsObjects } from "../../../src/services/gateway-api/tls-objects.js"
import { conditionOf, convert, gateway, gatewayStatusOf, httpListener, schemaProblems } from "./fixtures.js"

const withParameters = (parametersRef: { group: string; kind: string; name: string }) =>
  gateway(
    "gw",
    { listeners: [httpListener()], addresses: [{ value: "10.0.0.1" }], infrastructure: { parametersRef } },
    { namespace: "infra" },
  )

const objects: TlsObjects = { secrets: new Map(), configMaps: new Map([["infra/gw-options", { replicas: "2" }]]) }

const accepted = (out: ReturnType<typeof convert>) => {
  const c = gatewayStatusOf(out).conditions.find((c) => c.type === "Accepted")
  return [c?.status, c?.reason, c?.message]
}

describe("Gateway parametersRef", () => {
  it("another kind than a core ConfigMap: InvalidParameters, still served and programmed", () => {
    const out = convert({ gateways: [withParameters({ group: "example.io", kind: "Options", name: "gw-options" })] })
    expect(accepted(out)).toEqual([
      "False",
      "InvalidParameters",
      "Unsupported parametersRef group/kind example.io/Options, only ConfigMap is supported",
    ])
    expect(conditionOf(gatewayStatusOf(out).conditions, "Programmed").status).toBe("True")
    expect(out.gateways.map((g) => g.spec.servers.length)).toEqual([1])
    expect(schemaProblems(out)).toEqual([])
  })

  it("a ConfigMap that does not exist: InvalidParameters", () => {
    const out = convert({
      gateways: [withParameters({ group: "", kind: "ConfigMap", name: "nope" })],
      tlsObjects: objects,
    })
    expect(accepted(out)).toEqual(["False", "InvalidParameters", "parametersRef ConfigMap infra/nope does not exist"])
    expect(out.gateways).toHaveLength(1)
  })

  it("an existing ConfigMap, or ConfigMaps not known: Accepted", () => {
    const ref = { group: "", kind: "ConfigMap", name: "gw-options" }
    expect(accepted(convert({ gateways: [withParameters(ref)], tlsObjects: objects }))[0]).toBe("True")
    expect(accepted(convert({ gateways: [withParameters({ ...ref, name: "nope" })] }))[0]).toBe("True")
  })
})
