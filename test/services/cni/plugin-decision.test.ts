/**
 * Which pods get capture rules: the reference plugin's skip rules, in order, under the mesh's
 * names and the reference's aliases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { decide, podToLookUp } from "../../../src/services/cni/plugin-decision.js"
import { podFacts } from "../../../src/services/cni/plugin-pod.js"
import { injectedPod, proxyContainer } from "./plugin-fixtures.js"

const decision = (pod: ReturnType<typeof injectedPod>) => Either.getOrThrow(decide(podFacts(pod)))
const reasonOf = (pod: ReturnType<typeof injectedPod>) => {
  const d = decision(pod)
  return d._tag === "Skip" ? d.reason : "captured"
}

const CONFIG = { kubernetes: { kubeconfig: "/k", exclude_namespaces: ["mesh-system", "kube-system"] } }

describe("before the lookup", () => {
  it("no pod name or namespace in CNI_ARGS: not an orchestrator pod", () => {
    expect(Either.isLeft(podToLookUp({ args: { K8S_POD_NAME: "p" } }, CONFIG))).toBe(true)
    expect(Either.isLeft(podToLookUp({ args: {} }, CONFIG))).toBe(true)
  })

  it("an excluded namespace is skipped without a lookup", () => {
    const ref = podToLookUp({ args: { K8S_POD_NAME: "p", K8S_POD_NAMESPACE: "kube-system" } }, CONFIG)
    expect(Either.isLeft(ref) && ref.left.reason).toBe("namespace kube-system is excluded")
  })

  it("anything else is looked up", () => {
    expect(podToLookUp({ args: { K8S_POD_NAME: "p", K8S_POD_NAMESPACE: "shop" } }, CONFIG)).toEqual(
      Either.right({ namespace: "shop", name: "p" }),
    )
  })
})

describe("decide", () => {
  it("an injected sidecar pod is captured", () => {
    expect(decision(injectedPod())._tag).toBe("Capture")
  })

  it("a native sidecar (the proxy among the init containers) is captured", () => {
    const pod = injectedPod({
      containers: [{ name: "app" }],
      initContainers: [{ name: "mesh-validation" }, proxyContainer()],
    })
    expect(decision(pod)._tag).toBe("Capture")
  })

  it("the reference's proxy container name counts too", () => {
    expect(decision(injectedPod({ containers: [{ name: "app" }, proxyContainer({ name: "istio-proxy" })] }))._tag).toBe(
      "Capture",
    )
  })

  it("pods that program capture with their own init container are left alone", () => {
    expect(reasonOf(injectedPod({ initContainers: [{ name: "mesh-init" }] }))).toBe(
      "captured by its own mesh-init init container",
    )
    expect(reasonOf(injectedPod({ initContainers: [{ name: "istio-init" }] }))).toContain("istio-init")
  })

  it("no proxy container: skipped, even with the status annotation", () => {
    expect(reasonOf(injectedPod({ containers: [{ name: "app" }] }))).toBe("no injected proxy container")
  })

  it("a proxy with DISABLE_PROXY (or the reference's DISABLE_ENVOY) true is skipped; false is not", () => {
    const withEnv = (name: string, value: string) =>
      injectedPod({ containers: [{ name: "app" }, proxyContainer({ env: [{ name, value }] })] })
    expect(reasonOf(withEnv("DISABLE_PROXY", "true"))).toBe("DISABLE_PROXY=true on mesh-proxy")
    expect(reasonOf(withEnv("DISABLE_ENVOY", "1"))).toBe("DISABLE_ENVOY=true on mesh-proxy")
    expect(reasonOf(withEnv("DISABLE_PROXY", "false"))).toBe("captured")
  })

  it("a gateway (proxy router) is skipped", () => {
    const pod = injectedPod({ containers: [proxyContainer({ args: ["proxy", "router"] })] })
    expect(reasonOf(pod)).toBe("proxy type router, not sidecar")
  })

  it("injection turned off by annotation, alias or label; the label wins over the annotation", () => {
    expect(reasonOf(injectedPod({ annotations: { "sidecar.mesh.io/inject": "false" } }))).toBe(
      "injection disabled by sidecar.mesh.io/inject=false",
    )
    expect(reasonOf(injectedPod({ annotations: { "sidecar.istio.io/inject": "false" } }))).toBe(
      "injection disabled by sidecar.istio.io/inject=false",
    )
    expect(
      reasonOf(
        injectedPod({
          labels: { "sidecar.mesh.io/inject": "true" },
          annotations: { "sidecar.mesh.io/inject": "false" },
        }),
      ),
    ).toBe("captured")
    expect(reasonOf(injectedPod({ labels: { "sidecar.mesh.io/inject": "false" } }))).toContain("injection disabled")
    // Not a boolean: ignored, as the reference does.
    expect(reasonOf(injectedPod({ annotations: { "sidecar.mesh.io/inject": "maybe" } }))).toBe("captured")
  })

  it("no sidecar status annotation: skipped; the reference's spelling counts", () => {
    const pod = injectedPod()
    const { "sidecar.mesh.io/status": status, ...rest } = pod.metadata.annotations!
    const without = { ...pod, metadata: { ...pod.metadata, annotations: rest } }
    expect(reasonOf(without)).toBe("no sidecar.mesh.io/status annotation")
    const aliased = {
      ...pod,
      metadata: { ...pod.metadata, annotations: { ...rest, "sidecar.istio.io/status": status! } },
    }
    expect(reasonOf(aliased)).toBe("captured")
  })

  it("interception mode NONE: nothing to capture", () => {
    expect(reasonOf(injectedPod({ annotations: { "sidecar.mesh.io/interceptionMode": "NONE" } }))).toBe(
      "interception mode NONE",
    )
  })

  it("a bad capture annotation fails with error 101 naming it", () => {
    const result = decide(podFacts(injectedPod({ annotations: { "sidecar.mesh.io/interceptionMode": "BOGUS" } })))
    expect(Either.isLeft(result) && result.left.code).toBe(101)
    expect(Either.isLeft(result) && result.left.details).toContain('sidecar.mesh.io/interceptionMode="BOGUS"')
  })
})
