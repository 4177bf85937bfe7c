/**
 * The waypoint generator (services/xds/proxygen/waypoint/): which proxies are waypoints, what a
 * waypoint of a `mesh-waypoint` Gateway gets for the services bound to it, and — followed through
 * the generated config by the route evaluator — where a request to a bound service's VIP goes:
 * HBONE terminated on 15008, tunnelled to `main_internal`, its VIP and port's chain, the L7 policy
 * attached to the waypoint, the VirtualService's routes, the service's (subset) cluster and its
 * endpoints through `connect_originate`. Every generated resource passes the proto shape,
 * validate.rules and codec checks the proxy's config is held to.
 */
import { describe, expect, it } from "@effect/vitest"
import type { AmbientInput, AmbientPod } from "../../../../../src/services/ambient/input.js"
import type { ConfigResource } from "../../../../../src/services/config-model/resource.js"
import type { KubernetesGatewaySpec } from "../../../../../src/services/config-model/schemas/gateway-api/types.js"
import type { Endpoint, Service } from "../../../../../src/services/registry/model.js"
import {
  defaultPushContextOptions,
  emptyProxyConfigInput,
  makePushContext,
  type PushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { waypointOf } from "../../../../../src/services/xds/proxygen/waypoint/index.js"
import { destinationRule, input, resource, virtualService } from "../../../../fixtures/xds/mesh.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import {
  evaluateRouteConfig,
  httpConnectionManager,
  selectFilterChain,
} from "../../../../support/proxygen/evaluator.js"
import { arr, type Obj, obj, str } from "../../../../support/proxygen/matchers.js"
import { evaluateRbac } from "../../../../support/proxygen/rbac-eval.js"

const NS = "demo"
const WEB = `web.${NS}.svc.cluster.local`
const DB = `db.${NS}.svc.cluster.local`
const UNBOUND = `other.${NS}.svc.cluster.local`
const EXTERNAL = "api.external.svc.cluster.local"
const VIP = { web: "10.96.0.10", db: "10.96.0.11", other: "10.96.0.12", api: "10.96.0.13" }

const service = (
  hostname: string,
  address: string,
  ports: ReadonlyArray<readonly [number, Service["ports"][number]["protocol"]]>,
  labels: Record<string, string> = {},
  namespace = NS,
): Service => ({
  hostname,
  namespace,
  ports: ports.map(([port, protocol]) => ({
    name: `${protocol.toLowerCase()}-${port}`,
    port,
    protocol,
    targetPort: port + 8000,
  })),
  addresses: [address],
  autoAllocatedAddresses: [],
  resolution: "STATIC",
  location: "MESH_INTERNAL",
  exportTo: ["*"],
  labels,
  registry: "Orchestrator",
  clusterId: "Orchestrator",
  source: `Service/${namespace}/${hostname.split(".")[0]}`,
})

const endpoint = (hostname: string, portName: string, address: string, port: number, version: string): Endpoint => ({
  hostname,
  namespace: NS,
  servicePortName: portName,
  address,
  port,
  labels: { app: hostname.split(".")[0]!, version },
  serviceAccount: "default",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "Orchestrator",
})

const waypointGateway = (name: string, labels: Record<string, string> = {}): ConfigResource<KubernetesGatewaySpec> =>
  ({
    group: "gateway.networking.k8s.io",
    version: "v1",
    kind: "KubernetesGateway",
    meta: { name, namespace: NS, labels, annotations: {} },
    spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
  }) as unknown as ConfigResource<KubernetesGatewaySpec>

const pod = (name: string, ip: string, labels: Record<string, string>): AmbientPod => ({
  uid: name,
  name,
  namespace: NS,
  labels,
  annotations: {},
  serviceAccount: "default",
  node: "node-a",
  addresses: [ip],
  hostNetwork: false,
  ready: true,
  locality: "",
  namedPorts: {},
})

const ambient = (
  gateways: ReadonlyArray<ConfigResource<KubernetesGatewaySpec>>,
  pods: ReadonlyArray<AmbientPod> = [],
): AmbientInput => ({
  settings: { clusterId: "Orchestrator", autoAllowWaypointPolicy: false, systemNamespace: "mesh-system" },
  pods,
  namespaceLabels: new Map([[NS, { "mesh.io/dataplane-mode": "ambient" }]]),
  gateways,
  gatewayClasses: [],
  workloadEntries: [],
})

