/** injectPod as a whole: never throws, never mutates, idempotent, customisable, and its status is truthful. */

import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { defaultInjectionConfig, parseInjectionConfig } from "../../../src/services/injection/config.js"
import type { InjectionInput, InjectionOutcome, Json } from "../../../src/services/injection/contract.js"
import { injectPod } from "../../../src/services/injection/inject.js"
import { workloadOwnerOf } from "../../../src/services/injection/owner.js"
import { parseStatus } from "../../../src/services/injection/status.js"
import { defaultInjectionValues } from "../../../src/services/injection/values.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/index.js"

type Pod = {
  metadata: { annotations: Record<string, string>; labels?: Record<string, string> }
  spec: {
    containers: Array<Record<string, unknown> & { name: string }>
    initContainers?: Array<Record<string, unknown> & { name: string }>
    volumes?: Array<{ name: string }>
  }
}

const inputFor = (pod: unknown, extra: Partial<InjectionInput> = {}): InjectionInput => ({
  pod: pod as Json,
  namespace: { name: "apps", labels: { "mesh-injection": "enabled" } },
  config: defaultInjectionConfig,
  values: defaultInjectionValues,
  meshConfig: JSON.parse(JSON.stringify(defaultMeshConfig())),
  revision: "",
  ...extra,
})

const injected = (outcome: InjectionOutcome): Pod => {
  if (outcome._tag !== "Injected") throw new Error(`${outcome._tag}: ${outcome.reason}`)
  return outcome.pod as unknown as Pod
}

const simplePod = (annotations: Record<string, string> = {}) => ({
  metadata: { name: "p", annotations, labels: { app: "a" } },
  spec: { containers: [{ name: "a", image: "a", ports: [{ containerPort: 80 }] }] },
})

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

describe("injectPod", () => {
  it("never throws, whatever the pod looks like", () => {
    const odd: ReadonlyArray<unknown> = [
      {},
      { spec: {} },
      { spec: { containers: "x" } },
      { spec: { containers: [] } },
      { metadata: "x", spec: { containers: [{ name: "a" }] } },
      { metadata: { labels: { a: 1 }, annotations: [1] }, spec: { containers: [7, { name: "a" }] } },
      { metadata: { annotations: { "proxy.mesh.io/config": "{{{" } }, spec: { containers: [{}] } },
      {
        metadata: { annotations: { "inject.mesh.io/templates": "" } },
        spec: { containers: [{ name: "a", readinessProbe: { httpGet: null, tcpSocket: { port: {} } } }], volumes: "v" },
      },
    ]
    for (const pod of odd) {
      const outcome = injectPod(inputFor(pod))
      expect(["Injected", "Skipped", "Refused"]).toContain(outcome._tag)
    }
    expect(injectPod(inputFor({ spec: {} }))).toEqual({ _tag: "Refused", reason: "the pod has no spec.containers" })
  })

  it("does not change its input (the input is frozen here)", () => {
    const pod = deepFreeze(simplePod({ "sidecar.mesh.io/holdApplicationUntilProxyStarts": "true" }))
    expect(injectPod(inputFor(pod))._tag).toBe("Injected")
  })

  it("is idempotent: an injected pod is injected again into the same pod", () => {
    const once = injected(injectPod(inputFor(simplePod())))
    expect(injected(injectPod(inputFor(once)))).toEqual(once)
  })

  it("records exactly what it added, and the revision", () => {
    const original = simplePod()
    const pod = injected(
      injectPod(
        inputFor(original, { revision: "canary", namespace: { name: "apps", labels: { "mesh.io/rev": "canary" } } }),
      ),
    )
    const status = parseStatus(pod.metadata.annotations["sidecar.mesh.io/status"] ?? "")
    const added = (after: ReadonlyArray<{ name: string }> = [], before: ReadonlyArray<{ name: string }> = []) =>
      after.map((c) => c.name).filter((n) => !before.some((b) => b.name === n))
    expect(status).toEqual({
      initContainers: added(pod.spec.initContainers),
      containers: added(pod.spec.containers, original.spec.containers),
      volumes: added(pod.spec.volumes),
      imagePullSecrets: [],
      revision: "canary",
    })
    expect(status?.containers).toEqual(["mesh-proxy"])
  })

  it("merges a declared mesh-proxy container over the injected one", () => {
    const pod = {
      metadata: { name: "p", annotations: {} },
      spec: {
        containers: [
          { name: "a", image: "a" },
          {
            name: "mesh-proxy",
            image: "auto",
            env: [
              { name: "MESH_META_CLUSTER_ID", value: "mine" },
              { name: "EXTRA", value: "1" },
            ],
            resources: { limits: { memory: "2Gi" } },
          },
        ],
      },
    }
    const out = injected(injectPod(inputFor(pod)))
    const proxies = out.spec.containers.filter((c) => c.name === "mesh-proxy")
    expect(proxies).toHaveLength(1)
    const proxy = proxies[0] as unknown as {
      image: string
      env: Array<{ name: string; value?: string }>
      resources: unknown
    }
    expect(proxy.image).toBe("docker.io/mesh/proxyv2:latest")
    expect(proxy.env.filter((e) => e.name === "MESH_META_CLUSTER_ID")).toEqual([
      { name: "MESH_META_CLUSTER_ID", value: "mine" },
    ])
    expect(proxy.env.at(-1)).toEqual({ name: "EXTRA", value: "1" })
    expect(proxy.resources).toEqual({
      requests: { cpu: "100m", memory: "128Mi" },
      limits: { cpu: "2000m", memory: "2Gi" },
    })
    expect(proxy.env.find((e) => e.name === "MESH_META_APP_CONTAINERS")?.value).toBe("a")
    const explicit = injected(
      injectPod(inputFor({ ...pod, spec: { containers: [{ name: "a" }, { name: "mesh-proxy", image: "mine:1" }] } })),
    )
    expect(explicit.spec.containers.find((c) => c.name === "mesh-proxy")?.image).toBe("mine:1")
  })

  it("refusals name the annotation as the pod spells it", () => {
    const refused = (annotations: Record<string, string>) => {
      const outcome = injectPod(inputFor(simplePod(annotations)))
      return outcome._tag === "Refused" ? outcome.reason : outcome._tag
    }
    expect(refused({ "sidecar.istio.io/proxyMemory": "lots" })).toContain("sidecar.istio.io/proxyMemory")
    expect(refused({ "traffic.sidecar.istio.io/includeInboundPorts": "a" })).toContain(
      "traffic.sidecar.istio.io/includeInboundPorts",
    )
    expect(refused({ "proxy.istio.io/config": "statusPort: 70000" })).toContain("proxy.istio.io/config")
    expect(refused({ "sidecar.mesh.io/nativeSidecar": "maybe" })).toContain("sidecar.mesh.io/nativeSidecar")
  })

  it("a skipped pod is not validated (the reference checks the policy first)", () => {
    expect(
      injectPod(inputFor(simplePod({ "sidecar.mesh.io/inject": "false", "sidecar.mesh.io/proxyCPU": "x" })))._tag,
    ).toBe("Skipped")
  })

  it("a ConfigMap template is run; an unknown template name is refused", () => {
    const config = Either.getOrThrow(
      parseInjectionConfig("templates:\n  hello: 'metadata: {labels: {hello: {{ .ObjectMeta.Name | quote }}}}'\n"),
    )
    const outcome = injectPod(inputFor(simplePod({ "inject.mesh.io/templates": "hello" }), { config }))
    expect(
      outcome._tag === "Injected" && (outcome.pod.metadata as { labels: Record<string, string> }).labels.hello,
    ).toBe("p")
    const bad = injectPod(inputFor(simplePod(), { config: { ...defaultInjectionConfig, defaultTemplates: ["nope"] } }))
    expect(bad._tag === "Refused" && bad.reason).toContain("defaultTemplates")
  })

  it("injectedAnnotations win over the pod's own annotations", () => {
    const config = { ...defaultInjectionConfig, injectedAnnotations: { owner: "mesh" } }
    const pod = injected(injectPod(inputFor(simplePod({ owner: "me" }), { config })))
    expect(pod.metadata.annotations.owner).toBe("mesh")
  })
})

