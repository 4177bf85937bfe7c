/**
 * Issue 40 item 2 on the real orchestrator API server, through the built mesh-discovery
 * (PILOT_ENABLE_AMBIENT): a Gateway of class `mesh-waypoint` gets its Deployment from the
 * deployment controller, and a stand-in proxy connecting as that Deployment's pod (a router
 * with the pod template's labels, as `mesh-agent proxy router` sends them) gets the waypoint's
 * configuration, which it decodes and checks (proto shape and validate.rules; a problem would be
 * a NACK). Our route evaluator then follows it: HBONE on 15008 into `main_internal`, the chain of
 * the Service bound by `mesh.io/use-waypoint` (its cluster IP and port), the VirtualService's
 * route to the DestinationRule subset's cluster, the AuthorizationPolicy attached to the waypoint
 * Gateway denying `/admin`, and that cluster's endpoint: the pod's IP and target port (from the
 * EndpointSlice the test writes, as the orchestrator's controller would).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { meshCrds } from "../../src/services/install/crds.js"
import { discoveryArgs } from "../support/discovery.js"
import { until as waitUntil } from "../support/dns-mesh.js"
import { gatewayApiCrds } from "../support/gateway-api-crds.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { evaluateRouteConfig, httpConnectionManager, selectFilterChain } from "../support/proxygen/evaluator.js"
import { arr, type Obj, obj } from "../support/proxygen/matchers.js"
import { evaluateRbac } from "../support/proxygen/rbac-eval.js"
import { StandInType, startStandInProxy } from "../support/proxygen/stand-in-proxy.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const GATEWAYS = "/apis/gateway.networking.k8s.io/v1"
const POD_IP = "10.3.0.1"

let meshd: Daemon | undefined
let ns = ""
let clusterIp = ""

/** The shared wait, with meshd's last output in the error to say why. */
const until = <A>(what: string, check: () => Promise<A | undefined>, timeoutMillis = 60_000): Promise<A> =>
  waitUntil(what, check, timeoutMillis).catch((e: Error) => {
    throw new Error(`${e.message}\n--- meshd ---\n${meshd?.output().slice(-4_000) ?? ""}`)
  })