const USE = { "mesh.io/use-waypoint": "waypoint" }

const authz = (name: string, spec: unknown) => ({
  ...resource("AuthorizationPolicy", name, spec, NS),
  group: "security.mesh.io",
})

const world = (extra: { pods?: ReadonlyArray<AmbientPod>; gatewayLabels?: Record<string, string> } = {}): PushContext =>
  makePushContext(
    {
      ...input({
        services: [
          service(WEB, VIP.web, [[80, "HTTP"]], USE),
          service(
            DB,
            VIP.db,
            [
              [5432, "TCP"],
              [9000, "UDP"],
            ],
            USE,
          ),
          service(UNBOUND, VIP.other, [[80, "HTTP"]]),
          service(EXTERNAL, VIP.api, [[443, "HTTP"]], {}, "external"),
        ],
        endpoints: [
          endpoint(WEB, "http-80", "10.1.0.11", 8080, "v1"),
          endpoint(WEB, "http-80", "10.1.0.12", 8080, "v2"),
          endpoint(DB, "tcp-5432", "10.1.0.20", 5432, "v1"),
          endpoint(UNBOUND, "http-80", "10.1.0.30", 8080, "v1"),
        ],
        virtualServices: [
          virtualService(
            "web",
            {
              hosts: ["web"],
              http: [
                {
                  match: [{ uri: { prefix: "/api" } }],
                  route: [{ destination: { host: EXTERNAL, port: { number: 443 } } }],
                },
                {
                  match: [{ sourceLabels: { app: "sleep" } }],
                  route: [{ destination: { host: "web", subset: "v1" } }],
                },
                {
                  route: [
                    { destination: { host: "web", subset: "v1" }, weight: 90 },
                    { destination: { host: "web", subset: "v2" }, weight: 10 },
                  ],
                },
              ],
            },
            NS,
          ),
        ],
        destinationRules: [
          destinationRule(
            "web",
            {
              host: "web",
              subsets: [
                { name: "v1", labels: { version: "v1" } },
                { name: "v2", labels: { version: "v2" } },
              ],
            },
            NS,
          ),
        ],
      }),
      authorizationPolicies: [
        authz("deny-admin", {
          targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }],
          action: "DENY",
          rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }],
        }),
        authz("selector-only", { selector: { matchLabels: { app: "web" } }, action: "DENY", rules: [{}] }),
      ],
      proxyConfig: emptyProxyConfigInput,
      ambient: ambient([waypointGateway("waypoint", extra.gatewayLabels)], extra.pods),
    },
    defaultPushContextOptions,
  )

const waypointProxy = (type: "router" | "waypoint" = "router", labels?: Record<string, string>): ProxyView =>
  proxyView(`${type}~10.1.0.50~waypoint-6f7d.${NS}~${NS}.svc.cluster.local`, {
    NAMESPACE: NS,
    LABELS: labels ?? {
      "gateway.networking.k8s.io/gateway-name": "waypoint",
      "gateway.mesh.io/managed": "mesh.io-mesh-controller",
    },
  })!

const generate = (push: PushContext, typeUrl: string, proxy = waypointProxy()) =>
  generateForProxy(push, typeUrl, { wildcard: true, names: [], proxy }).resources.map((r) => r.build() as Obj)

const named = (resources: ReadonlyArray<Obj>, name: string): Obj => {
  const found = resources.find((r) => r.name === name)
  if (found === undefined) throw new Error(`no ${name} among ${resources.map((r) => r.name).join(", ")}`)
  return found
}

const filters = (hcm: Obj) => arr(hcm.http_filters)

describe("which proxies are waypoints", () => {
  it("a router the deployment controller made for a waypoint Gateway, or a waypoint node, by its gateway-name label", () => {
    expect(waypointOf(waypointProxy())).toEqual({ name: "waypoint", namespace: NS })
    expect(waypointOf(waypointProxy("waypoint", { "gateway.networking.k8s.io/gateway-name": "waypoint" }))).toEqual({
      name: "waypoint",
      namespace: NS,
    })
    // An ordinary gateway router (no mesh-controller label) is not a waypoint.
    expect(
      waypointOf(waypointProxy("router", { "gateway.networking.k8s.io/gateway-name": "waypoint" })),
    ).toBeUndefined()
  })
})