describe("workloadOwnerOf", () => {
  const ref = (kind: string, name: string, apiVersion = "x") => [{ kind, name, controller: true, apiVersion, uid: "u" }]
  it("maps ReplicaSet to Deployment, Job to CronJob, and keeps other controllers with their apiVersion", () => {
    expect(
      workloadOwnerOf({
        metadata: { labels: { "pod-template-hash": "abc12" }, ownerReferences: ref("ReplicaSet", "web-abc12") },
      }),
    ).toEqual({ kind: "Deployment", name: "web", apiVersion: "x" })
    expect(workloadOwnerOf({ metadata: { ownerReferences: ref("ReplicaSet", "web-abc12") } })).toEqual({
      kind: "ReplicaSet",
      name: "web-abc12",
      apiVersion: "x",
    })
    expect(workloadOwnerOf({ metadata: { ownerReferences: ref("Job", "backup-28401120") } })).toEqual({
      kind: "CronJob",
      name: "backup",
      apiVersion: "batch/v1",
    })
    // Only a scheduled-time suffix (8 to 10 digits) marks a CronJob's Job.
    expect(workloadOwnerOf({ metadata: { ownerReferences: ref("Job", "backup-7") } }).kind).toBe("Job")
    expect(workloadOwnerOf({ metadata: { ownerReferences: ref("StatefulSet", "db", "apps/v1") } })).toEqual({
      kind: "StatefulSet",
      name: "db",
      apiVersion: "apps/v1",
    })
    expect(workloadOwnerOf({ metadata: { generateName: "loose-" } })).toEqual({
      kind: "Pod",
      name: "loose",
      apiVersion: "v1",
    })
  })
  it("recognises Argo Rollouts and OpenShift DeploymentConfigs", () => {
    expect(
      workloadOwnerOf({
        metadata: { labels: { "rollouts-pod-template-hash": "f00d" }, ownerReferences: ref("ReplicaSet", "web-f00d") },
      }),
    ).toEqual({ kind: "Rollout", name: "web", apiVersion: "v1alpha1" })
    expect(
      workloadOwnerOf({
        metadata: { labels: { deploymentconfig: "web" }, ownerReferences: ref("ReplicationController", "web-4", "v1") },
      }),
    ).toEqual({ kind: "DeploymentConfig", name: "web", apiVersion: "v1" })
  })
})
