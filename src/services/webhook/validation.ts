/**
 * The config validation webhook (`/validate`, legacy `/admitpilot` on `--httpsAddr`): an
 * AdmissionReview in, an AdmissionReview out. The resource is validated by the config model
 * exactly as a config-dir document is, so the orchestrator refuses what the file store would
 * report as invalid.
 *
 * Outcomes follow the reference's validation webhook: CREATE/UPDATE are validated; other
 * operations are allowed and counted as failed with reason `unsupported_operation`; a kind the
 * config model does not know is refused (`unknown_type`), as the reference refuses an
 * unrecognised type; a bad resource is refused (`invalid_resource`). A resource written at a
 * version the reference marks deprecated is allowed with the CRD's deprecation warning in the
 * response's `warnings`, as the orchestrator's API server would add it. A request the server cannot
 * read at all (method, content type, size, JSON, not an AdmissionReview) is an HTTP error
 * counted by status.
 */
import { allKinds, lookupKind } from "../config-model/kinds.js"
import { validateDocument } from "../config-model/parse.js"
import type { ValidationIssue } from "../config-model/resource.js"
import { deprecatedVersionWarning } from "../config-model/version-warnings.js"
import { type ReviewRequest, reviewDepthProblem, reviewRequestProblem } from "./review-request.js"

/** Largest request body read: the reference's limit (6 MiB, twice the orchestrator's own). */
export const MAX_REQUEST_BODY_BYTES = 6 * 1024 * 1024

export const ADMISSION_API_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const

/** Failure reasons of `mesh_validation_failed` (the reference's label values). */
export type FailureReason = "unsupported_operation" | "yaml_decode_error" | "unknown_type" | "invalid_resource"

/** The resource a review is about, as the orchestrator names it in `request.resource`. */
export interface ReviewedResource {
  readonly group: string
  readonly version: string
  readonly resource: string
}

/** What the server counts for one request. */
export type ValidationOutcome =
  | { readonly _tag: "Passed"; readonly resource: ReviewedResource }
  | { readonly _tag: "Failed"; readonly resource: ReviewedResource; readonly reason: FailureReason }
  | { readonly _tag: "HttpError"; readonly status: number }
  | { readonly _tag: "NotCounted" }

export interface WebhookReply {
  readonly status: number
  readonly contentType: string
  readonly body: string
  readonly outcome: ValidationOutcome
  /** Why a resource was refused (for the log). */
  readonly refusal?: string
}

/** The body is "too-large" when it exceeded MAX_REQUEST_BODY_BYTES. */
export type WebhookRequest = ReviewRequest

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const httpError = (status: number, message: string): WebhookReply => ({
  status,
  contentType: "text/plain; charset=utf-8",
  body: `${message}\n`,
  outcome: { _tag: "HttpError", status },
})

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** The label value of a `request.resource` the schema registry does not know. */
export const UNKNOWN_RESOURCE_LABEL = "unknown"

const UNKNOWN_RESOURCE: ReviewedResource = {
  group: UNKNOWN_RESOURCE_LABEL,
  version: UNKNOWN_RESOURCE_LABEL,
  resource: UNKNOWN_RESOURCE_LABEL,
}

/** Whether a registered kind is served as `group/version/resource` (a group alias and any accepted version count). */
const isKnownResource = ({ group, version, resource }: ReviewedResource): boolean =>
  allKinds().some(
    (info) =>
      info.plural === resource &&
      (info.group === group || info.aliasGroups.includes(group)) &&
      info.versions.includes(version),
  )

/**
 * `request.resource` as metric labels. The caller chooses these strings, so only a resource the
 * schema registry knows becomes label values as given; anything else (bogus, missing, oversized)
 * is one `unknown` series, so a caller cannot grow the metrics without bound.
 */
const reviewedResource = (request: Record<string, unknown>): ReviewedResource => {
  const resource = isRecord(request.resource) ? request.resource : {}
  const reviewed = { group: text(resource.group), version: text(resource.version), resource: text(resource.resource) }
  return isKnownResource(reviewed) ? reviewed : UNKNOWN_RESOURCE
}

/** "VirtualService default/reviews" (namespace and name when known). */
const describe = (kind: string, namespace: string, name: string): string =>
  `${kind || "resource"}${name !== "" ? ` ${namespace !== "" ? `${namespace}/` : ""}${name}` : ""}`

const issueText = (issue: ValidationIssue): string => `${issue.path === "" ? "" : `${issue.path}: `}${issue.message}`

