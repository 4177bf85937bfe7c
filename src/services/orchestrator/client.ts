/**
 * The OrchestratorClient service: requests to one orchestrator API server (one cluster), with
 * the credentials of its kubeconfig, throttled per `--orchestratorApiQPS`/`--orchestratorApiBurst`.
 * Watches are opened by the informers (src/layers/orchestrator/informer.ts) and are not throttled.
 */
import { Context, Data, type Effect } from "effect"
import type { OrchObject } from "./objects.js"
import type { ResourceRef } from "./resources.js"

/** A failed request: the HTTP status and the server's Status reason/message when there is one. */
export class OrchestratorError extends Data.TaggedError("OrchestratorError")<{
  /** HTTP status; 0 when the server could not be reached. */
  readonly status: number
  /** The Status `reason` (NotFound, Conflict, Expired, ...), or the network error code. */
  readonly reason: string
  readonly message: string
  /** `Retry-After` in seconds, for 429 and 5xx answers that carry one. */
  readonly retryAfterSeconds?: number
}> {
  get notFound(): boolean {
    return this.status === 404
  }
  get conflict(): boolean {
    return this.status === 409
  }
  get gone(): boolean {
    return this.status === 410
  }
}

export interface OrchestratorRequest {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** Absolute API path, e.g. `/api/v1/namespaces/default/pods`. */
  readonly path: string
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>
  readonly body?: unknown
  /** Default `application/json`; merge patches use `application/merge-patch+json`. */
  readonly contentType?: string
}

export interface ListPage<T> {
  readonly items: ReadonlyArray<T>
  readonly resourceVersion: string
  /** Present when more pages follow. */
  readonly continue?: string
}

/** One event of a watch stream as the API server sends it. */
export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"
  readonly object: unknown
}

export interface WatchHandle {
  /** Closes the stream; `onDone` is then called with undefined. */
  readonly close: () => void
}

export interface OrchestratorClientShape {
  /** The cluster this client talks to (`--clusterID` for the local one). */
  readonly clusterId: string
  /** The API server URL. */
  readonly server: string
  readonly request: <A = unknown>(request: OrchestratorRequest) => Effect.Effect<A, OrchestratorError>
  /**
   * One page of a list; `limit`/`continue` page it. `resourceVersion: "0"` asks for any version
   * the API server has at hand (its watch cache, which serves the whole list at once and ignores
   * `limit`) instead of a consistent read; it is not sent with `continue`. `each` sees every
   * item as soon as it is read, before the rest of the answer (to trim it while it is young).
   * `withoutManagedFields` leaves each item's `metadata.managedFields` out (unparsed where the
   * answer's text allows it).
   */
  readonly list: <T extends OrchObject>(
    ref: ResourceRef,
    options?: ListOptions & {
      readonly limit?: number
      readonly continue?: string
      readonly resourceVersion?: string
      readonly each?: (item: T) => void
      readonly withoutManagedFields?: boolean
    },
  ) => Effect.Effect<ListPage<T>, OrchestratorError>
  readonly get: <T extends OrchObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
  ) => Effect.Effect<T, OrchestratorError>
  readonly create: <T extends OrchObject>(ref: ResourceRef, object: T) => Effect.Effect<T, OrchestratorError>
  /** PUT; fails with 409 when `metadata.resourceVersion` is stale. */
  readonly replace: <T extends OrchObject>(ref: ResourceRef, object: T) => Effect.Effect<T, OrchestratorError>
  /** JSON merge patch (RFC 7386). */
  readonly mergePatch: <T extends OrchObject>(
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    patch: unknown,
  ) => Effect.Effect<T, OrchestratorError>
  readonly remove: (
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
  ) => Effect.Effect<void, OrchestratorError>
  /**
   * Opens a watch (not throttled). `onEvent` sees every event in order; `onDone` is called once
   * when the stream ends: undefined for a normal close, the error otherwise.
   */
  readonly watch: (
    ref: ResourceRef,
    options: ListOptions & {
      readonly resourceVersion: string
      readonly allowWatchBookmarks?: boolean
      readonly timeoutSeconds?: number
    },
    onEvent: (event: WatchEvent) => void,
    onDone: (error: OrchestratorError | undefined) => void,
  ) => Effect.Effect<WatchHandle, OrchestratorError>
}

export interface ListOptions {
  /** Restrict to one namespace (namespaced resources). */
  readonly namespace?: string
  readonly labelSelector?: string
  readonly fieldSelector?: string
}

/** The client of the local cluster. */
export class OrchestratorClient extends Context.Tag("mesh/OrchestratorClient")<
  OrchestratorClient,
  OrchestratorClientShape
>() {}