describe("what a waypoint receives", () => {
  const push = world()
  const listeners = generate(push, TypeUrl.Listener)
  const clusters = generate(push, TypeUrl.Cluster)

  it("three listeners, clusters for the bound services only, no routes by RDS", () => {
    expect(listeners.map((l) => l.name)).toEqual(["connect_terminate", "main_internal", "connect_originate"])
    expect(clusters.map((c) => c.name).sort()).toEqual(
      [
        // The outbound clusters of destinations outside the waypoint's services come with the blackhole.
        "BlackHoleCluster",
        "connect_originate",
        "encap",
        "main_internal",
        `inbound-vip|5432|tcp|${DB}`,
        `inbound-vip|80|http|${WEB}`,
        `inbound-vip|80|http/v1|${WEB}`,
        `inbound-vip|80|http/v2|${WEB}`,
        `outbound|443||${EXTERNAL}`,
      ].sort(),
    )
    expect(generate(push, TypeUrl.Route)).toEqual([])
  })

  it("passes the proto shape, validate.rules and codec checks", () => {
    expectConformant(TypeUrl.Listener, listeners)
    expectConformant(TypeUrl.Cluster, clusters)
  })

  it("terminates HBONE on 15008 with mTLS and sends each CONNECT to main_internal", () => {
    const terminate = named(listeners, "connect_terminate")
    expect(obj(terminate.address)?.socket_address).toEqual({ address: "0.0.0.0", port_value: 15008 })
    const chain = arr(terminate.filter_chains)[0]!
    const tls = obj(obj(chain.transport_socket)?.typed_config)!
    expect(tls.require_client_certificate).toEqual({ value: true })
    const hcm = httpConnectionManager(chain)!
    expect(obj(hcm.http2_protocol_options)?.allow_connect).toBe(true)
    const [route] = arr(arr(obj(hcm.route_config)?.virtual_hosts)[0]?.routes)
    expect(obj(route?.match)?.connect_matcher).toEqual({})
    expect(obj(route?.route)?.cluster).toBe("main_internal")
    expect(obj(named(clusters, "main_internal").load_assignment)).toMatchObject({
      endpoints: [
        {
          lb_endpoints: [
            { endpoint: { address: { envoy_internal_address: { server_listener_name: "main_internal" } } } },
          ],
        },
      ],
    })
  })

  const main = () => named(listeners, "main_internal")
  const chainFor = (ip: string, port: number, http: boolean) =>
    selectFilterChain(main(), {
      destinationPort: port,
      destinationIp: ip,
      transportProtocol: "raw_buffer",
      applicationProtocols: http ? ["http/1.1"] : [],
    })

  it("routes a request for the bound service by the VirtualService, through the policy, to the subset clusters", () => {
    const chain = chainFor(VIP.web, 80, true)!
    expect(chain.name).toBe(`inbound-vip|80|http|${WEB}`)
    const hcm = httpConnectionManager(chain)!
    const routeConfig = obj(hcm.route_config)!
    const split = evaluateRouteConfig(routeConfig, { host: WEB, path: "/" })
    expect(split.kind === "route" ? split.weightedClusters : undefined).toEqual([
      { name: `inbound-vip|80|http/v1|${WEB}`, weight: 90 },
      { name: `inbound-vip|80|http/v2|${WEB}`, weight: 10 },
    ])
    // A destination the waypoint does not serve keeps its outbound cluster (which the waypoint gets).
    const api = evaluateRouteConfig(routeConfig, { host: WEB, path: "/api/x" })
    expect(api.kind === "route" ? api.cluster : undefined).toBe(`outbound|443||${EXTERNAL}`)
    // The route matching on source labels is left out: a waypoint does not know who sent the request.
    expect(arr(arr(routeConfig.virtual_hosts)[0]?.routes)).toHaveLength(2)
    // The DENY policy attached to the waypoint Gateway runs before the router; the selector policy does not apply.
    const rbac = filters(hcm).filter((f) => str(f.name)?.includes("rbac"))
    expect(rbac.map((f) => f.name)).toEqual(["envoy.filters.http.rbac.deny"])
    const deny = obj(rbac[0]!.typed_config)!
    const ctx = (path: string) => ({ destinationPort: 80, http: { path, headers: { ":path": path } } })
    expect(evaluateRbac(deny, ctx("/admin/users")).decision).toBe("deny")
    expect(evaluateRbac(deny, ctx("/")).decision).toBe("allow")
    expect(filters(hcm).at(-1)?.name).toBe("envoy.filters.http.router")
  })

  it("sends each subset's traffic to its workloads' target ports through connect_originate", () => {
    const v1 = named(clusters, `inbound-vip|80|http/v1|${WEB}`)
    const endpoints = arr(arr(obj(v1.load_assignment)?.endpoints)[0]?.lb_endpoints)
    expect(endpoints.map((e) => obj(obj(e.endpoint)?.address)?.envoy_internal_address)).toEqual([
      { server_listener_name: "connect_originate", endpoint_id: "10.1.0.11:8080" },
    ])
    expect(obj(obj(endpoints[0]!.metadata)?.filter_metadata)).toEqual({
      "envoy.filters.listener.original_dst": { fields: { local: { stringValue: "10.1.0.11:8080" } } },
    })
    const originate = named(clusters, "connect_originate")
    expect(originate.type).toBe("ORIGINAL_DST")
    expect(originate.original_dst_lb_config).toEqual({ upstream_port_override: { value: 15008 } })
    const tunnel = arr(arr(named(listeners, "connect_originate").filter_chains)[0]?.filters)[0]
    expect(obj(obj(tunnel?.typed_config)?.tunneling_config)).toEqual({ hostname: "%DOWNSTREAM_LOCAL_ADDRESS%" })
  })

  it("proxies a TCP service port as TCP, skips UDP, and has no chain for a service bound elsewhere", () => {
    const db = chainFor(VIP.db, 5432, false)!
    expect(db.name).toBe(`inbound-vip|5432|tcp|${DB}`)
    expect(obj(arr(db.filters)[0]?.typed_config)?.cluster).toBe(`inbound-vip|5432|tcp|${DB}`)
    expect(chainFor(VIP.db, 9000, false)).toBeUndefined()
    expect(chainFor(VIP.other, 80, true)).toBeUndefined()
  })
})

