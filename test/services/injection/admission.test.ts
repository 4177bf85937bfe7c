/**
 * The `/inject` admission handler with the real injector: a pod's review comes back as a base64
 * JSONPatch that, applied to the pod as sent, gives the injected pod; skipped pods are allowed
 * unchanged, refused ones denied with the reason; unusable reviews are denied (200, never a
 * server error), other kinds allowed with a warning; HTTP-level problems are HTTP errors.
 */
import { describe, expect, it } from "vitest"
import {
  type AdmissionInputs,
  handleInjectRequest,
  type InjectReply,
  MAX_INJECT_BODY_BYTES,
  reviewPod,
} from "../../../src/services/injection/admission.js"
import {
  defaultInjectionConfig,
  defaultInjectionValues,
  InjectAnnotations,
  type Json,
} from "../../../src/services/injection/index.js"
import { ContainerNames } from "../../../src/services/injection/names.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { applyPatch } from "./json-patch-apply.js"

// biome-ignore lint/suspicious/noExplicitAny: admission answers are walked loosely in assertions
type Loose = any

const namespaces: Record<string, Record<string, string>> = {
  shop: { "mesh-injection": "enabled" },
  plain: {},
}

const inputs = (overrides: Partial<AdmissionInputs> = {}): AdmissionInputs => ({
  config: defaultInjectionConfig,
  values: defaultInjectionValues,
  meshConfig: defaultMeshConfig() as unknown as Json,
  revision: "",
  nativeSidecars: () => false,
  namespaceLabels: (name) => namespaces[name] ?? {},
  ...overrides,
})

const container = (name: string, port: number) => ({
  name,
  image: `example/${name}:1.0`,
  ports: [{ containerPort: port, protocol: "TCP" }],
  readinessProbe: { httpGet: { path: "/ready", port } },
  resources: { requests: { cpu: "100m", memory: "64Mi" } },
})

/** A pod as a Deployment's ReplicaSet creates it (generated name, no namespace in the object). */
const deploymentPod = (annotations: Record<string, string> = {}): Record<string, unknown> => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    generateName: "reviews-v1-7d9f8c6b5-",
    labels: { app: "reviews", "pod-template-hash": "7d9f8c6b5" },
    annotations,
    ownerReferences: [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "reviews-v1-7d9f8c6b5", uid: "u1", controller: true },
    ],
    managedFields: [{ manager: "kube-controller-manager", operation: "Update" }],
  },
  spec: { containers: [container("reviews", 9080), container("cache", 6379)] },
})

const review = (object: unknown, request: Record<string, unknown> = {}, apiVersion = "admission.k8s.io/v1") => ({
  apiVersion,
  kind: "AdmissionReview",
  request: {
    uid: "uid-1",
    kind: { group: "", version: "v1", kind: "Pod" },
    resource: { group: "", version: "v1", resource: "pods" },
    namespace: "shop",
    operation: "CREATE",
    object,
    ...request,
  },
})

const post = (body: string, overrides: Partial<AdmissionInputs> = {}, contentType = "application/json") =>
  handleInjectRequest({ method: "POST", contentType, body }, inputs(overrides))

const responseOf = (reply: InjectReply): Loose => {
  expect(reply.status).toBe(200)
  expect(reply.contentType).toBe("application/json")
  return JSON.parse(reply.body)
}

const patchOf = (response: Loose): ReadonlyArray<{ op: string; path: string; value?: unknown }> =>
  JSON.parse(Buffer.from(response.patch, "base64").toString("utf8"))