/**
 * Decides one AdmissionReview request (already decoded): the `response` fields and the outcome.
 * Exposed for tests; `handleValidate` does the HTTP part.
 */
export const admit = (
  request: Record<string, unknown>,
): {
  readonly allowed: boolean
  readonly message?: string
  /** Shown to the client beside an allowed resource (AdmissionReview `response.warnings`). */
  readonly warnings?: ReadonlyArray<string>
  readonly outcome: ValidationOutcome
} => {
  const resource = reviewedResource(request)
  const operation = text(request.operation)
  if (operation !== "CREATE" && operation !== "UPDATE") {
    return { allowed: true, outcome: { _tag: "Failed", resource, reason: "unsupported_operation" } }
  }
  const object = request.object
  if (!isRecord(object)) {
    return {
      allowed: false,
      message: "cannot decode configuration: request.object must be a JSON object (the resource)",
      outcome: { _tag: "Failed", resource, reason: "yaml_decode_error" },
    }
  }
  const apiVersion = text(object.apiVersion)
  const kind = text(object.kind)
  const metadata = isRecord(object.metadata) ? object.metadata : {}
  // The orchestrator names the namespace in the request; the object may leave it out.
  const namespace = text(metadata.namespace) || text(request.namespace)
  const name = text(metadata.name) || text(request.name)
  const slash = apiVersion.lastIndexOf("/")
  const group = slash < 0 ? "" : apiVersion.slice(0, slash)
  if (apiVersion !== "" && kind !== "" && lookupKind(group, kind) === undefined) {
    return {
      allowed: false,
      message: `unrecognized type ${kind} (apiVersion ${apiVersion})`,
      outcome: { _tag: "Failed", resource, reason: "unknown_type" },
    }
  }
  const document =
    namespace !== "" && text(metadata.namespace) === "" ? { ...object, metadata: { ...metadata, namespace } } : object
  const { issues } = validateDocument("admission", 0, document)
  if (issues.length > 0) {
    return {
      allowed: false,
      message: `configuration is invalid: ${describe(kind, namespace, name)}: ${issues.map(issueText).join("; ")}`,
      outcome: { _tag: "Failed", resource, reason: "invalid_resource" },
    }
  }
  const warning = deprecatedVersionWarning(apiVersion, kind)
  return {
    allowed: true,
    ...(warning !== undefined ? { warnings: [warning] } : {}),
    outcome: { _tag: "Passed", resource },
  }
}

/** One HTTP request to `/validate` or `/admitpilot`. */
export const handleValidate = (req: WebhookRequest): WebhookReply => {
  const problem = reviewRequestProblem(req, MAX_REQUEST_BODY_BYTES)
  if (problem !== undefined) return httpError(problem.status, problem.message)
  const tooDeep = reviewDepthProblem(req.body)
  if (tooDeep !== undefined) return httpError(400, tooDeep)
  let review: unknown
  try {
    review = JSON.parse(req.body)
  } catch (e) {
    return httpError(400, `could not decode body: ${(e as Error).message}`)
  }
  if (!isRecord(review)) return httpError(400, "could not decode body: expected an AdmissionReview object")
  const apiVersion = text(review.apiVersion)
  if (review.kind !== "AdmissionReview" || !(ADMISSION_API_VERSIONS as ReadonlyArray<string>).includes(apiVersion)) {
    return httpError(
      400,
      `could not decode body: expected kind AdmissionReview with apiVersion ${ADMISSION_API_VERSIONS.join(" or ")}, got kind ${JSON.stringify(review.kind ?? "")} apiVersion ${JSON.stringify(review.apiVersion ?? "")}`,
    )
  }
  const request = review.request
  if (!isRecord(request)) return httpError(400, "AdmissionReview has no request")
  const uid = request.uid
  if (typeof uid !== "string" || uid === "") return httpError(400, "AdmissionReview request has no uid")
  const decision = admit(request)
  const response = {
    uid,
    allowed: decision.allowed,
    ...(decision.message !== undefined ? { status: { code: 400, message: decision.message } } : {}),
    ...(decision.warnings !== undefined && decision.warnings.length > 0 ? { warnings: decision.warnings } : {}),
  }
  return {
    status: 200,
    contentType: "application/json",
    body: JSON.stringify({ apiVersion, kind: "AdmissionReview", response }),
    outcome: decision.outcome,
    ...(decision.allowed || decision.message === undefined ? {} : { refusal: decision.message }),
  }
}
