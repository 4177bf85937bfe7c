/** PILOT_HTTP10 and a proxy's `HTTP10=1` metadata: its outbound and gateway HTTP listeners accept HTTP/1.0. */
import { describe, expect, it } from "vitest"
import type { Service } from "../../../../../src/services/registry/model.js"
import {
  defaultProxyGenOptions,
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import { proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { input, resource } from "../../../../fixtures/xds/mesh.js"
import { expectConformant } from "../../../../support/proxygen/check.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const reviews: Service = {
  hostname: "reviews.default.svc.cluster.local",
  namespace: "default",
  ports: [{ name: "http", port: 9080, protocol: "HTTP" }],
  addresses: ["10.0.0.1"],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: [],
  labels: {},
  registry: "Mock",
  clusterId: "Orchestrator",
}

const gateway = resource(
  "Gateway",
  "ingress",
  { selector: { app: "ingress" }, servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["*"] }] },
  "default",
)

const pushWith = (http10: boolean) =>
  makePushContext(
    {
      ...input({ services: [reviews], endpoints: [], virtualServices: [], destinationRules: [] }),
      proxyConfig: { ...emptyProxyConfigInput, gateways: [gateway] },
    },
    { ...defaultPushContextOptions, proxy: { ...defaultProxyGenOptions, http10 } },
  )

const sidecar = (metadata: Record<string, unknown> = {}) =>
  proxyView("sidecar~10.1.1.1~app-1.default~default.svc.cluster.local", { NAMESPACE: "default", ...metadata })!
const router = (metadata: Record<string, unknown> = {}) =>
  proxyView("router~10.1.1.2~ingress-1.default~default.svc.cluster.local", {
    NAMESPACE: "default",
    LABELS: { app: "ingress" },
    ...metadata,
  })!

/** `http_protocol_options` of every HTTP connection manager in the proxy's listeners. */
const httpOptions = (push: ReturnType<typeof pushWith>, proxy: ReturnType<typeof sidecar>) => {
  const listeners = generateForProxy(push, TypeUrl.Listener, { proxy, names: [], wildcard: true }).resources.map(
    (r) => r.build() as J,
  )
  expectConformant(TypeUrl.Listener, listeners)
  return listeners
    .filter((l) => l.name !== "virtualInbound")
    .flatMap((l) => l.filter_chains ?? [])
    .flatMap((c: J) => c.filters)
    .filter((f: J) => f.name === "envoy.filters.network.http_connection_manager")
    .map((f: J) => f.typed_config.http_protocol_options?.accept_http_10 === true)
}

describe("HTTP/1.0 on outbound HTTP listeners", () => {
  it("is off by default", () => {
    expect(httpOptions(pushWith(false), sidecar())).toEqual([false])
    expect(httpOptions(pushWith(false), router())).toEqual([false])
  })

  it("PILOT_HTTP10 turns it on for sidecars' outbound and gateways' HTTP listeners", () => {
    expect(httpOptions(pushWith(true), sidecar())).toEqual([true])
    expect(httpOptions(pushWith(true), router())).toEqual([true])
  })

  it("a proxy's HTTP10=1 metadata turns it on for that proxy alone, with its own share key", () => {
    const push = pushWith(false)
    expect(httpOptions(push, sidecar({ HTTP10: "1" }))).toEqual([true])
    expect(httpOptions(push, router({ HTTP10: "1" }))).toEqual([true])
    expect(sidecar({ HTTP10: "1" }).scopeKey).not.toBe(sidecar().scopeKey)
  })
})