beforeAll(async () => {
  if (real.skip) return
  const orch = real.get()
  const meshKinds = new Set(["VirtualService", "DestinationRule", "AuthorizationPolicy"])
  // A CRD as the API server takes it: its name, and its kind for picking the mesh ones.
  type Crd = {
    readonly metadata: { readonly name: string }
    readonly spec: { readonly names: { readonly kind: string } }
  }
  const crds = [...gatewayApiCrds(), ...meshCrds({})] as ReadonlyArray<unknown> as ReadonlyArray<Crd>
  const wanted = crds.filter((c) => c.metadata.name.includes("gateway.networking") || meshKinds.has(c.spec.names.kind))
  for (const crd of wanted)
    await orch.ok("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { body: crd })
  for (const crd of wanted)
    await until(`${crd.metadata.name} established`, async () => {
      const got = await orch.ok("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`)
      return got.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === "Established" && c.status === "True",
      )
        ? true
        : undefined
    })
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "mesh-system" } },
  })
  ns = await orch.namespace("waypoint", { "mesh.io/dataplane-mode": "ambient" })
  const created = await orch.ok("POST", `/api/v1/namespaces/${ns}/pods`, {
    body: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", labels: { app: "web", version: "v1" } },
      spec: { nodeName: "node-1", containers: [{ name: "c", image: "example/c:1" }] },
    },
  })
  await orch.ok("PUT", `/api/v1/namespaces/${ns}/pods/web-1/status`, {
    body: {
      ...created,
      status: {
        phase: "Running",
        podIP: POD_IP,
        podIPs: [{ ip: POD_IP }],
        conditions: [{ type: "Ready", status: "True" }],
      },
    },
  })
  clusterIp = (
    await orch.ok("POST", `/api/v1/namespaces/${ns}/services`, {
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", labels: { "mesh.io/use-waypoint": "waypoint" } },
        spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
      },
    })
  ).spec.clusterIP
  // What the EndpointSlice controller would write (this API server runs without a controller-manager).
  await orch.ok("POST", `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, {
    body: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-1", labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      endpoints: [
        {
          addresses: [POD_IP],
          conditions: { ready: true },
          nodeName: "node-1",
          targetRef: { kind: "Pod", name: "web-1", namespace: ns },
        },
      ],
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
    },
  })
  await orch.ok("POST", `${GATEWAYS}/namespaces/${ns}/gateways`, {
    body: {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "waypoint" },
      spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    },
  })
  const mesh = (group: string, plural: string, kind: string, name: string, spec: unknown) =>
    orch.ok("POST", `/apis/${group}/v1/namespaces/${ns}/${plural}`, {
      body: { apiVersion: `${group}/v1`, kind, metadata: { name }, spec },
    })
  await mesh("networking.mesh.io", "destinationrules", "DestinationRule", "web", {
    host: "web",
    subsets: [{ name: "v1", labels: { version: "v1" } }],
  })
  await mesh("networking.mesh.io", "virtualservices", "VirtualService", "web", {
    hosts: ["web"],
    http: [{ route: [{ destination: { host: "web", subset: "v1" } }] }],
  })
  await mesh("security.mesh.io", "authorizationpolicies", "AuthorizationPolicy", "deny-admin", {
    targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "waypoint" }],
    action: "DENY",
    rules: [{ to: [{ operation: { paths: ["/admin*"] } }] }],
  })

  const args = discoveryArgs("", { "--registries": "Orchestrator", "--orchconfig": orch.kubeconfig }).filter(
    (a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir",
  )
  meshd = startDaemon("mesh-discovery", args, {
    POD_NAME: "meshd-waypoint",
    POD_NAMESPACE: "mesh-system",
    PILOT_ENABLE_AMBIENT: "true",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "200ms",
  })
  await meshd.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000)
}, 180_000)

afterAll(async () => {
  await meshd?.stop("SIGKILL")
})

const named = (resources: ReadonlyArray<Obj>, name: string): Obj | undefined => resources.find((r) => r.name === name)

describe.skipIf(real.skip)("a waypoint Gateway on the real orchestrator API server", () => {
  it("is deployed, and its proxy gets configuration the route evaluator follows to the bound service's pod", async () => {
    const orch = real.get()
    const deployment = await until("the waypoint's Deployment", async () => {
      const got = await orch.api("GET", `/apis/apps/v1/namespaces/${ns}/deployments/waypoint`)
      return got.status === 200 ? got.body : undefined
    })
    const labels = deployment.spec.template.metadata.labels as Record<string, string>
    expect(labels).toMatchObject({
      "gateway.networking.k8s.io/gateway-name": "waypoint",
      "sidecar.mesh.io/inject": "false",
    })

    const ads = (await meshd!.waitFor(/ADS server listening on ([\d.]+:\d+)/))[1]!
    const proxy = startStandInProxy({
      address: ads,
      node: {
        id: `router~10.3.0.9~waypoint-5d8f-x2x.${ns}~${ns}.svc.cluster.local`,
        metadata: { NAMESPACE: ns, LABELS: labels },
      },
    })
    const host = `web.${ns}.svc.cluster.local`
    try {
      await proxy.waitFor(
        (p) =>
          p.names(StandInType.listener).includes("main_internal") &&
          arr(named(p.resources(StandInType.listener), "main_internal")?.filter_chains).length > 0 &&
          arr(
            arr(
              obj(named(p.resources(StandInType.cluster), `inbound-vip|80|http/v1|${host}`)?.load_assignment)
                ?.endpoints,
            )[0]?.lb_endpoints,
          ).length > 0,
        90_000,
      )
      expect(proxy.nacks).toEqual([])
      const listeners = proxy.resources(StandInType.listener)
      const clusters = proxy.resources(StandInType.cluster)
      expect(listeners.map((l) => l.name).sort()).toEqual(["connect_originate", "connect_terminate", "main_internal"])

      // HBONE: CONNECT on 15008 goes to main_internal.
      const terminate = named(listeners, "connect_terminate")!
      expect(obj(obj(terminate.address)?.socket_address)?.port_value).toBe(15008)
      const connect = arr(
        arr(obj(httpConnectionManager(arr(terminate.filter_chains)[0]!)!.route_config)?.virtual_hosts)[0]?.routes,
      )[0]
      expect(obj(connect?.route)?.cluster).toBe("main_internal")

      // The inner stream to the Service's cluster IP and port: its chain, policy and route.
      const chain = selectFilterChain(named(listeners, "main_internal")!, {
        destinationPort: 80,
        destinationIp: clusterIp,
        transportProtocol: "raw_buffer",
        applicationProtocols: ["http/1.1"],
      })!
      expect(chain.name).toBe(`inbound-vip|80|http|${host}`)
      const hcm = httpConnectionManager(chain)!
      const routed = evaluateRouteConfig(obj(hcm.route_config)!, { host, path: "/" })
      expect(routed.kind === "route" ? routed.cluster : routed.kind).toBe(`inbound-vip|80|http/v1|${host}`)
      const deny = arr(hcm.http_filters).find((f) => f.name === "envoy.filters.http.rbac.deny")
      const request = (path: string) => ({ destinationPort: 80, http: { path, headers: { ":path": path } } })
      expect(evaluateRbac(obj(deny?.typed_config)!, request("/admin/x")).decision).toBe("deny")
      expect(evaluateRbac(obj(deny?.typed_config)!, request("/")).decision).toBe("allow")

      // The subset's cluster reaches the pod's target port through connect_originate.
      const cluster = named(clusters, `inbound-vip|80|http/v1|${host}`)!
      const endpoints = arr(arr(obj(cluster.load_assignment)?.endpoints)[0]?.lb_endpoints)
      expect(endpoints.map((e) => obj(obj(e.endpoint)?.address)?.envoy_internal_address)).toEqual([
        { server_listener_name: "connect_originate", endpoint_id: `${POD_IP}:8080` },
      ])
      console.info(
        `waypoint received: ${listeners.length} listeners (${arr(named(listeners, "main_internal")?.filter_chains).length} main_internal chains), ` +
          `${clusters.length} clusters (${clusters.map((c) => c.name).join(", ")}), ${proxy.acks} responses ACKed`,
      )
    } finally {
      proxy.close()
    }
  }, 240_000)
})
