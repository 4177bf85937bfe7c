/**
 * The OrchestratorClient of one cluster, from `--orchconfig` (a kubeconfig file), a kubeconfig
 * given as text (remote-cluster Secrets) or the in-cluster service account
 * (`ORCHESTRATOR_SERVICE_HOST`/`_PORT`). Credentials, TLS material and token refresh come from
 * `@kubernetes/client-node`'s KubeConfig; requests reuse one keep-alive agent (the library makes a
 * new agent per call, which costs a TLS handshake per request); watches use the library's Watch.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import { createRequire } from "node:module"
import type { KubeConfig } from "@kubernetes/client-node"
import { Data, Effect, Layer, type Scope } from "effect"
import {
  type ListOptions,
  type ListPage,
  OrchestratorClient,
  type OrchestratorClientShape,
  OrchestratorError,
  type OrchestratorRequest,
  type WatchEvent,
} from "../../services/orchestrator/client.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import { type ResourceRef, resourcePath } from "../../services/orchestrator/resources.js"
import { makeThrottle } from "./throttle.js"

/** The kubeconfig could not be loaded or names no usable cluster. */
export class OrchestratorConfigError extends Data.TaggedError("OrchestratorConfigError")<{
  readonly source: string
  readonly reason: string
}> {
  override get message(): string {
    return `cannot use the orchestrator configuration ${this.source}: ${this.reason}`
  }
}

export type OrchestratorSource =
  | { readonly _tag: "file"; readonly path: string; readonly context?: string }
  | { readonly _tag: "text"; readonly name: string; readonly yaml: string; readonly context?: string }
  | {
      readonly _tag: "inCluster"
      readonly host: string
      readonly port: string
      /** Directory holding `token`, `ca.crt` and `namespace`. */
      readonly serviceAccountDir?: string
    }

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

/** Where the service-account credentials are mounted in a pod. */
export const SERVICE_ACCOUNT_DIRS = [
  "/var/run/secrets/orchestrator.io/serviceaccount",
  "/var/run/secrets/kubernetes.io/serviceaccount",
] as const

const describe = (source: OrchestratorSource): string =>
  source._tag === "file"
    ? source.path
    : source._tag === "text"
      ? source.name
      : `in-cluster ${source.host}:${source.port}`

/**
 * The orchestrator client library, loaded when a client is built: it is a large ES module
 * (about 0.45 s of CPU to load), and mesh-discovery with only file/mock registries, like most
 * meshctl commands, never talks to an orchestrator. Through `require` (Node.js loads ES modules
 * that way), not `import()`: the bundles run in a vm.Script, which has no dynamic import.
 */
type ClientLibrary = typeof import("@kubernetes/client-node")
const loadClientLibrary = (): ClientLibrary =>
  createRequire(import.meta.url)("@kubernetes/client-node") as ClientLibrary

