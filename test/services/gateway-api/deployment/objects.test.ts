/**
 * The objects applied for a Gateway: names, owner reference, labels (the Gateway's own unless
 * `spec.infrastructure` gives some; reserved and steering keys dropped), the Service's type and
 * ports (status port, one per distinct listener port), the requested LoadBalancer IP, and the
 * Deployment's pod made by the injector's `gateway` template from the injector values.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  deployment,
  type GatewayObject,
  type ManagedGateway,
  service,
  serviceAccount,
} from "../../../../src/services/gateway-api/deployment/objects.js"
import { proxyPod } from "../../../../src/services/gateway-api/deployment/pod-template.js"
import { defaultInjectionConfig } from "../../../../src/services/injection/config.js"
import { defaultInjectionValues } from "../../../../src/services/injection/values.js"

// biome-ignore lint/suspicious/noExplicitAny: the built objects are walked loosely in assertions
type Obj = Record<string, any>

const gateway = (over: Partial<GatewayObject> = {}, spec: Partial<GatewayObject["spec"]> = {}): GatewayObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  name: "gw",
  namespace: "apps",
  uid: "uid-1",
  labels: { team: "edge" },
  annotations: { "gateway.mesh.io/name-override": "ignored-here", note: "copied" },
  ...over,
  spec: {
    gatewayClassName: "mesh",
    listeners: [
      { name: "http", port: 80, protocol: "HTTP" },
      { name: "HTTPS_Main", port: 443, protocol: "HTTPS" },
      { name: "http-alt", port: 80, protocol: "HTTP", hostname: "alt.example.com" },
    ],
    ...spec,
  },
})

const managed = (g: GatewayObject, kind: "gateway" | "waypoint" = "gateway"): ManagedGateway => ({
  gateway: g,
  kind,
  names:
    kind === "gateway"
      ? { deployment: "gw-mesh", serviceAccount: "gw-mesh" }
      : { deployment: "gw", serviceAccount: "gw" },
})

const injection = (values: Obj = defaultInjectionValues) => ({
  config: defaultInjectionConfig,
  values,
  meshConfig: {},
  revision: "",
})

describe("service", () => {
  it("is a LoadBalancer with the status port and one port per listener port, owned by the Gateway", () => {
    const svc = service(managed(gateway())) as Obj
    expect(svc.metadata.name).toBe("gw-mesh")
    expect(svc.metadata.namespace).toBe("apps")
    expect(svc.metadata.ownerReferences).toEqual([
      { apiVersion: "gateway.networking.k8s.io/v1", kind: "Gateway", name: "gw", uid: "uid-1" },
    ])
    expect(svc.spec.type).toBe("LoadBalancer")
    expect(svc.spec.selector).toEqual({ "gateway.networking.k8s.io/gateway-name": "gw" })
    expect(svc.spec.ports).toEqual([
      { name: "status-port", port: 15021, protocol: "TCP", appProtocol: "tcp" },
      { name: "http", port: 80, protocol: "TCP", appProtocol: "http" },
      { name: "https-main", port: 443, protocol: "TCP", appProtocol: "https" },
    ])
    expect(svc.spec.loadBalancerIP).toBeUndefined()
    expect(svc.metadata.labels).toEqual({ team: "edge", "gateway.networking.k8s.io/gateway-name": "gw" })
    // Annotations steering this controller are not copied; others are.
    expect(svc.metadata.annotations).toEqual({ note: "copied" })
  })

  it("is ClusterIP for a waypoint, and asks for the one IP the spec gives", () => {
    const waypoint = gateway(
      {},
      { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    )
    const svc = service(managed(waypoint, "waypoint")) as Obj
    expect(svc.metadata.name).toBe("gw")
    expect(svc.spec.type).toBe("ClusterIP")
    expect(svc.spec.ports.map((p: Obj) => [p.name, p.port, p.appProtocol])).toEqual([
      ["status-port", 15021, "tcp"],
      ["mesh", 15008, "hbone"],
    ])
    const withIp = service(managed(gateway({}, { addresses: [{ value: "203.0.113.9" }] }))) as Obj
    expect(withIp.spec.loadBalancerIP).toBe("203.0.113.9")
  })

  it("takes the type the Gateway asks for", () => {
    const svc = service(managed(gateway({ annotations: { "networking.mesh.io/service-type": "NodePort" } }))) as Obj
    expect(svc.spec.type).toBe("NodePort")
  })

  it("takes spec.infrastructure over the Gateway's own labels, without reserved keys", () => {
    const g = gateway(
      {},
      {
        infrastructure: {
          labels: { tier: "front", "gateway.networking.k8s.io/gateway-name": "spoof" },
          annotations: { "cloud.example.com/lb": "internal" },
        },
      },
    )
    const svc = service(managed(g)) as Obj
    expect(svc.metadata.labels).toEqual({ tier: "front", "gateway.networking.k8s.io/gateway-name": "gw" })
    expect(svc.metadata.annotations).toEqual({ "cloud.example.com/lb": "internal" })
  })

  it("copies nothing of the Gateway when told not to", () => {
    const svc = service({ ...managed(gateway()), copyLabelsAnnotations: false }) as Obj
    expect(svc.metadata.labels).toEqual({ "gateway.networking.k8s.io/gateway-name": "gw" })
    expect(svc.metadata.annotations).toBeUndefined()
  })
})

describe("serviceAccount", () => {
  it("is named for the Gateway and owned by it", () => {
    const sa = serviceAccount(managed(gateway())) as Obj
    expect(sa.kind).toBe("ServiceAccount")
    expect(sa.metadata.name).toBe("gw-mesh")
    expect(sa.metadata.ownerReferences[0].uid).toBe("uid-1")
  })
})

describe("deployment", () => {
  const build = (m: ManagedGateway, values?: Obj) => {
    const pod = proxyPod(m, injection(values))
    if (Either.isLeft(pod)) throw new Error(pod.left)
    return deployment(m, pod.right.pod, pod.right.resources) as Obj
  }

  it("runs the injector's router proxy, with the image of the injector values", () => {
    const values = {
      ...defaultInjectionValues,
      global: { ...(defaultInjectionValues.global as Obj), hub: "registry.example.com/mesh", tag: "1.2.3" },
    }
    const d = build(managed(gateway()), values)
    expect(d.metadata.name).toBe("gw-mesh")
    expect(d.metadata.ownerReferences[0]).toMatchObject({ kind: "Gateway", name: "gw", uid: "uid-1" })
    expect(d.metadata.labels).toEqual({
      team: "edge",
      "gateway.networking.k8s.io/gateway-name": "gw",
      "gateway.mesh.io/managed": "mesh.io-gateway-controller",
    })
    expect(d.spec.selector).toEqual({ matchLabels: { "gateway.networking.k8s.io/gateway-name": "gw" } })
    const template = d.spec.template
    expect(template.metadata.labels).toMatchObject({
      "sidecar.mesh.io/inject": "false",
      "gateway.networking.k8s.io/gateway-name": "gw",
      "service.mesh.io/canonical-name": "gw-mesh",
    })
    expect(template.spec.serviceAccountName).toBe("gw-mesh")
    const [proxy] = template.spec.containers
    expect(proxy.name).toBe("mesh-proxy")
    expect(proxy.image).toBe("registry.example.com/mesh/proxyv2:1.2.3")
    expect(proxy.args.slice(0, 2)).toEqual(["proxy", "router"])
    expect(proxy.readinessProbe.httpGet).toEqual({ path: "/healthz/ready", port: 15021 })
    expect(proxy.securityContext.runAsNonRoot).toBe(true)
    expect(proxy.resources).toEqual((defaultInjectionValues.global as Obj).proxy.resources)
  })

  it("marks a waypoint's workload as the mesh controller's", () => {
    const waypoint = gateway(
      { name: "gw" },
      { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    )
    const d = build(managed(waypoint, "waypoint"))
    expect(d.metadata.name).toBe("gw")
    expect(d.spec.template.metadata.labels["gateway.mesh.io/managed"]).toBe("mesh.io-mesh-controller")
  })
})
