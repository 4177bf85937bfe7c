/**
 * The sidecar injection webhook (`/inject` on `--httpsAddr`): an AdmissionReview for a pod in, an
 * AdmissionReview out — the injected pod as a base64 JSONPatch, or the pod as it is.
 *
 * As in the reference, a request the server can read but whose review is unusable (bad JSON, not
 * an AdmissionReview, no request or uid, an object that is not a pod) is answered 200 with
 * `allowed: false` and the reason, never a server error; a review about some other kind than a
 * Pod is allowed unchanged with a warning. Only what cannot be read as a request at all (method,
 * size, content type, empty body) is an HTTP error, exactly as on `/validate`.
 */
import { type ReviewRequest, reviewDepthProblem, reviewRequestProblem } from "../webhook/review-request.js"
import type { InjectionConfig, InjectionInput, InjectionValues, Json } from "./contract.js"
import { injectPod, jsonPatch } from "./index.js"

/** Largest request body read: the reference's limit (6 MiB), as on `/validate`. */
export const MAX_INJECT_BODY_BYTES = 6 * 1024 * 1024

const ADMISSION_V1 = "admission.k8s.io/v1"
const ADMISSION_VERSIONS: ReadonlyArray<string> = [ADMISSION_V1, "admission.k8s.io/v1beta1"]

/** What the webhook knows besides the review: the injector's inputs of the moment. */
export interface AdmissionInputs {
  readonly config: InjectionConfig
  readonly values: InjectionValues
  readonly meshConfig: Json
  /** `REVISION` */
  readonly revision: string
  /** `ENABLE_NATIVE_SIDECARS` resolved for a pod by its `spec.nodeName` ("" when unscheduled): native-sidecars.ts. */
  readonly nativeSidecars: (nodeName: string) => boolean
  /** `COMPLIANCE_POLICY` of mesh-discovery, written into injected proxies ("" or absent: none). */
  readonly compliancePolicy?: string
  /** The labels of a namespace (empty when unknown). */
  readonly namespaceLabels: (namespace: string) => Readonly<Record<string, string>>
}

/**
 * How one request counts in the `sidecar_injection_*` metrics: every request is counted in
 * `_requests_total`, then as injected (`_success_total`), skipped (`_skip_total`) or failed
 * (`_failure_total`: refused pods, unusable reviews and HTTP errors alike).
 */
export type InjectionCount =
  | { readonly _tag: "Injected" }
  | { readonly _tag: "Skipped"; readonly reason: string }
  | { readonly _tag: "Failed"; readonly reason: string }

/** The body is "too-large" when it exceeded MAX_INJECT_BODY_BYTES. */
export type InjectRequest = ReviewRequest

export interface InjectReply {
  readonly status: number
  readonly contentType: string
  readonly body: string
  readonly count: InjectionCount
}

