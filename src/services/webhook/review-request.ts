/**
 * What the webhooks (`/validate`, `/inject`) check of an HTTP request before reading it as an
 * AdmissionReview: the method, the size, a body at all, and its media type. One rule set, so
 * both endpoints refuse the same requests with the same words.
 */

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
