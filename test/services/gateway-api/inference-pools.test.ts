/**
 * Issue 36 group 2, the last kind: InferencePool backends (ENABLE_GATEWAY_API_INFERENCE_EXTENSION).
 * Own cases, one per rule: the shadow Service's name and shape; a route to a pool goes to the
 * shadow Service's first port and names the pool's endpoint picker for its routes; with the
 * extension off the backend is InvalidKind; a missing pool is BackendNotFound, a host name
 * instead of the pool's name InvalidDestination; the pool's status per Gateway (Accepted /
 * HTTPRouteNotAccepted, ResolvedRefs / InvalidExtensionRef); and the router's listener and
 * route carrying the ext_proc filter and the per-route override.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { parseConfigDocuments } from "../../../src/services/config-model/parse.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import type { InferencePoolSpec } from "../../../src/services/config-model/schemas/gateway-api/inference-pool.js"
import type { GatewayApiInput, GatewayApiOutput } from "../../../src/services/gateway-api/convert.js"
import {
  endpointPickersOf,
  INFERENCE_ROUTES_ANNOTATION,
  inferencePoolServiceName,
  shadowRegistryService,
  shadowServiceObject,
} from "../../../src/services/gateway-api/inference-pools.js"
import { defaultGatewayApiSettings, makeGatewayApiView } from "../../../src/services/gateway-api/push-view.js"
import type { Service } from "../../../src/services/registry/model.js"
import { proxyView } from "../../../src/services/xds/proxygen/proxy-view.js"
import { meshInput, meshPush, proxyConfig } from "../xds/proxygen/scenarios/mesh.js"
import { convert, parentConditions, routeStatusOf, schemaProblems, service, statusOf } from "./fixtures.js"
import { fromYaml, GATEWAY_YAML } from "./policy-fixtures.js"

const hash8 = (name: string) => createHash("sha256").update(name).digest("hex").slice(0, 8)
const SHADOW = `llama-ip-${hash8("llama")}`
const SHADOW_HOST = `${SHADOW}.default.svc.cluster.local`
const PICKER_HOST = "llama-epp.default.svc.cluster.local"

const pool = (picker = "{name: llama-epp, port: {number: 9002}}") => `
apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: llama, namespace: default, generation: 3}
spec:
  selector: {matchLabels: {app: vllm-llama}}
  targetPorts: [{number: 8000}, {number: 8001}]
  endpointPickerRef: ${picker}
---`

const route = (
  backend = "{group: inference.networking.k8s.io, kind: InferencePool, name: llama}",
  parent = "{name: gw, namespace: infra}",
) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: chat, namespace: default}
spec:
  parentRefs: [${parent}]
  rules: [{matches: [{path: {type: PathPrefix, value: /v1}}], backendRefs: [${backend}]}]
---`

const poolOf = (yaml: string): ConfigResource<InferencePoolSpec> => {
  const parsed = parseConfigDocuments("pool.yaml", yaml)
  expect(parsed.issues).toEqual([])
  return parsed.resources[0] as ConfigResource<InferencePoolSpec>
}

/** The picker's Service and the shadow Service, as the registry holds them once the controller wrote it. */
const registry = (withPicker = true): ReadonlyArray<Service> => [
  shadowRegistryService(poolOf(pool()), "cluster.local"),
  ...(withPicker ? [service("llama-epp", "default", [["grpc", 9002, "GRPC"]])] : []),
]

const run = (yaml: string, services = registry(), enabled = true): GatewayApiOutput =>
  convert({ ...fromYaml(yaml), services }, enabled ? { inferenceExtension: true } : {})

interface PoolStatus {
  readonly parents: ReadonlyArray<{
    readonly parentRef: Record<string, string>
    readonly conditions: ReadonlyArray<{ type: string; status: string; reason: string; message: string }>
  }>
}
const poolConditions = (out: GatewayApiOutput) =>
  (statusOf<PoolStatus>(out, "InferencePool", "llama")?.parents ?? []).map((p) => ({
    parent: `${p.parentRef.namespace}/${p.parentRef.name}`,
    conditions: p.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
  }))

