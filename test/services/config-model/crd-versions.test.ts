import { describe, expect, it } from "vitest"
import {
  crdGroups,
  crdSources,
  planGroup,
  servedPlurals,
  servedVersions,
  sourceApiKind,
} from "../../../src/services/config-model/crd-versions.js"

const groupDoc = (versions: ReadonlyArray<string>, preferred = versions[0]) => ({
  versions: versions.map((version) => ({ groupVersion: `g/${version}`, version })),
  ...(preferred !== undefined ? { preferredVersion: { version: preferred } } : {}),
})
const plurals = (entries: Record<string, ReadonlyArray<string>>) =>
  new Map(Object.entries(entries).map(([v, names]) => [v, new Set(names)] as const))
const watchOf = (plan: ReturnType<typeof planGroup>) => plan.watch.map((w) => `${w.source.info.kind}@${w.version}`)
const GATEWAY = "gateway.networking.k8s.io"

describe("crdSources", () => {
  it("lists every mesh kind under its mesh group and its upstream alias, never orchestrator kinds", () => {
    const sources = crdSources({ gatewayApi: false, ingress: false })
    const vs = sources.filter((s) => s.info.kind === "VirtualService").map((s) => `${s.group} ${s.upstream}`)
    expect(vs).toEqual(["networking.mesh.io false", "networking.istio.io true"])
    expect(sources.some((s) => s.info.kind === "Pod" || s.info.kind === "Service")).toBe(false)
    expect(sources.filter((s) => !s.upstream)).toHaveLength(14)
    expect(sources.filter((s) => s.upstream)).toHaveLength(14)
  })

  it("groups come mesh groups first, each once, then the Gateway API and Ingress unless left out", () => {
    const meshGroups = [
      "networking.mesh.io",
      "security.mesh.io",
      "telemetry.mesh.io",
      "extensions.mesh.io",
      "networking.istio.io",
      "security.istio.io",
      "telemetry.istio.io",
      "extensions.istio.io",
    ]
    expect(crdGroups()).toEqual([...meshGroups, "gateway.networking.k8s.io", "networking.k8s.io"])
    expect(crdGroups({ gatewayApi: false })).toEqual([...meshGroups, "networking.k8s.io"])
    expect(crdGroups({ gatewayApi: false, ingress: false })).toEqual(meshGroups)
  })

  it("the orchestrator's Ingress and IngressClass (networking.k8s.io/v1), unless left out", () => {
    const ingressKinds = (options: Parameters<typeof crdSources>[0]) =>
      crdSources(options)
        .filter((s) => s.group === "networking.k8s.io")
        .map((s) => `${sourceApiKind(s)} ${s.info.version} ${s.info.plural}`)
    expect(ingressKinds(undefined)).toEqual(["Ingress v1 ingresses", "IngressClass v1 ingressclasses"])
    expect(ingressKinds({ ingress: false })).toEqual([])
  })

  it("the Gateway-API kinds: all of them by default (TCPRoute and TLSRoute are v1 since Gateway API v1.6), by their API kind", () => {
    const gatewayKinds = (options: Parameters<typeof crdSources>[0]) =>
      crdSources(options)
        .filter((s) => s.group === GATEWAY)
        .map((s) => `${sourceApiKind(s)}${s.upstream ? " upstream" : ""}`)
    const all = [
      "GatewayClass",
      "Gateway",
      "HTTPRoute",
      "GRPCRoute",
      "TCPRoute",
      "TLSRoute",
      "ReferenceGrant",
      "ListenerSet",
      "BackendTLSPolicy",
    ]
    expect(gatewayKinds(undefined)).toEqual(all)
    expect(gatewayKinds({ gatewayApi: true, alphaGatewayApi: false })).toEqual(all)
    expect(gatewayKinds({ alphaGatewayApi: true })).toEqual(all)
    expect(gatewayKinds({ gatewayApi: false, alphaGatewayApi: true })).toEqual([])
    // The mesh kinds are there whatever the options.
    expect(crdSources({ gatewayApi: false }).length).toBe(crdSources().length - all.length)
    // The experimental group's kinds are alpha only: watched with the alpha switch.
    const experimental = (options: Parameters<typeof crdSources>[0]) =>
      crdSources(options)
        .filter((s) => s.group === "gateway.networking.x-k8s.io")
        .map(sourceApiKind)
    expect(experimental(undefined)).toEqual([])
    expect(experimental({ alphaGatewayApi: true })).toEqual(["XBackendTrafficPolicy"])
  })

  it("InferencePool (inference.networking.k8s.io/v1): only with the inference extension and the Gateway API on", () => {
    const inference = (options: Parameters<typeof crdSources>[0]) =>
      crdSources(options)
        .filter((s) => s.group === "inference.networking.k8s.io")
        .map((s) => `${sourceApiKind(s)} ${s.info.versions.join(",")}`)
    expect(inference(undefined)).toEqual([])
    expect(inference({ inferenceExtension: true })).toEqual(["InferencePool v1"])
    expect(inference({ gatewayApi: false, inferenceExtension: true })).toEqual([])
    expect(crdGroups({ inferenceExtension: true })).toContain("inference.networking.k8s.io")
    expect(crdGroups()).not.toContain("inference.networking.k8s.io")
  })
})

