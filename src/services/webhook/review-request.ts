/**
 * What the webhooks (`/validate`, `/inject`) check of an HTTP request before reading it as an
 * AdmissionReview: the method, the size, a body at all, and its media type. One rule set, so
 * both endpoints refuse the same requests with the same words; and the nesting of the body.
 */
import { jsonTextDepthOver } from "../config-model/json-limits.js"
import { MAX_NESTING_DEPTH } from "../config-model/yaml-limits.js"

/** An HTTP request to a webhook: the body, or "too-large" when it exceeded the endpoint's limit. */
export interface ReviewRequest {
  readonly method: string
  /** The Content-Type header, if any. */
  readonly contentType: string | undefined
  readonly body: string | "too-large"
}

/** The HTTP status and message a request is refused with; undefined when it may carry a review. */
export const reviewRequestProblem = (
  req: ReviewRequest,
  limitBytes: number,
): { readonly status: number; readonly message: string } | undefined => {
  if (req.method !== "POST")
    return { status: 405, message: `method ${req.method} not allowed: POST an AdmissionReview` }
  if (req.body === "too-large") return { status: 413, message: `request body too large: limit is ${limitBytes} bytes` }
  if (req.body.length === 0) return { status: 400, message: "no body found" }
  const mediaType = (req.contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType !== "application/json")
    return {
      status: 415,
      message: `invalid Content-Type ${JSON.stringify(req.contentType ?? "")}, want application/json`,
    }
  return undefined
}

/**
 * Deepest nesting of a review body: the AdmissionReview and its request wrap the object, which
 * may nest MAX_NESTING_DEPTH deep as any config document (see config-model/yaml-limits.ts).
 */
export const MAX_REVIEW_DEPTH = MAX_NESTING_DEPTH + 2

/**
 * Why a body cannot be decoded for its nesting (checked on the text, before `JSON.parse` builds
 * it and before validators recurse into it), or undefined.
 */
export const reviewDepthProblem = (body: string): string | undefined => {
  const depth = jsonTextDepthOver(body, MAX_REVIEW_DEPTH)
  return depth === undefined
    ? undefined
    : `could not decode body: JSON nested more than ${MAX_REVIEW_DEPTH} levels deep, over the limit of ${MAX_REVIEW_DEPTH} (an object of at most ${MAX_NESTING_DEPTH} levels in its AdmissionReview)`
}
