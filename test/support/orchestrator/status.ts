/**
 * `kind: Status` objects exactly as the orchestrator API server writes them for failures, and
 * the error that carries one from the verb handlers to the HTTP layer.
 */

export interface StatusDetails {
  readonly name?: string
  readonly group?: string
  readonly kind?: string
  readonly causes?: ReadonlyArray<{ readonly reason?: string; readonly message: string; readonly field?: string }>
  readonly retryAfterSeconds?: number
}

export interface Status {
  readonly kind: "Status"
  readonly apiVersion: "v1"
  readonly metadata: { readonly continue?: string }
  readonly status: "Failure" | "Success"
  readonly message: string
  readonly reason: string
  readonly details?: StatusDetails
  readonly code: number
}

export const failure = (code: number, reason: string, message: string, details?: StatusDetails): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details === undefined ? {} : { details }),
  code,
})

/** A failure the HTTP layer answers with `status.code` and the Status as the body. */
export class ApiError extends Error {
  constructor(
    readonly status: Status,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(status.message)
  }
}

/** What names a resource in messages: `services`, or `leases.coordination.k8s.io`. */
export interface QualifiedResource {
  readonly group: string
  readonly plural: string
}

const qualified = (r: QualifiedResource): string => (r.group === "" ? r.plural : `${r.plural}.${r.group}`)
const details = (r: QualifiedResource, name: string): StatusDetails => ({ name, group: r.group, kind: r.plural })

export const notFound = (r: QualifiedResource, name: string): ApiError =>
  new ApiError(failure(404, "NotFound", `${qualified(r)} "${name}" not found`, details(r, name)))

export const alreadyExists = (r: QualifiedResource, name: string): ApiError =>
  new ApiError(failure(409, "AlreadyExists", `${qualified(r)} "${name}" already exists`, details(r, name)))

export const conflict = (r: QualifiedResource, name: string): ApiError =>
  new ApiError(
    failure(
      409,
      "Conflict",
      `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      details(r, name),
    ),
  )

export const invalid = (kind: string, group: string, name: string, field: string, message: string): ApiError =>
  new ApiError(
    failure(422, "Invalid", `${kind} "${name}" is invalid: ${field}: ${message}`, {
      name,
      group,
      kind,
      causes: [{ reason: "FieldValueInvalid", message, field }],
    }),
  )

export const badRequest = (message: string): ApiError => new ApiError(failure(400, "BadRequest", message))

export const pathNotFound = (): ApiError =>
  new ApiError(failure(404, "NotFound", "the server could not find the requested resource", {}))

export const methodNotAllowed = (): ApiError =>
  new ApiError(failure(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {}))

/** `accepted` lists the media types the resource takes (custom resources take no strategic merge patch). */
export const unsupportedMediaType = (accepted: ReadonlyArray<string>): ApiError =>
  new ApiError(
    failure(
      415,
      "UnsupportedMediaType",
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    ),
  )

export const expired = (message: string, continueToken?: string): ApiError =>
  new ApiError({
    ...failure(410, "Expired", message),
    metadata: continueToken === undefined ? {} : { continue: continueToken },
  })

export const unauthorized = (): ApiError => new ApiError(failure(401, "Unauthorized", "Unauthorized"))