describe("the shadow Service of an InferencePool", () => {
  it("is named <pool>-ip-<8 hex of sha256(pool)>, the base cut so the name fits 63 characters", () => {
    expect(inferencePoolServiceName("llama")).toBe(SHADOW)
    const long = "a".repeat(70)
    const name = inferencePoolServiceName(long)
    expect(name).toBe(`${"a".repeat(51)}-ip-${hash8(long)}`)
    expect(name.length).toBe(63)
  })

  it("is headless, selects the pool's pods, maps http-<i> 54321+i to each target port, and names the picker", () => {
    const object = shadowServiceObject(poolOf(pool("{name: llama-epp, port: {number: 9002}, failureMode: FailOpen}")))
    expect(object.metadata).toMatchObject({
      name: SHADOW,
      namespace: "default",
      labels: {
        "mesh.io/inferencepool-name": "llama",
        "mesh.io/inferencepool-extension-service": "llama-epp",
        "mesh.io/inferencepool-extension-port": "9002",
        "mesh.io/inferencepool-extension-failure-mode": "FailOpen",
      },
      ownerReferences: [{ apiVersion: "inference.networking.k8s.io/v1", kind: "InferencePool", name: "llama" }],
    })
    expect(object.spec).toEqual({
      type: "ClusterIP",
      clusterIP: "None",
      selector: { app: "vllm-llama" },
      ports: [
        { name: "http-0", protocol: "TCP", port: 54321, targetPort: 8000 },
        { name: "http-1", protocol: "TCP", port: 54322, targetPort: 8001 },
      ],
    })
  })

  it("the CRD's limits: at least one and at most 8 target ports", () => {
    const bad = (ports: string) =>
      parseConfigDocuments(
        "p.yaml",
        `apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: p, namespace: default}
spec: {selector: {matchLabels: {a: b}}, targetPorts: ${ports}, endpointPickerRef: {name: e, port: {number: 1}}}`,
      ).issues.length
    expect(bad("[]")).toBeGreaterThan(0)
    expect(bad(`[${Array.from({ length: 9 }, (_, i) => `{number: ${8000 + i}}`).join(",")}]`)).toBeGreaterThan(0)
    expect(bad("[{number: 8000}]")).toBe(0)
  })
})

describe("an HTTPRoute backend of kind InferencePool", () => {
  it("goes to the shadow Service's first port; the VirtualService names the picker for that route", () => {
    const out = run(GATEWAY_YAML + pool() + route())
    expect(schemaProblems(out)).toEqual([])
    const vs = out.virtualServices.find((v) => v.spec.http?.some((h) => h.route?.[0]?.destination.host === SHADOW_HOST))
    expect(vs).toBeDefined()
    const http = vs!.spec.http!.find((h) => h.route?.[0]?.destination.host === SHADOW_HOST)!
    expect(http.route).toEqual([{ destination: { host: SHADOW_HOST, port: { number: 54321 } } }])
    expect(endpointPickersOf(vs!.meta.annotations).get(http.name!)).toEqual({
      host: PICKER_HOST,
      port: 9002,
      failureModeAllow: false,
    })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "chat"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
  })

  it("FailOpen lets requests on when the picker fails", () => {
    const out = run(GATEWAY_YAML + pool("{name: llama-epp, port: {number: 9002}, failureMode: FailOpen}") + route())
    const vs = out.virtualServices.find((v) => v.meta.annotations[INFERENCE_ROUTES_ANNOTATION] !== undefined)!
    expect([...endpointPickersOf(vs.meta.annotations).values()]).toEqual([
      { host: PICKER_HOST, port: 9002, failureModeAllow: true },
    ])
  })

  it("with the extension off (the default) it is an unsupported kind and no pool gets status", () => {
    const out = run(GATEWAY_YAML + pool() + route(), registry(), false)
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "chat"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/InvalidKind",
    ])
    expect(out.virtualServices.some((v) => v.meta.annotations[INFERENCE_ROUTES_ANNOTATION] !== undefined)).toBe(false)
    expect(statusOf(out, "InferencePool", "llama")).toBeUndefined()
  })

  it("a pool that does not exist is BackendNotFound, its share answered 500", () => {
    const out = run(GATEWAY_YAML + route("{group: inference.networking.k8s.io, kind: InferencePool, name: nope}"))
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "chat"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/BackendNotFound",
    ])
    const http = out.virtualServices.flatMap((v) => v.spec.http ?? []).find((h) => h.name === "default.chat.0")
    expect(http?.directResponse?.status ?? http?.fault?.abort?.httpStatus).toBe(500)
  })

  it("a pool whose shadow Service the registry lacks is BackendNotFound naming the Service's host", () => {
    const out = run(GATEWAY_YAML + pool() + route(), [service("llama-epp")])
    const status = routeStatusOf(out, "HTTPRoute", "chat")
    expect(parentConditions(status)).toContain("ResolvedRefs=False/BackendNotFound")
    expect(status.parents[0]!.conditions.find((c) => c.type === "ResolvedRefs")?.message).toContain(SHADOW_HOST)
  })

  it("a host name in place of the pool's name is InvalidDestination", () => {
    const out = run(
      GATEWAY_YAML +
        pool() +
        route("{group: inference.networking.k8s.io, kind: InferencePool, name: llama.default.svc}"),
    )
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "chat"))).toContain("ResolvedRefs=False/InvalidDestination")
  })

  it("a pool in another namespace needs a ReferenceGrant (RefNotPermitted)", () => {
    const out = run(
      GATEWAY_YAML +
        pool() +
        route("{group: inference.networking.k8s.io, kind: InferencePool, name: llama, namespace: default}").replace(
          "namespace: default}",
          "namespace: apps}",
        ),
    )
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "chat", "apps"))).toContain(
      "ResolvedRefs=False/RefNotPermitted",
    )
  })
})