/** The `response` of an AdmissionReview (admission.k8s.io/v1 field names). */
export interface AdmissionResponse {
  readonly uid: string
  readonly allowed: boolean
  readonly patchType?: "JSONPatch"
  /** The JSONPatch, base64. */
  readonly patch?: string
  readonly warnings?: ReadonlyArray<string>
  readonly status?: { readonly message: string }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string => (typeof value === "string" ? value : "")

const httpError = (status: number, message: string): InjectReply => ({
  status,
  contentType: "text/plain; charset=utf-8",
  body: `${message}\n`,
  count: { _tag: "Failed", reason: message },
})

const answer = (apiVersion: string, response: AdmissionResponse, count: InjectionCount): InjectReply => ({
  status: 200,
  contentType: "application/json",
  body: JSON.stringify({ apiVersion, kind: "AdmissionReview", response }),
  count,
})

const denied = (apiVersion: string, uid: string, message: string): InjectReply =>
  answer(apiVersion, { uid, allowed: false, status: { message } }, { _tag: "Failed", reason: message })

/** "default/reviews-v1-" (the pod's namespace and its name or generated-name prefix). */
const describePod = (metadata: Record<string, unknown>, namespace: string): string =>
  `${namespace}/${text(metadata.name) || text(metadata.generateName) || "<unnamed>"}`

/**
 * Decides one decoded AdmissionReview (exposed for tests); `handleInjectRequest`
 * does the HTTP part.
 */
export const reviewPod = (review: unknown, inputs: AdmissionInputs): InjectReply => {
  if (!isRecord(review)) return denied(ADMISSION_V1, "", "could not decode body: expected an AdmissionReview object")
  const givenVersion = text(review.apiVersion)
  // Answer in the version asked, when it is one the API server speaks.
  const apiVersion = ADMISSION_VERSIONS.includes(givenVersion) ? givenVersion : ADMISSION_V1
  const request = isRecord(review.request) ? review.request : undefined
  const uid = request !== undefined ? text(request.uid) : ""
  if (review.kind !== "AdmissionReview" || !ADMISSION_VERSIONS.includes(givenVersion)) {
    return denied(
      apiVersion,
      uid,
      `could not decode body: expected kind AdmissionReview with apiVersion ${ADMISSION_VERSIONS.join(" or ")}, got kind ${JSON.stringify(review.kind ?? "")} apiVersion ${JSON.stringify(review.apiVersion ?? "")}`,
    )
  }
  if (request === undefined) return denied(apiVersion, "", "AdmissionReview has no request")
  if (uid === "") return denied(apiVersion, "", "AdmissionReview request has no uid")

  const requestKind = isRecord(request.kind) ? text(request.kind.kind) : ""
  const object = request.object
  const objectKind = isRecord(object) ? text(object.kind) : ""
  // Either naming another kind is enough: the pod model would misread that object.
  const kind = [requestKind, objectKind].find((k) => k !== "" && k !== "Pod")
  if (kind !== undefined) {
    const warning = `sidecar injection applies to Pods only; ${kind} admitted unchanged`
    return answer(apiVersion, { uid, allowed: true, warnings: [warning] }, { _tag: "Skipped", reason: warning })
  }
  const operation = text(request.operation)
  if (operation !== "" && operation !== "CREATE") {
    const reason = `operation ${operation} is not injected`
    return answer(apiVersion, { uid, allowed: true }, { _tag: "Skipped", reason })
  }
  if (!isRecord(object)) return denied(apiVersion, uid, "could not decode pod: request.object must be a JSON object")
  if (object.spec !== undefined && !isRecord(object.spec)) {
    return denied(apiVersion, uid, "could not decode pod: spec must be an object")
  }
  if (object.metadata !== undefined && !isRecord(object.metadata)) {
    return denied(apiVersion, uid, "could not decode pod: metadata must be an object")
  }

  // The pod as the injector sees it: the request's namespace when the pod names none (the API
  // server fills it in later), and without managedFields (large, and nothing injection reads).
  const metadata: Record<string, unknown> = { ...(isRecord(object.metadata) ? object.metadata : {}) }
  const namespace = text(metadata.namespace) || text(request.namespace) || "default"
  metadata.namespace = namespace
  delete metadata.managedFields
  const pod: Json = { ...object, metadata }
  const input: InjectionInput = {
    pod,
    namespace: { name: namespace, labels: inputs.namespaceLabels(namespace) },
    config: inputs.config,
    values: inputs.values,
    meshConfig: inputs.meshConfig,
    revision: inputs.revision,
    nativeSidecars: inputs.nativeSidecars(isRecord(object.spec) ? text(object.spec.nodeName) : ""),
    ...(inputs.compliancePolicy === undefined ? {} : { compliancePolicy: inputs.compliancePolicy }),
    // The injector derives the workload from the pod's owner references.
    mode: "webhook",
  }
  const outcome = injectPod(input)
  switch (outcome._tag) {
    case "Refused":
      return denied(apiVersion, uid, `${describePod(metadata, namespace)}: ${outcome.reason}`)
    case "Skipped":
      return answer(
        apiVersion,
        { uid, allowed: true, ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}) },
        { _tag: "Skipped", reason: outcome.reason },
      )
    case "Injected": {
      // The patch is taken against the pod the injector saw: it only differs from the request's
      // object in fields the patch then leaves alone (namespace, managedFields).
      const patch = Buffer.from(JSON.stringify(jsonPatch(pod, outcome.pod)), "utf8").toString("base64")
      return answer(
        apiVersion,
        {
          uid,
          allowed: true,
          patchType: "JSONPatch",
          patch,
          ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
        },
        { _tag: "Injected" },
      )
    }
  }
}

/** One HTTP request to `/inject`. */
export const handleInjectRequest = (req: InjectRequest, inputs: AdmissionInputs): InjectReply => {
  const problem = reviewRequestProblem(req, MAX_INJECT_BODY_BYTES)
  if (problem !== undefined) return httpError(problem.status, problem.message)
  const tooDeep = reviewDepthProblem(req.body)
  if (tooDeep !== undefined) return denied(ADMISSION_V1, "", tooDeep)
  let review: unknown
  try {
    review = JSON.parse(req.body)
  } catch (e) {
    return denied(ADMISSION_V1, "", `could not decode body: ${(e as Error).message}`)
  }
  return reviewPod(review, inputs)
}
