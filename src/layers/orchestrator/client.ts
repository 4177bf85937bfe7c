/**
 * The OrchestratorClient of one cluster, from `--orchconfig` (a kubeconfig file), a kubeconfig
 * given as text (remote-cluster Secrets) or the in-cluster service account
 * (`ORCHESTRATOR_SERVICE_HOST`/`_PORT`); credentials in ./credentials.ts. Requests and watches
 * share one keep-alive agent with one TLS context, made once (a context per connection costs
 * parsing the CA and key again; the library's Watch opened a connection of its own per watch).
 */
import * as http from "node:http"
import * as https from "node:https"
import * as tls from "node:tls"
import { Effect, Layer, type Scope } from "effect"
import {
  type ListOptions,
  type ListPage,
  OrchestratorClient,
  type OrchestratorClientShape,
  OrchestratorError,
  type OrchestratorRequest,
} from "../../services/orchestrator/client.js"
import { type ListStreamOptions, makeListStream } from "../../services/orchestrator/list-stream.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { type ResourceRef, resourcePath } from "../../services/orchestrator/resources.js"
import {
  describeSource,
  loadCredentials,
  OrchestratorConfigError,
  type OrchestratorSource,
  SERVICE_ACCOUNT_DIRS,
} from "./credentials.js"
import { makeThrottle } from "./throttle.js"
import { openWatchStream } from "./watch-stream.js"

export { OrchestratorConfigError, type OrchestratorSource, SERVICE_ACCOUNT_DIRS }

export interface OrchestratorClientOptions {
  readonly source: OrchestratorSource
  readonly clusterId: string
  /** `--orchestratorApiQPS`; 0 or less = unlimited. */
  readonly qps: number
  /** `--orchestratorApiBurst`. */
  readonly burst: number
  /** Per-request timeout (not for watches); default 60 s. */
  readonly requestTimeoutMillis?: number
  /** Act as another user (meshctl `--as`, `--as-group`, `--as-uid`): the Impersonate-* headers. */
  readonly impersonate?: {
    readonly user: string
    readonly groups: ReadonlyArray<string>
    readonly uid: string
  }
}

/** The Impersonate-* headers of an identity to act as; none for an empty user. */
const impersonationHeaders = (as: OrchestratorClientOptions["impersonate"]): Record<string, string | Array<string>> =>
  as === undefined || as.user === ""
    ? {}
    : {
        "Impersonate-User": as.user,
        ...(as.groups.length > 0 ? { "Impersonate-Group": [...as.groups] } : {}),
        ...(as.uid !== "" ? { "Impersonate-Uid": as.uid } : {}),
      }

const queryString = (query: OrchestratorRequest["query"]): string => {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value))
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

interface StatusBody {
  readonly kind?: string
  readonly reason?: string
  readonly message?: string
  readonly code?: number
}

const errorOf = (status: number, body: string, retryAfter: string | undefined, path: string): OrchestratorError => {
  let parsed: StatusBody = {}
  try {
    parsed = JSON.parse(body) as StatusBody
  } catch {
    // Not a Status (a proxy's page, say): the status line says enough.
  }
  const seconds = retryAfter === undefined ? Number.NaN : Number(retryAfter)
  return new OrchestratorError({
    status,
    reason: parsed.reason ?? http.STATUS_CODES[status] ?? "Unknown",
    message: `${path}: ${parsed.message ?? (body.slice(0, 200) || `HTTP ${status}`)}`,
    ...(Number.isFinite(seconds) ? { retryAfterSeconds: seconds } : {}),
  })
}

const listQuery = (options: ListOptions | undefined) => ({
  labelSelector: options?.labelSelector === "" ? undefined : options?.labelSelector,
  fieldSelector: options?.fieldSelector === "" ? undefined : options?.fieldSelector,
})

