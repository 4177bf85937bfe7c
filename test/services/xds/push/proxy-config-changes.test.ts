/**
 * Config only proxies read (Gateways, Sidecars, EnvoyFilters, ..., and the TLS credentials)
 * makes a full push when it changes: without a push request a Gateway added after start-up was
 * never served.
 */
import { describe, expect, it } from "vitest"
import { emptyProxyConfigInput, type PushContextInput } from "../../../../src/services/xds/model/push-context.js"
import { diffInputs } from "../../../../src/services/xds/push/updates.js"
import { input, resource } from "../../../fixtures/xds/mesh.js"

const base: PushContextInput = {
  ...input({ services: [], endpoints: [], virtualServices: [], destinationRules: [] }),
  proxyConfig: emptyProxyConfigInput,
}
const gateway = (hosts: Array<string>) =>
  resource(
    "Gateway",
    "ingress",
    { selector: { app: "ingress" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts }] },
    "mesh-system",
  )
const withProxyConfig = (parts: Partial<NonNullable<PushContextInput["proxyConfig"]>>): PushContextInput => ({
  ...base,
  proxyConfig: { ...emptyProxyConfigInput, ...parts },
})

describe("diffInputs on proxy-only config", () => {
  it("a Gateway added, changed or removed is a full push naming it", () => {
    const added = withProxyConfig({ gateways: [gateway(["*"])] })
    const request = diffInputs(base, added, 3)
    expect(request?.full).toBe(true)
    expect([...(request?.configsUpdated ?? [])]).toEqual(["Gateway/mesh-system/ingress"])
    const changed = withProxyConfig({ gateways: [gateway(["shop.example.com"])] })
    expect([...(diffInputs(added, changed, 4)?.configsUpdated ?? [])]).toEqual(["Gateway/mesh-system/ingress"])
    expect([...(diffInputs(changed, base, 5)?.configsUpdated ?? [])]).toEqual(["Gateway/mesh-system/ingress"])
  })

  it("a copy with the same specs is no change", () => {
    const added = withProxyConfig({ gateways: [gateway(["*"])] })
    expect(diffInputs(added, withProxyConfig({ gateways: [structuredClone(gateway(["*"]))] }), 0)).toBeUndefined()
  })

  it("a credential rotated is a full push naming its Secret", () => {
    const before = withProxyConfig({
      credentials: [{ namespace: "shop", name: "cert", certificateChain: "A", privateKey: "K" }],
    })
    const after = withProxyConfig({
      credentials: [{ namespace: "shop", name: "cert", certificateChain: "B", privateKey: "K" }],
    })
    const request = diffInputs(before, after, 0)
    expect(request?.full).toBe(true)
    expect([...(request?.configsUpdated ?? [])]).toEqual(["Secret/shop/cert"])
  })
})