describe("binding follows the Gateway and the labels", () => {
  it("a service-only waypoint serves no workloads; an all waypoint gets direct chains for its bound pods", () => {
    const pods = [pod("web-1", "10.1.0.11", { app: "web", ...USE })]
    expect(chainsOf(world({ pods }))).not.toContain("direct-http")
    const all = world({ pods, gatewayLabels: { "mesh.io/waypoint-for": "all" } })
    expect(chainsOf(all)).toEqual(expect.arrayContaining(["direct-http", "direct-tcp"]))
    const direct = selectFilterChain(named(generate(all, TypeUrl.Listener), "main_internal"), {
      destinationPort: 8080,
      destinationIp: "10.1.0.11",
      transportProtocol: "raw_buffer",
      applicationProtocols: [],
    })
    expect(obj(arr(direct?.filters)[0]?.typed_config)?.cluster).toBe("encap")
  })

  it("a waypoint without the ambient input (PILOT_ENABLE_AMBIENT off) still terminates HBONE but serves nothing", () => {
    const push = makePushContext(
      { ...input({ services: [service(WEB, VIP.web, [[80, "HTTP"]], USE)] }) },
      defaultPushContextOptions,
    )
    const listeners = generate(push, TypeUrl.Listener)
    expect(listeners.map((l) => l.name)).toEqual(["connect_terminate", "main_internal", "connect_originate"])
    expect(arr(named(listeners, "main_internal").filter_chains)).toEqual([])
  })

  it("another waypoint's proxy gets nothing of this one's services", () => {
    const other = waypointProxy("router", {
      "gateway.networking.k8s.io/gateway-name": "other",
      "gateway.mesh.io/managed": "mesh.io-mesh-controller",
    })
    expect(
      generate(world(), TypeUrl.Cluster, other)
        .map((c) => c.name)
        .sort(),
    ).toEqual(["connect_originate", "encap", "main_internal"])
  })
})

const chainsOf = (push: PushContext): ReadonlyArray<string> =>
  arr(named(generate(push, TypeUrl.Listener), "main_internal").filter_chains).map((c) => String(c.name))