export const makeOrchestratorClient = (
  options: OrchestratorClientOptions,
): Effect.Effect<OrchestratorClientShape, OrchestratorConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const credentials = yield* loadCredentials(options.source)
    const server = credentials.server
    const base = yield* Effect.try({
      try: () => new URL(server),
      catch: () =>
        new OrchestratorConfigError({ source: describeSource(options.source), reason: `bad server URL "${server}"` }),
    })
    const secure = base.protocol === "https:"
    const material = credentials.tls
    const agent = secure
      ? new https.Agent({
          keepAlive: true,
          // One context for every connection: otherwise each new socket parses the CA and key again.
          secureContext: yield* Effect.try({
            try: () =>
              tls.createSecureContext({
                ...(material.ca !== undefined ? { ca: material.ca } : {}),
                ...(material.cert !== undefined ? { cert: material.cert } : {}),
                ...(material.key !== undefined ? { key: material.key } : {}),
              }),
            catch: (e) =>
              new OrchestratorConfigError({
                source: describeSource(options.source),
                reason: `bad TLS material: ${String((e as Error | undefined)?.message ?? e)}`,
              }),
          }),
          ...(material.rejectUnauthorized !== undefined ? { rejectUnauthorized: material.rejectUnauthorized } : {}),
          ...(material.servername !== undefined ? { servername: material.servername } : {}),
        })
      : new http.Agent({ keepAlive: true })
    yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
    const throttle = yield* makeThrottle(options.qps, options.burst)
    const timeout = options.requestTimeoutMillis ?? 60_000
    const impersonation = impersonationHeaders(options.impersonate)
    const basePath = base.pathname.replace(/\/+$/, "")

    /** The headers of one request: JSON, the impersonation asked for, then the credentials'. */
    const headersFor = async (): Promise<Record<string, string | Array<string>>> => ({
      Accept: "application/json",
      ...impersonation,
      ...(await credentials.headers()),
    })
    const requestOptions = (
      method: string,
      path: string,
      headers: Record<string, string | Array<string>>,
    ): http.RequestOptions => ({
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[|\]$/g, ""),
      port: base.port,
      path,
      method,
      headers,
      agent,
    })

    /** One request; with `onItem`, the answer is a list read item by item, each shown to `onItem`. */
    const send = (
      request: OrchestratorRequest,
      onItem: ((item: unknown) => void) | undefined,
      listOptions: ListStreamOptions = {},
    ): Effect.Effect<unknown, OrchestratorError> =>
      Effect.async<unknown, OrchestratorError>((resume, signal) => {
        headersFor().then(
          (headers) => {
            const path = `${basePath}${request.path}${queryString(request.query)}`
            const body = request.body === undefined ? undefined : JSON.stringify(request.body)
            if (body !== undefined) {
              headers["Content-Type"] = request.contentType ?? "application/json"
              headers["Content-Length"] = String(Buffer.byteLength(body))
            }
            const req = (secure ? https : http).request(
              { ...requestOptions(request.method, path, headers), signal, timeout },
              (res) => {
                // Decoded as it arrives. A list's items are parsed one by one as each is complete
                // (services/orchestrator/list-stream.ts): 10,000 pods (~30 MB at once from the
                // watch cache) are never held as one text. Anything else is joined by JSON.parse.
                res.setEncoding("utf8")
                const status = res.statusCode ?? 0
                const ok = status >= 200 && status < 300
                const items: Array<unknown> = []
                const listed =
                  onItem !== undefined && ok
                    ? makeListStream((item) => {
                        onItem(item)
                        items.push(item)
                      }, listOptions)
                    : undefined
                let text = ""
                let unreadable = false
                res.on("data", (c: string) => {
                  if (listed === undefined) text += c
                  else if (!unreadable) {
                    try {
                      listed.push(c)
                    } catch {
                      unreadable = true
                    }
                  }
                })
                res.on("error", (e) =>
                  resume(
                    Effect.fail(
                      new OrchestratorError({
                        status: 0,
                        reason: "ResponseError",
                        message: `${request.path}: ${e.message}`,
                      }),
                    ),
                  ),
                )
                res.on("end", () => {
                  if (!ok) {
                    const retry = res.headers["retry-after"]
                    return resume(
                      Effect.fail(errorOf(status, text, Array.isArray(retry) ? retry[0] : retry, request.path)),
                    )
                  }
                  try {
                    if (listed === undefined) resume(Effect.succeed(text === "" ? undefined : JSON.parse(text)))
                    else {
                      if (unreadable) throw new SyntaxError("unreadable list")
                      resume(Effect.succeed({ ...(listed.end() as object), items }))
                    }
                  } catch {
                    resume(
                      Effect.fail(
                        new OrchestratorError({
                          status,
                          reason: "BadResponse",
                          message: `${request.path}: the answer is not JSON`,
                        }),
                      ),
                    )
                  }
                })
              },
            )
            req.on("timeout", () => req.destroy(new Error(`no answer within ${timeout} ms`)))
            req.on("error", (e: NodeJS.ErrnoException) => {
              if (signal.aborted) return
              resume(
                Effect.fail(
                  new OrchestratorError({
                    status: 0,
                    reason: e.code ?? "NetworkError",
                    message: `${request.path}: ${e.message}`,
                  }),
                ),
              )
            })
            req.end(body)
          },
          (e: unknown) =>
            resume(
              Effect.fail(
                new OrchestratorError({ status: 0, reason: "AuthError", message: `credentials: ${String(e)}` }),
              ),
            ),
        )
      })

    const sendThrottled = <A>(
      r: OrchestratorRequest,
      onItem: ((item: unknown) => void) | undefined,
      listOptions: ListStreamOptions = {},
    ) =>
      Effect.zipRight(throttle.take, send(r, onItem, listOptions)).pipe(
        Effect.map((a) => a as A),
        Effect.withSpan("Orchestrator.request", { attributes: { method: r.method, path: r.path } }),
      )
    const request = <A>(r: OrchestratorRequest) => sendThrottled<A>(r, undefined)

    const client: OrchestratorClientShape = {
      clusterId: options.clusterId,
      server,
      request,
      list: <T extends OrchObject>(
        ref: ResourceRef,
        o?: ListOptions & {
          limit?: number
          continue?: string
          resourceVersion?: string
          each?: (item: T) => void
          withoutManagedFields?: boolean
        },
      ) =>
        Effect.map(
          sendThrottled<{ items?: Array<T>; metadata?: { resourceVersion?: string; continue?: string } }>(
            {
              method: "GET",
              path: resourcePath(ref, o?.namespace),
              query: {
                ...listQuery(o),
                limit: o?.limit,
                continue: o?.continue,
                // The API server refuses a resourceVersion together with a continue token.
                resourceVersion: o?.continue === undefined ? o?.resourceVersion : undefined,
              },
            },
            (item) => o?.each?.(item as T),
            { withoutManagedFields: o?.withoutManagedFields === true },
          ),
          (list): ListPage<T> => ({
            items: list?.items ?? [],
            resourceVersion: list?.metadata?.resourceVersion ?? "",
            ...(list?.metadata?.continue ? { continue: list.metadata.continue } : {}),
          }),
        ),
      get: <T extends OrchObject>(ref: ResourceRef, namespace: string | undefined, name: string) =>
        request<T>({ method: "GET", path: resourcePath(ref, namespace, name) }),
      create: <T extends OrchObject>(ref: ResourceRef, object: T) =>
        request<T>({
          method: "POST",
          path: resourcePath(ref, object.metadata.namespace),
          body: withTypeMeta(ref, object),
        }),
      replace: <T extends OrchObject>(ref: ResourceRef, object: T) =>
        request<T>({
          method: "PUT",
          path: resourcePath(ref, object.metadata.namespace, object.metadata.name),
          body: withTypeMeta(ref, object),
        }),
      mergePatch: <T extends OrchObject>(
        ref: ResourceRef,
        namespace: string | undefined,
        name: string,
        patch: unknown,
      ) =>
        request<T>({
          method: "PATCH",
          path: resourcePath(ref, namespace, name),
          body: patch,
          contentType: "application/merge-patch+json",
        }),
      remove: (ref, namespace, name) =>
        Effect.asVoid(request({ method: "DELETE", path: resourcePath(ref, namespace, name) })),
      watch: (ref, o, onEvent, onDone) =>
        Effect.promise(() => headersFor()).pipe(
          Effect.map((headers) => {
            const query = queryString({
              ...listQuery(o),
              watch: true,
              resourceVersion: o.resourceVersion,
              allowWatchBookmarks: o.allowWatchBookmarks ?? true,
              timeoutSeconds: o.timeoutSeconds,
            })
            const path = `${basePath}${resourcePath(ref, o.namespace)}${query}`
            return openWatchStream(
              {
                start: (onResponse) =>
                  (secure ? https : http).request(requestOptions("GET", path, headers), onResponse),
                errorOf: (status, body, retryAfter) => errorOf(status, body, retryAfter, `watch ${ref.plural}`),
                networkError: (e) =>
                  new OrchestratorError({
                    status: 0,
                    reason: e.code ?? e.name ?? "NetworkError",
                    message: `watch ${ref.plural}: ${e.message}`,
                  }),
              },
              onEvent,
              onDone,
            )
          }),
        ),
    }
    return client
  })

const withTypeMeta = <T extends OrchObject>(ref: ResourceRef, object: T): T => ({
  ...object,
  apiVersion: object.apiVersion ?? (ref.group === "" ? ref.version : `${ref.group}/${ref.version}`),
  kind: object.kind ?? ref.kind,
})

/** The client of the local cluster as `OrchestratorClient`. */
export const layer = (options: OrchestratorClientOptions): Layer.Layer<OrchestratorClient, OrchestratorConfigError> =>
  Layer.scoped(OrchestratorClient, makeOrchestratorClient(options))