describe("discovery documents", () => {
  it("reads served versions and plurals, skipping subresources and junk", () => {
    expect(servedVersions({ versions: [{ version: "v1" }, {}, { version: "" }, { version: "v1beta1" }] })).toEqual([
      "v1",
      "v1beta1",
    ])
    expect([
      ...servedPlurals({ resources: [{ name: "virtualservices" }, { name: "virtualservices/status" }, {}] }),
    ]).toEqual(["virtualservices"])
    expect(servedPlurals(undefined).size).toBe(0)
  })
})

describe("planGroup", () => {
  it("a group not served: every kind absent, nothing watched", () => {
    const plan = planGroup("security.mesh.io", undefined, new Map())
    expect(plan.watch).toEqual([])
    expect(plan.absent.map((s) => s.info.kind)).toEqual([
      "PeerAuthentication",
      "RequestAuthentication",
      "AuthorizationPolicy",
    ])
  })

  it("watches the preferred version when known, else the newest known serving the kind", () => {
    const plan = planGroup(
      "networking.mesh.io",
      groupDoc(["v1beta1", "v1", "v1alpha3"]),
      plurals({
        v1: ["virtualservices"],
        v1beta1: ["virtualservices", "destinationrules"],
        v1alpha3: ["virtualservices", "destinationrules", "envoyfilters"],
      }),
    )
    expect(watchOf(plan)).toEqual(["DestinationRule@v1beta1", "VirtualService@v1beta1", "EnvoyFilter@v1alpha3"])
    expect(plan.unknownVersions).toEqual([])
    expect(plan.absent.map((s) => s.info.kind)).toContain("ServiceEntry")
  })

  it("a version it does not know is reported and never watched; a kind served only there is not watched", () => {
    const plan = planGroup(
      "networking.mesh.io",
      groupDoc(["v2", "v1"]),
      plurals({ v2: ["virtualservices", "gateways"], v1: ["virtualservices"] }),
    )
    expect(watchOf(plan)).toEqual(["VirtualService@v1"])
    expect(plan.unknownVersions).toEqual(["v2"])
    expect(plan.onlyUnknown.map((o) => `${o.source.info.kind} ${o.versions.join(",")}`)).toEqual(["Gateway v2"])
    expect(plan.absent.map((s) => s.info.kind)).not.toContain("Gateway")
  })

  it("an upstream alias group plans its own kinds, marked upstream", () => {
    const plan = planGroup("networking.istio.io", groupDoc(["v1alpha3"]), plurals({ v1alpha3: ["sidecars"] }))
    expect(plan.watch.map((w) => `${w.source.group} ${w.source.info.kind}@${w.version} ${w.source.upstream}`)).toEqual([
      "networking.istio.io Sidecar@v1alpha3 true",
    ])
  })

  describe("the Gateway-API group", () => {
    /** A cluster with the standard channel CRDs of Gateway API v1.2 (v1 preferred). */
    const standard = plurals({
      v1: ["gatewayclasses", "gateways", "httproutes", "grpcroutes"],
      v1beta1: ["gatewayclasses", "gateways", "httproutes", "referencegrants"],
    })
    const apiWatchOf = (plan: ReturnType<typeof planGroup>) =>
      plan.watch.map((w) => `${sourceApiKind(w.source)}@${w.version}`)

    it("watches each kind at the preferred version when the kind knows it, else at its newest served", () => {
      const plan = planGroup(GATEWAY, groupDoc(["v1", "v1beta1"]), standard)
      expect(apiWatchOf(plan)).toEqual([
        "GatewayClass@v1",
        "Gateway@v1",
        "HTTPRoute@v1",
        "GRPCRoute@v1",
        "ReferenceGrant@v1beta1",
      ])
      expect(plan.watch.find((w) => sourceApiKind(w.source) === "Gateway")?.source.info.kind).toBe("KubernetesGateway")
      expect(plan.watch.find((w) => w.source.info.kind === "GatewayClass")?.source.info.namespaced).toBe(false)
      expect(plan.unknownVersions).toEqual([])
      // A v1.2 standard channel has no TCPRoute, TLSRoute, ListenerSet or BackendTLSPolicy CRD.
      expect(plan.absent.map(sourceApiKind)).toEqual(["TCPRoute", "TLSRoute", "ListenerSet", "BackendTLSPolicy"])
    })

    it("an experimental channel of Gateway API v1.5 (TCPRoute and TLSRoute alpha only) is watched at its alpha versions", () => {
      const experimental = plurals({
        v1: ["gatewayclasses", "gateways", "httproutes", "grpcroutes"],
        v1beta1: ["referencegrants"],
        v1alpha2: ["tcproutes", "tlsroutes", "grpcroutes", "referencegrants"],
        v1alpha3: ["tlsroutes"],
      })
      const doc = groupDoc(["v1", "v1beta1", "v1alpha3", "v1alpha2"])
      const plan = planGroup(GATEWAY, doc, experimental)
      expect(plan.unknownVersions).toEqual([])
      expect(apiWatchOf(plan)).toEqual([
        "GatewayClass@v1",
        "Gateway@v1",
        "HTTPRoute@v1",
        "GRPCRoute@v1",
        "TCPRoute@v1alpha2",
        "TLSRoute@v1alpha3",
        "ReferenceGrant@v1beta1",
      ])
    })

    it("a version no kind of the group knows is reported; a kind served only there is not watched", () => {
      const plan = planGroup(
        GATEWAY,
        groupDoc(["v2", "v1"]),
        plurals({ v2: ["httproutes", "gateways"], v1: ["gateways", "gatewayclasses"] }),
      )
      expect(apiWatchOf(plan)).toEqual(["GatewayClass@v1", "Gateway@v1"])
      expect(plan.unknownVersions).toEqual(["v2"])
      expect(plan.onlyUnknown.map((o) => `${sourceApiKind(o.source)} ${o.versions.join(",")}`)).toEqual([
        "HTTPRoute v2",
      ])
      expect(plan.absent.map(sourceApiKind)).toEqual([
        "GRPCRoute",
        "TCPRoute",
        "TLSRoute",
        "ReferenceGrant",
        "ListenerSet",
        "BackendTLSPolicy",
      ])
    })

    it("a kind served only at a version other kinds of the group know, but it does not, is not watched", () => {
      // A future GRPCRoute v2 beside Gateway v2: v2 is known to neither, so both are reported.
      const plan = planGroup(GATEWAY, groupDoc(["v1", "v2"]), plurals({ v1: ["gateways"], v2: ["grpcroutes"] }))
      expect(apiWatchOf(plan)).toEqual(["Gateway@v1"])
      expect(plan.unknownVersions).toEqual(["v2"])
      expect(plan.onlyUnknown.map((o) => `${sourceApiKind(o.source)} ${o.versions.join(",")}`)).toEqual([
        "GRPCRoute v2",
      ])
    })

    it("left out, the group plans nothing", () => {
      const plan = planGroup(GATEWAY, groupDoc(["v1", "v1beta1"]), standard, { gatewayApi: false })
      expect(plan.watch).toEqual([])
      expect(plan.absent).toEqual([])
    })
  })
})
