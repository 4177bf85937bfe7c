/**
 * Test hooks on the request path: a log of every request by orchestrator verb and path, and
 * injected failures (the next N matching requests answer 500, 429 with Retry-After, ...).
 */
import { ApiError, failure } from "./status.js"

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete" | "deletecollection"

export interface RequestRecord {
  readonly verb: Verb
  /** The URL path without the query, e.g. `/api/v1/namespaces/default/pods`. */
  readonly path: string
  readonly query: string
  readonly userAgent: string
  /** The Impersonate-User header, when the client acts as another user. */
  readonly impersonateUser?: string
  /** The Impersonate-Group headers. */
  readonly impersonateGroups?: ReadonlyArray<string>
}

export interface Fault {
  readonly verb?: Verb
  /** A path prefix, or a pattern tested against the path. */
  readonly path?: string | RegExp
  /** How many matching requests fail; default 1. */
  readonly count?: number
  /** 500 (InternalError), 429 (TooManyRequests), 503 (ServiceUnavailable) or 504 (Timeout). */
  readonly status: 500 | 429 | 503 | 504
  readonly retryAfterSeconds?: number
}

const reasons: Record<Fault["status"], string> = {
  500: "InternalError",
  429: "TooManyRequests",
  503: "ServiceUnavailable",
  504: "Timeout",
}

const matches = (f: Fault, r: RequestRecord): boolean =>
  (f.verb === undefined || f.verb === r.verb) &&
  (f.path === undefined || (typeof f.path === "string" ? r.path.startsWith(f.path) : f.path.test(r.path)))

export class Faults {
  readonly log: Array<RequestRecord> = []
  private readonly pending: Array<{ fault: Fault; left: number }> = []

  inject(fault: Fault): void {
    this.pending.push({ fault, left: fault.count ?? 1 })
  }

  /** Records the request and throws the injected failure, if one is due. */
  check(record: RequestRecord): void {
    this.log.push(record)
    const due = this.pending.find((p) => p.left > 0 && matches(p.fault, record))
    if (due === undefined) return
    due.left--
    const { status, retryAfterSeconds } = due.fault
    const retry = retryAfterSeconds ?? (status === 429 ? 1 : undefined)
    const message =
      status === 429
        ? "Too many requests, please try again later."
        : status === 500
          ? "Internal error occurred: injected fault"
          : "the server is currently unable to handle the request"
    throw new ApiError(
      failure(status, reasons[status], message, retry === undefined ? {} : { retryAfterSeconds: retry }),
      retry === undefined ? {} : { "retry-after": String(retry) },
    )
  }

  count(filter: Partial<Pick<RequestRecord, "verb">> & { readonly path?: string | RegExp } = {}): number {
    return this.log.filter((r) => matches({ ...filter, status: 500 }, r)).length
  }
}
