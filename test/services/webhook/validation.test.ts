import { describe, expect, it } from "@effect/vitest"
import { handleValidate, MAX_REQUEST_BODY_BYTES, type WebhookReply } from "../../../src/services/webhook/validation.js"

const virtualService = (weights: ReadonlyArray<number>, group = "networking.mesh.io") => ({
  apiVersion: `${group}/v1`,
  kind: "VirtualService",
  metadata: { name: "reviews", namespace: "default" },
  spec: {
    hosts: ["reviews.default.svc.cluster.local"],
    http: [
      {
        route: weights.map((weight, i) => ({
          destination: { host: "reviews.default.svc.cluster.local", subset: `v${i + 1}` },
          weight,
        })),
      },
    ],
  },
})

const review = (
  object: unknown,
  options: { apiVersion?: string; operation?: string; uid?: unknown; namespace?: string } = {},
) => ({
  apiVersion: options.apiVersion ?? "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    ...(options.uid === undefined ? { uid: "e911857d-c318-11e8-bbad-025000000001" } : { uid: options.uid }),
    kind: { group: "networking.mesh.io", version: "v1", kind: "VirtualService" },
    resource: { group: "networking.mesh.io", version: "v1", resource: "virtualservices" },
    operation: options.operation ?? "CREATE",
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    object,
  },
})

const post = (body: unknown, contentType = "application/json"): WebhookReply =>
  handleValidate({ method: "POST", contentType, body: typeof body === "string" ? body : JSON.stringify(body) })

const responseOf = (reply: WebhookReply) => {
  expect(reply.status).toBe(200)
  return JSON.parse(reply.body) as {
    apiVersion: string
    kind: string
    response: { uid: string; allowed: boolean; status?: { message: string }; warnings?: ReadonlyArray<string> }
  }
}

const resource = { group: "networking.mesh.io", version: "v1", resource: "virtualservices" }