const loadKubeConfig = (library: ClientLibrary, source: OrchestratorSource): KubeConfig => {
  const kc = new library.KubeConfig()
  switch (source._tag) {
    case "file":
      kc.loadFromFile(source.path)
      if (source.context !== undefined && source.context !== "") kc.setCurrentContext(source.context)
      break
    case "text":
      kc.loadFromString(source.yaml)
      if (source.context !== undefined && source.context !== "") kc.setCurrentContext(source.context)
      break
    case "inCluster": {
      const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIRS.find((d) => fs.existsSync(`${d}/token`))
      if (dir === undefined) throw new Error(`no service account token in ${SERVICE_ACCOUNT_DIRS.join(" or ")}`)
      const host = source.host.includes(":") ? `[${source.host}]` : source.host
      kc.loadFromClusterAndUser(
        { name: "in-cluster", server: `https://${host}:${source.port}`, caFile: `${dir}/ca.crt`, skipTLSVerify: false },
        { name: "in-cluster", authProvider: { name: "tokenFile", config: { tokenFile: `${dir}/token` } } },
      )
      break
    }
  }
  if (kc.getCurrentCluster() === null) throw new Error("no current cluster (check current-context)")
  return kc
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
    const library = loadClientLibrary()
    const kc = yield* Effect.try({
      try: () => loadKubeConfig(library, options.source),
      catch: (e) =>
        new OrchestratorConfigError({ source: describe(options.source), reason: String((e as Error).message ?? e) }),
    })
    const cluster = kc.getCurrentCluster()
    const server = (cluster?.server ?? "").replace(/\/+$/, "")
    const base = yield* Effect.try({
      try: () => new URL(server),
      catch: () =>
        new OrchestratorConfigError({ source: describe(options.source), reason: `bad server URL "${server}"` }),
    })
    const secure = base.protocol === "https:"
    // TLS material once (files read at start); headers (tokens) per request, so rotated
    // service-account tokens are picked up.
    const tlsOptions: https.RequestOptions = {}
    yield* Effect.tryPromise({
      try: () => kc.applyToHTTPSOptions(tlsOptions),
      catch: (e) => new OrchestratorConfigError({ source: describe(options.source), reason: String(e) }),
    })
    const agent = secure
      ? new https.Agent({
          keepAlive: true,
          ca: tlsOptions.ca,
          cert: tlsOptions.cert,
          key: tlsOptions.key,
          ...(tlsOptions.rejectUnauthorized !== undefined ? { rejectUnauthorized: tlsOptions.rejectUnauthorized } : {}),
          ...(cluster?.skipTLSVerify === true ? { rejectUnauthorized: false } : {}),
          ...(cluster?.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
        })
      : new http.Agent({ keepAlive: true })
    yield* Effect.addFinalizer(() => Effect.sync(() => agent.destroy()))
    const throttle = yield* makeThrottle(options.qps, options.burst)
    const timeout = options.requestTimeoutMillis ?? 60_000
    const impersonation = impersonationHeaders(options.impersonate)
    const watcher = new library.Watch(kc)

    const send = (request: OrchestratorRequest): Effect.Effect<unknown, OrchestratorError> =>
      Effect.async<unknown, OrchestratorError>((resume, signal) => {
        const headerOptions: https.RequestOptions = { headers: {} }
        kc.applyToHTTPSOptions(headerOptions).then(
          () => {
            const path = `${base.pathname.replace(/\/+$/, "")}${request.path}${queryString(request.query)}`
            const body = request.body === undefined ? undefined : JSON.stringify(request.body)
            const headers: Record<string, string | Array<string>> = { Accept: "application/json", ...impersonation }
            // Trimmed: a token file ending in a newline would make an invalid header, which
            // http.request throws on instead of failing the request.
            for (const [k, v] of Object.entries(headerOptions.headers ?? {}))
              if (v !== undefined) headers[k] = String(v).trim()
            if (headerOptions.auth !== undefined && headerOptions.auth !== null) {
              headers.Authorization = `Basic ${Buffer.from(headerOptions.auth).toString("base64")}`
            }
            if (body !== undefined) {
              headers["Content-Type"] = request.contentType ?? "application/json"
              headers["Content-Length"] = String(Buffer.byteLength(body))
            }
            const req = (secure ? https : http).request(
              {
                protocol: base.protocol,
                hostname: base.hostname.replace(/^\[|\]$/g, ""),
                port: base.port,
                path,
                method: request.method,
                headers,
                agent,
                signal,
                timeout,
              },
              (res) => {
                const chunks: Array<Buffer> = []
                res.on("data", (c: Buffer) => chunks.push(c))
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
                  const text = Buffer.concat(chunks).toString("utf8")
                  const status = res.statusCode ?? 0
                  if (status < 200 || status >= 300) {
                    const retry = res.headers["retry-after"]
                    return resume(
                      Effect.fail(errorOf(status, text, Array.isArray(retry) ? retry[0] : retry, request.path)),
                    )
                  }
                  try {
                    resume(Effect.succeed(text === "" ? undefined : JSON.parse(text)))
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

    const request = <A>(r: OrchestratorRequest) =>
      Effect.zipRight(throttle.take, send(r)).pipe(
        Effect.map((a) => a as A),
        Effect.withSpan("Orchestrator.request", { attributes: { method: r.method, path: r.path } }),
      )

    const client: OrchestratorClientShape = {
      clusterId: options.clusterId,
      server,
      request,
      list: <T extends OrchObject>(ref: ResourceRef, o?: ListOptions & { limit?: number; continue?: string }) =>
        Effect.map(
          request<{ items?: Array<T>; metadata?: { resourceVersion?: string; continue?: string } }>({
            method: "GET",
            path: resourcePath(ref, o?.namespace),
            query: { ...listQuery(o), limit: o?.limit, continue: o?.continue },
          }),
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
        Effect.tryPromise({
          try: () =>
            watcher.watch(
              resourcePath(ref, o.namespace),
              {
                ...listQuery(o),
                resourceVersion: o.resourceVersion,
                allowWatchBookmarks: o.allowWatchBookmarks ?? true,
                ...(o.timeoutSeconds !== undefined ? { timeoutSeconds: o.timeoutSeconds } : {}),
              },
              (type: string, object: unknown) => onEvent({ type: type as WatchEvent["type"], object }),
              (error: unknown) => onDone(error === null || error === undefined ? undefined : watchErrorOf(error, ref)),
            ),
          catch: (e) => watchErrorOf(e, ref),
        }).pipe(Effect.map((controller) => ({ close: () => controller.abort() }))),
    }
    return client
  })

const withTypeMeta = <T extends OrchObject>(ref: ResourceRef, object: T): T => ({
  ...object,
  apiVersion: object.apiVersion ?? (ref.group === "" ? ref.version : `${ref.group}/${ref.version}`),
  kind: object.kind ?? ref.kind,
})

const watchErrorOf = (e: unknown, ref: ResourceRef): OrchestratorError => {
  const error = e as { statusCode?: number; code?: string | number; message?: string; name?: string }
  const status = typeof error.statusCode === "number" ? error.statusCode : 0
  return new OrchestratorError({
    status,
    reason: status !== 0 ? (http.STATUS_CODES[status] ?? "Error") : String(error.code ?? error.name ?? "NetworkError"),
    message: `watch ${ref.plural}: ${error.message ?? String(e)}`,
  })
}

/** The client of the local cluster as `OrchestratorClient`. */
export const layer = (options: OrchestratorClientOptions): Layer.Layer<OrchestratorClient, OrchestratorConfigError> =>
  Layer.scoped(OrchestratorClient, makeOrchestratorClient(options))