describe("the InferencePool's status, per Gateway of an accepted route", () => {
  it("Accepted and ResolvedRefs when the route is accepted and the picker Service exists", () => {
    const out = run(GATEWAY_YAML + pool() + route())
    expect(poolConditions(out)).toEqual([
      { parent: "infra/gw", conditions: ["Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"] },
    ])
    expect(statusOf<PoolStatus>(out, "InferencePool", "llama")!.parents[0]!.parentRef).toEqual({
      group: "gateway.networking.k8s.io",
      kind: "Gateway",
      namespace: "infra",
      name: "gw",
    })
  })

  it("InvalidExtensionRef when the picker Service does not exist", () => {
    const out = run(GATEWAY_YAML + pool() + route(), registry(false))
    expect(poolConditions(out)).toEqual([
      { parent: "infra/gw", conditions: ["Accepted=True/Accepted", "ResolvedRefs=False/InvalidExtensionRef"] },
    ])
  })

  it("InvalidExtensionRef when the picker is not a Service", () => {
    const out = run(GATEWAY_YAML + pool("{kind: Backend, name: llama-epp, port: {number: 9002}}") + route())
    const conditions = statusOf<PoolStatus>(out, "InferencePool", "llama")!.parents[0]!.conditions
    expect(conditions.find((c) => c.type === "ResolvedRefs")).toMatchObject({
      status: "False",
      reason: "InvalidExtensionRef",
      message: "Unsupported ExtensionRef kind Backend",
    })
  })

  it("HTTPRouteNotAccepted when the Gateway does not accept the route", () => {
    const out = run(GATEWAY_YAML + pool() + route(undefined, "{name: gw, namespace: infra, sectionName: nope}"))
    const [parent] = statusOf<PoolStatus>(out, "InferencePool", "llama")!.parents
    expect(parent!.conditions.find((c) => c.type === "Accepted")).toMatchObject({
      status: "False",
      reason: "HTTPRouteNotAccepted",
    })
    expect(parent!.conditions.find((c) => c.type === "Accepted")!.message).toContain(
      "Referenced HTTPRoute default/chat not accepted by Gateway infra/gw",
    )
  })

  it("no status for a pool no route reaches", () => {
    expect(statusOf(run(GATEWAY_YAML + pool()), "InferencePool", "llama")).toBeUndefined()
  })
})