describe("validation webhook", () => {
  it("allows a valid VirtualService and counts it as passed", () => {
    const reply = post(review(virtualService([60, 40])))
    const out = responseOf(reply)
    expect(out).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "e911857d-c318-11e8-bbad-025000000001", allowed: true },
    })
    expect(reply.outcome).toEqual({ _tag: "Passed", resource })
  })

  it("allows a resource at a deprecated version and returns the CRD's deprecation warning", () => {
    const grant = (version: string, spec: unknown) => ({
      apiVersion: `gateway.networking.k8s.io/${version}`,
      kind: "ReferenceGrant",
      metadata: { name: "allow-routes", namespace: "backend" },
      spec,
    })
    const spec = {
      from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "frontend" }],
      to: [{ group: "", kind: "Service" }],
    }
    const deprecated = responseOf(post(review(grant("v1alpha2", spec)))).response
    expect(deprecated.allowed).toBe(true)
    expect(deprecated.warnings).toEqual([
      "The v1alpha2 version of ReferenceGrant has been deprecated and will be removed in a future release of the API. Please upgrade to v1beta1.",
    ])
    // The current version: allowed without warnings; an invalid resource is refused, not warned about.
    expect(responseOf(post(review(grant("v1beta1", spec)))).response).toEqual({
      uid: "e911857d-c318-11e8-bbad-025000000001",
      allowed: true,
    })
    const refused = responseOf(post(review(grant("v1alpha2", { from: [], to: "all" })))).response
    expect(refused.allowed).toBe(false)
    expect(refused.warnings).toBeUndefined()
  })

  it("allows Telemetry and WasmPlugin at the reference's v1alpha1 without a warning", () => {
    const telemetry = {
      apiVersion: "telemetry.istio.io/v1alpha1",
      kind: "Telemetry",
      metadata: { name: "mesh-default", namespace: "mesh-system" },
      spec: { accessLogging: [{ providers: [{ name: "envoy" }] }] },
    }
    const wasm = {
      apiVersion: "extensions.istio.io/v1alpha1",
      kind: "WasmPlugin",
      metadata: { name: "basic-auth", namespace: "default" },
      spec: { url: "oci://ghcr.io/example/basic-auth:1.0", phase: "AUTHN" },
    }
    for (const object of [telemetry, wasm]) {
      const out = responseOf(post(review(object))).response
      expect(out.allowed).toBe(true)
      expect(out.warnings).toBeUndefined()
    }
  })

  it("accepts the upstream group alias (networking.istio.io)", () => {
    expect(responseOf(post(review(virtualService([100], "networking.istio.io")))).response.allowed).toBe(true)
  })

  it("refuses an invalid VirtualService naming kind, namespace/name, field path and reason", () => {
    const reply = post(review(virtualService([60, 30])))
    const out = responseOf(reply)
    expect(out.response.allowed).toBe(false)
    expect(out.response.status?.message).toBe(
      "configuration is invalid: VirtualService default/reviews: spec.http[0].route: total destination weight 90 != 100",
    )
    expect(reply.outcome).toEqual({ _tag: "Failed", resource, reason: "invalid_resource" })
    expect(reply.refusal).toBe(out.response.status?.message)
  })

  it("refuses a DestinationRule with a bad subset name", () => {
    const rule = {
      apiVersion: "networking.mesh.io/v1",
      kind: "DestinationRule",
      metadata: { name: "reviews" },
      spec: { host: "reviews", subsets: [{ name: "V1", labels: { version: "v1" } }] },
    }
    // The namespace comes from the request when the object leaves it out.
    const out = responseOf(post(review(rule, { namespace: "prod" })))
    expect(out.response.allowed).toBe(false)
    expect(out.response.status?.message).toBe(
      "configuration is invalid: DestinationRule prod/reviews: spec.subsets[0].name: subset name is invalid: V1",
    )
  })

  it("refuses a kind the mesh does not know, as the reference refuses an unrecognised type", () => {
    const reply = post(review({ apiVersion: "networking.mesh.io/v1", kind: "Frobnicator", metadata: { name: "x" } }))
    const out = responseOf(reply)
    expect(out.response.allowed).toBe(false)
    expect(out.response.status?.message).toBe("unrecognized type Frobnicator (apiVersion networking.mesh.io/v1)")
    expect(reply.outcome).toMatchObject({ _tag: "Failed", reason: "unknown_type" })
  })

  it("labels only resources the schema registry knows: 200 bogus resource names are one `unknown` series", () => {
    const labels = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const bogus = review(virtualService(i % 2 === 0 ? [100] : [50, 20])) as { request: Record<string, unknown> }
      bogus.request.resource = { group: `evil-${i}.example`, version: `v${i}`, resource: `r${i}-${"x".repeat(1000)}` }
      const outcome = post(bogus).outcome
      if (outcome._tag === "Passed" || outcome._tag === "Failed") labels.add(JSON.stringify(outcome.resource))
    }
    expect([...labels]).toEqual([JSON.stringify({ group: "unknown", version: "unknown", resource: "unknown" })])
    // Known resources keep their labels, under a group alias and any accepted version too.
    const known = { group: "networking.istio.io", version: "v1beta1", resource: "destinationrules" }
    const request = review(virtualService([100])) as { request: Record<string, unknown> }
    request.request.resource = known
    expect(post(request).outcome).toEqual({ _tag: "Passed", resource: known })
    // A missing resource is `unknown` as well.
    const none = review(virtualService([100])) as { request: Record<string, unknown> }
    delete none.request.resource
    expect(post(none).outcome).toMatchObject({ resource: { group: "unknown", resource: "unknown" } })
  })

  it("allows DELETE without validating, counted as an unsupported operation", () => {
    const reply = post(review(null, { operation: "DELETE" }))
    expect(responseOf(reply).response).toEqual({ uid: "e911857d-c318-11e8-bbad-025000000001", allowed: true })
    expect(reply.outcome).toMatchObject({ _tag: "Failed", reason: "unsupported_operation" })
  })

  it("answers a v1beta1 review with a v1beta1 review", () => {
    const out = responseOf(post(review(virtualService([100]), { apiVersion: "admission.k8s.io/v1beta1" })))
    expect(out.apiVersion).toBe("admission.k8s.io/v1beta1")
    expect(out.response.allowed).toBe(true)
  })

  it("refuses a request whose object is not a resource", () => {
    const reply = post(review("not an object"))
    expect(responseOf(reply).response.allowed).toBe(false)
    expect(reply.outcome).toMatchObject({ _tag: "Failed", reason: "yaml_decode_error" })
  })

  it.each([
    ["missing uid", review(virtualService([100]), { uid: "" }), 400, "AdmissionReview request has no uid"],
    [
      "no request",
      { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
      400,
      "AdmissionReview has no request",
    ],
    ["malformed JSON", "{not json", 400, "could not decode body"],
    ["not a review", { apiVersion: "v1", kind: "Pod" }, 400, "expected kind AdmissionReview"],
    ["a JSON array", [], 400, "expected an AdmissionReview object"],
    ["empty body", "", 400, "no body found"],
  ])("answers %s with an HTTP error", (_name, body, status, text) => {
    const reply = post(body)
    expect(reply.status).toBe(status)
    expect(reply.body).toContain(text)
    expect(reply.outcome).toEqual({ _tag: "HttpError", status })
  })

  it("answers a wrong content type with 415, a charset parameter being fine", () => {
    expect(post(review(virtualService([100])), "text/yaml").status).toBe(415)
    expect(post(review(virtualService([100])), "application/json; charset=utf-8").status).toBe(200)
    expect(handleValidate({ method: "POST", contentType: undefined, body: "{}" }).outcome).toEqual({
      _tag: "HttpError",
      status: 415,
    })
  })

  it("answers a non-POST with 405 and an oversized body with 413", () => {
    expect(handleValidate({ method: "GET", contentType: undefined, body: "" })).toMatchObject({
      status: 405,
      outcome: { _tag: "HttpError", status: 405 },
    })
    const tooLarge = handleValidate({ method: "POST", contentType: "application/json", body: "too-large" })
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.body).toContain(String(MAX_REQUEST_BODY_BYTES))
  })
})