describe("/inject admission", () => {
  it("answers an injected pod with a JSONPatch that applies to the pod as sent", () => {
    const pod = deploymentPod()
    const reply = post(JSON.stringify(review(pod)))
    const answer = responseOf(reply)
    expect(answer).toMatchObject({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" })
    expect(answer.response).toMatchObject({ uid: "uid-1", allowed: true, patchType: "JSONPatch" })
    expect(reply.count).toEqual({ _tag: "Injected" })

    const patched: Loose = applyPatch(pod, patchOf(answer.response))
    const names = patched.spec.containers.map((c: Loose) => c.name)
    expect(names).toEqual(expect.arrayContaining(["reviews", "cache", ContainerNames.proxy]))
    expect(patched.metadata.annotations[InjectAnnotations.status]).toBeDefined()
    // What the API server keeps, the patch leaves alone.
    expect(patched.metadata.managedFields).toEqual(pod.metadata && (pod.metadata as Loose).managedFields)
    expect(patched.metadata.generateName).toBe("reviews-v1-7d9f8c6b5-")
    // The namespace is the request's: the workload identity the proxy gets names it.
    expect(JSON.stringify(patched)).toContain("namespaces/shop/deployments/reviews")
  })

  it("answers in the review's own version (v1beta1)", () => {
    const answer = responseOf(post(JSON.stringify(review(deploymentPod(), {}, "admission.k8s.io/v1beta1"))))
    expect(answer.apiVersion).toBe("admission.k8s.io/v1beta1")
    expect(answer.response.allowed).toBe(true)
    expect(answer.response.patchType).toBe("JSONPatch")
  })

  it("allows a skipped pod without a patch (namespace not selected, opted out); an injected pod gets an empty patch", () => {
    const notSelected = post(JSON.stringify(review(deploymentPod(), { namespace: "plain" })))
    expect(responseOf(notSelected).response).toEqual({ uid: "uid-1", allowed: true })
    expect(notSelected.count._tag).toBe("Skipped")

    const optedOut = post(JSON.stringify(review(deploymentPod({ [InjectAnnotations.inject]: "false" }))))
    expect(responseOf(optedOut).response).toEqual({ uid: "uid-1", allowed: true })
    expect(optedOut.count).toMatchObject({ _tag: "Skipped", reason: expect.stringContaining("opted out") })

    // The pod as the patch made it is injected again into itself: nothing to change.
    const first = responseOf(post(JSON.stringify(review(deploymentPod()))))
    const injected = applyPatch(deploymentPod(), patchOf(first.response))
    const again = post(JSON.stringify(review(injected)))
    expect(responseOf(again).response.allowed).toBe(true)
    expect(applyPatch(injected, patchOf(responseOf(again).response))).toEqual(injected)
    expect(again.count._tag).toBe("Injected")
  })

  it("looks up the labels of the pod's own namespace, else the request's", () => {
    const asked: Array<string> = []
    const lookup = (name: string) => {
      asked.push(name)
      return namespaces[name] ?? {}
    }
    const inOwn = { ...deploymentPod(), metadata: { ...(deploymentPod().metadata as object), namespace: "plain" } }
    post(JSON.stringify(review(inOwn, { namespace: "shop" })), { namespaceLabels: lookup })
    post(JSON.stringify(review(deploymentPod(), { namespace: "shop" })), { namespaceLabels: lookup })
    expect(asked).toEqual(["plain", "shop"])
  })

  it("denies a pod the injector refuses, with the reason", () => {
    const reply = post(JSON.stringify(review(deploymentPod({ [InjectAnnotations.proxyCPU]: "lots" }))))
    const response = responseOf(reply).response
    expect(response.allowed).toBe(false)
    expect(response.patch).toBeUndefined()
    expect(response.status.message).toMatch(/^shop\/reviews-v1-7d9f8c6b5-: .*lots/)
    expect(reply.count._tag).toBe("Failed")
  })

  it("denies unusable reviews with a 200 answer, never an HTTP error", () => {
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      ["{", /^could not decode body: /],
      ["[1,2]", /expected an AdmissionReview object/],
      [JSON.stringify({ ...review(deploymentPod()), kind: "Pod" }), /expected kind AdmissionReview/],
      [JSON.stringify({ ...review(deploymentPod()), apiVersion: "admission.k8s.io/v2" }), /apiVersion/],
      [JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }), /has no request/],
      [JSON.stringify(review(deploymentPod(), { uid: "" })), /has no uid/],
      [JSON.stringify(review("not a pod")), /request\.object must be a JSON object/],
      [JSON.stringify(review({ ...deploymentPod(), spec: [] })), /spec must be an object/],
      [JSON.stringify(review({ kind: "Pod", metadata: { name: "empty" } })), /no spec\.containers/],
    ]
    for (const [body, message] of cases) {
      const reply = post(body)
      const response = responseOf(reply).response
      expect(response.allowed, body).toBe(false)
      expect(response.status.message, body).toMatch(message)
      expect(reply.count._tag).toBe("Failed")
    }
  })

  it("echoes the uid of a review it denies when it has one", () => {
    const response = responseOf(post(JSON.stringify({ ...review(deploymentPod()), kind: "Other" }))).response
    expect(response.uid).toBe("uid-1")
  })

  it("allows another kind unchanged with a warning, and other operations than CREATE unchanged", () => {
    const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x" }, spec: {} }
    const other = post(
      JSON.stringify(review(deployment, { kind: { group: "apps", version: "v1", kind: "Deployment" } })),
    )
    const response = responseOf(other).response
    expect(response).toEqual({ uid: "uid-1", allowed: true, warnings: [expect.stringContaining("Deployment")] })
    expect(other.count._tag).toBe("Skipped")
    // The object's own kind counts too, whatever the request says.
    const mislabelled = responseOf(post(JSON.stringify(review(deployment)))).response
    expect(mislabelled).toEqual({ uid: "uid-1", allowed: true, warnings: [expect.stringContaining("Deployment")] })

    const update = post(JSON.stringify(review(deploymentPod(), { operation: "UPDATE" })))
    expect(responseOf(update).response).toEqual({ uid: "uid-1", allowed: true })
    const remove = post(JSON.stringify(review(null, { operation: "DELETE" })))
    expect(responseOf(remove).response).toEqual({ uid: "uid-1", allowed: true })
  })

  it("answers what is not a readable request with HTTP errors, as /validate does", () => {
    const get = handleInjectRequest({ method: "GET", contentType: undefined, body: "" }, inputs())
    expect(get.status).toBe(405)
    expect(post("").status).toBe(400)
    expect(post(JSON.stringify(review(deploymentPod())), {}, "text/plain").status).toBe(415)
    expect(post(JSON.stringify(review(deploymentPod())), {}, "application/json; charset=utf-8").status).toBe(200)
    const large = handleInjectRequest({ method: "POST", contentType: "application/json", body: "too-large" }, inputs())
    expect(large.status).toBe(413)
    expect(large.body).toContain(String(MAX_INJECT_BODY_BYTES))
    for (const reply of [get, large]) expect(reply.count._tag).toBe("Failed")
  })

  it("decides an already-decoded review the same way (reviewPod)", () => {
    const reply = reviewPod(review(deploymentPod()), inputs())
    expect(reply.count).toEqual({ _tag: "Injected" })
  })
})