describe("a router serving the route", () => {
  const out = run(GATEWAY_YAML + pool() + route())
  const services = [...meshInput().services, ...registry()]
  const push = meshPush({
    services,
    virtualServices: out.virtualServices,
    proxyConfig: { gateways: out.gateways },
  })
  const router = proxyView("router~10.0.40.1~gw-1.infra~infra.svc.cluster.local", {
    NAMESPACE: "infra",
    LABELS: { "gateway.networking.k8s.io/gateway-name": "gw" },
    INSTANCE_IPS: "10.0.40.1",
    SERVICE_ACCOUNT: "gw",
  })!
  const config = proxyConfig(push, router)

  it("the route goes to the shadow Service's first port with the picker's ext_proc override", () => {
    const routes = config.routes.resources.flatMap((r) =>
      (
        (r as { virtual_hosts?: ReadonlyArray<{ routes: ReadonlyArray<Record<string, unknown>> }> }).virtual_hosts ?? []
      ).flatMap((vh) => vh.routes),
    )
    const chat = routes.find(
      (r) => (r.route as { cluster?: string } | undefined)?.cluster === `outbound|54321||${SHADOW_HOST}`,
    )
    expect(chat).toBeDefined()
    expect((chat!.typed_per_filter_config as Record<string, unknown>)["envoy.filters.http.ext_proc"]).toMatchObject({
      overrides: {
        grpc_service: { envoy_grpc: { cluster_name: `outbound|9002||${PICKER_HOST}` } },
        // FULL_DUPLEX_STREAMED, by number (ext-proc.ts says why).
        processing_mode: { request_body_mode: 4, response_body_mode: 4, request_header_mode: "SEND" },
      },
    })
  })

  it("the listener has the ext_proc filter before fault, CORS and the router", () => {
    const hcm = JSON.stringify(config.listeners.resources)
    const names = [...hcm.matchAll(/"name":"(envoy\.filters\.http\.[a-z_]+)"/g)].map((m) => m[1])
    expect(names.slice(0, 4)).toEqual([
      "envoy.filters.http.ext_proc",
      "envoy.filters.http.fault",
      "envoy.filters.http.cors",
      "envoy.filters.http.router",
    ])
  })

  it("a gateway without pool routes gets no ext_proc filter", () => {
    const plain = convert({ ...fromYaml(GATEWAY_YAML + route("{name: backend, port: 8080}")) })
    const config = proxyConfig(
      meshPush({ virtualServices: plain.virtualServices, proxyConfig: { gateways: plain.gateways } }),
      router,
    )
    expect(JSON.stringify(config.listeners.resources)).not.toContain("ext_proc")
  })
})

describe("the push view in file mode (no orchestrator writes the shadow Service)", () => {
  const lists: Omit<GatewayApiInput, "services" | "namespaceLabels" | "tlsObjects"> = {
    gatewayClasses: [],
    gateways: [],
    httpRoutes: [],
    grpcRoutes: [],
    tcpRoutes: [],
    tlsRoutes: [],
    referenceGrants: [],
    ...fromYaml(GATEWAY_YAML + pool() + route()),
  }
  const picker = [service("llama-epp", "default", [["grpc", 9002, "GRPC"]])]

  it("synthesises the shadow Service the registry lacks, and the route goes to it", () => {
    const out = makeGatewayApiView({ ...defaultGatewayApiSettings, inferenceExtension: true })(lists, picker, new Map())
    expect(out.services.map((s) => [s.hostname, s.ports.map((p) => [p.name, p.port, p.targetPort])])).toEqual([
      [
        SHADOW_HOST,
        [
          ["http-0", 54321, 8000],
          ["http-1", 54322, 8001],
        ],
      ],
    ])
    expect(out.virtualServices.flatMap((v) => v.spec.http ?? []).flatMap((h) => h.route ?? [])).toContainEqual({
      destination: { host: SHADOW_HOST, port: { number: 54321 } },
    })
  })

  it("adds nothing when the registry has the shadow Service, or with the extension off", () => {
    const on = makeGatewayApiView({ ...defaultGatewayApiSettings, inferenceExtension: true })
    expect(on(lists, registry(), new Map()).services).toEqual([])
    expect(makeGatewayApiView(defaultGatewayApiSettings)(lists, picker, new Map()).services).toEqual([])
  })
})
