/**
 * HTTP routing of the orchestrator API: discovery paths, then `/api/v1/...` and
 * `/apis/<group>/<version>/...` resource paths (namespaced, cluster-wide, `/status`, legacy
 * `/watch/` prefix) mapped to the verbs, with bearer-token auth and injected faults. Serves
 * HTTP/2 and HTTP/1.1 on one TLS port (ALPN), or plain HTTP/1.1; can go down and come back
 * on the same port.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from "node:http2"
import type { Server, Socket } from "node:net"
import {
  coreVersions,
  group,
  groupList,
  openApiV2Protobuf,
  openApiV3,
  openApiV3Root,
  resourceList,
  versionInfo,
} from "./discovery.js"
import type { Faults, Verb } from "./faults.js"
import type { PodLogs } from "./pod-logs.js"
import type { Registry } from "./resources.js"
import type { Api, Scope } from "./rest.js"
import { ApiError, badRequest, methodNotAllowed, pathNotFound, unauthorized, unsupportedMediaType } from "./status.js"
import { issueServiceAccountToken, tokenRequestTarget } from "./token-request.js"
import type { Watches } from "./watch.js"

type Request = IncomingMessage | Http2ServerRequest
type Response = ServerResponse | Http2ServerResponse

export interface HandlerDeps {
  readonly api: Api
  readonly registry: Registry
  readonly watches: Watches
  readonly faults: Faults
  /** Bearer token every request must carry, if set. */
  readonly token: string | undefined
  /** Answer a watch from an expired resourceVersion with HTTP 410 instead of an ERROR event. */
  readonly expiredWatchAsStatus: boolean
  /** Serve /openapi/v3 (servers since 1.27); without it clients fall back to /openapi/v2. */
  readonly openApiV3: boolean
  readonly address: () => string
  /** Text served at `pods/<name>/log` (see pod-logs.ts). */
  readonly podLogs?: PodLogs
}

const send = (res: Response, code: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  res.writeHead(code, { "content-type": "application/json", "cache-control": "no-cache, private", ...headers })
  res.end(text)
}

const readBody = async (req: Request): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString()
  if (text.trim() === "") return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw badRequest(`couldn't get version/kind; json parse error: invalid JSON`)
  }
}

interface Route {
  readonly scope: Scope
  readonly name?: string
  readonly subresource?: string
  readonly watchPath: boolean
}

/** Resolves `rest` (the segments after the group version) to a type and object. */
const route = (registry: Registry, group: string, version: string, rest: Array<string>): Route => {
  const watchPath = rest[0] === "watch"
  if (watchPath) rest = rest.slice(1)
  let namespace: string | undefined
  if (
    rest[0] === "namespaces" &&
    rest.length >= 3 &&
    !(group === "" && (rest[2] === "status" || rest[2] === "finalize"))
  ) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const [plural, name, subresource, ...extra] = rest
  const type = plural === undefined ? undefined : registry.lookup(group, version, plural)
  if (type === undefined || extra.length > 0) throw pathNotFound()
  if (namespace !== undefined && !type.namespaced) throw pathNotFound()
  if (name !== undefined && type.namespaced && namespace === undefined) throw pathNotFound()
  if (subresource !== undefined && !(subresource === "status" && type.status)) throw pathNotFound()
  return {
    scope: { type, version, ...(namespace === undefined ? {} : { namespace }) },
    ...(name === undefined ? {} : { name }),
    ...(subresource === undefined ? {} : { subresource }),
    watchPath,
  }
}

const verbOf = (method: string, r: Route, watch: boolean): Verb => {
  switch (method) {
    case "GET":
      return r.name !== undefined && !r.watchPath ? "get" : watch ? "watch" : "list"
    case "POST":
      return "create"
    case "PUT":
      return "update"
    case "PATCH":
      return "patch"
    case "DELETE":
      return r.name === undefined ? "deletecollection" : "delete"
    default:
      throw methodNotAllowed()
  }
}

const discovery = (deps: HandlerDeps, path: string): unknown => {
  const segs = path.split("/").filter((s) => s !== "")
  if (path === "/version") return versionInfo
  if (path === "/api") return coreVersions(deps.address())
  if (path === "/apis") return groupList(deps.registry)
  if (path === "/openapi/v3") return openApiV3Root(deps.registry)
  if (segs[0] === "openapi" && segs[1] === "v3")
    return (
      (segs[2] === "api" ? openApiV3(deps.registry, "", segs[3]!) : openApiV3(deps.registry, segs[3]!, segs[4]!)) ??
      throwNotFound()
    )
  if (segs[0] === "api" && segs.length === 2) return resourceList(deps.registry, "", segs[1]!) ?? throwNotFound()
  if (segs[0] === "apis" && segs.length === 2) return group(deps.registry, segs[1]!) ?? throwNotFound()
  if (segs[0] === "apis" && segs.length === 3) return resourceList(deps.registry, segs[1]!, segs[2]!) ?? throwNotFound()
  return undefined
}
/** Who the client acts as (Impersonate-* headers), for tests of meshctl's --as flags. */
const impersonation = (req: Request): { impersonateUser?: string; impersonateGroups?: ReadonlyArray<string> } => {
  const user = req.headers["impersonate-user"]
  const groups = req.headers["impersonate-group"]
  if (user === undefined) return {}
  return {
    impersonateUser: String(user),
    impersonateGroups: groups === undefined ? [] : Array.isArray(groups) ? groups : [groups],
  }
}

const throwNotFound = (): never => {
  throw pathNotFound()
}

export const handler = (deps: HandlerDeps) => async (req: Request, res: Response) => {
  const url = new URL(req.url ?? "/", "http://orchestrator")
  const q = url.searchParams
  const path = url.pathname
  /** The request as the fault hooks and the request log see it. */
  const recordOf = (verb: Verb) => ({
    verb,
    path,
    query: url.search,
    userAgent: String(req.headers["user-agent"] ?? ""),
    ...impersonation(req),
  })
  try {
    if (deps.token !== undefined && req.headers.authorization !== `Bearer ${deps.token}`) throw unauthorized()
    if (path === "/healthz" || path === "/readyz" || path === "/livez") {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("ok")
      return
    }
    const method = req.method ?? "GET"
    if (method === "GET" && path === "/openapi/v2") {
      deps.faults.check(recordOf("get"))
      res.writeHead(200, { "content-type": "application/octet-stream" })
      res.end(openApiV2Protobuf())
      return
    }
    if (method === "GET" && path.startsWith("/openapi/v3") && !deps.openApiV3) throw pathNotFound()
    if (method === "GET") {
      const doc = discovery(deps, path)
      if (doc !== undefined) {
        deps.faults.check(recordOf("get"))
        return send(res, 200, doc)
      }
    }
    if (method === "GET" && deps.podLogs !== undefined) {
      const pods = deps.registry.lookup("", "v1", "pods")!
      if (
        deps.podLogs.serve(
          path,
          q,
          (namespace, name) => deps.api.get({ type: pods, version: "v1", namespace }, name),
          res,
        )
      )
        return
    }
    const tokenTarget = method === "POST" ? tokenRequestTarget(path) : undefined
    if (tokenTarget !== undefined)
      return send(res, 201, issueServiceAccountToken(deps.api, deps.registry, tokenTarget, await readBody(req)))
    const segs = path.split("/").filter((s) => s !== "")
    let r: Route
    if (segs[0] === "api" && segs.length >= 3) r = route(deps.registry, "", segs[1]!, segs.slice(2))
    else if (segs[0] === "apis" && segs.length >= 4) r = route(deps.registry, segs[1]!, segs[2]!, segs.slice(3))
    else throw pathNotFound()
    const watch = r.watchPath || q.get("watch") === "true" || q.get("watch") === "1"
    const verb = verbOf(method, r, watch)
    deps.faults.check(recordOf(verb))
    const { api } = deps
    const dryRun = q.get("dryRun") === "All"
    const subresource = r.subresource === "status" ? ("status" as const) : undefined
    const options = { dryRun, ...(subresource === undefined ? {} : { subresource }) }
    const selectors = {
      ...(q.has("labelSelector") ? { labelSelector: q.get("labelSelector")! } : {}),
      ...(q.has("fieldSelector") ? { fieldSelector: q.get("fieldSelector")! } : {}),
    }
    const name = r.name!
    const contentType = String(req.headers["content-type"] ?? "application/json")
      .split(";")[0]!
      .trim()
    const body = method === "GET" ? undefined : await readBody(req)
    if ((verb === "create" || verb === "update") && contentType !== "application/json")
      throw unsupportedMediaType(["application/json", "application/yaml"])
    if (r.scope.type.createOnly && verb !== "create") throw methodNotAllowed()
    switch (verb) {
      case "get":
        return send(res, 200, api.get(r.scope, name))
      case "list":
        return send(
          res,
          200,
          api.list(r.scope, {
            ...selectors,
            ...(q.has("limit") ? { limit: Number(q.get("limit")) } : {}),
            ...(q.has("continue") ? { continue: q.get("continue")! } : {}),
            ...(q.has("resourceVersion") ? { resourceVersion: q.get("resourceVersion")! } : {}),
            ...(q.has("resourceVersionMatch") ? { resourceVersionMatch: q.get("resourceVersionMatch")! } : {}),
          }),
        )
      case "watch":
        return startWatch(deps, req, res, r.scope, {
          ...selectors,
          ...(q.has("resourceVersion") ? { resourceVersion: q.get("resourceVersion")! } : {}),
          allowWatchBookmarks: q.get("allowWatchBookmarks") === "true",
          ...(q.has("sendInitialEvents") ? { sendInitialEvents: q.get("sendInitialEvents") === "true" } : {}),
          ...(q.has("timeoutSeconds") ? { timeoutSeconds: Number(q.get("timeoutSeconds")) } : {}),
        })
      case "create":
        if (r.name !== undefined) throw methodNotAllowed()
        return send(res, 201, api.create(r.scope, body, options))
      case "update":
        if (r.name === undefined) throw methodNotAllowed()
        return send(res, 200, api.update(r.scope, name, body, options))
      case "patch":
        if (r.name === undefined) throw methodNotAllowed()
        return send(
          res,
          200,
          api.patch(r.scope, name, contentType, body, {
            ...options,
            ...(q.has("fieldManager") ? { fieldManager: q.get("fieldManager")! } : {}),
            force: q.get("force") === "true",
          }),
        )
      case "delete": {
        const preconditions = (body as { preconditions?: { resourceVersion?: string; uid?: string } } | undefined)
          ?.preconditions
        return send(
          res,
          200,
          api.delete(r.scope, name, { ...options, ...(preconditions === undefined ? {} : { preconditions }) }),
        )
      }
      case "deletecollection":
        return send(res, 200, api.deleteCollection(r.scope, { ...selectors, ...options }))
    }
  } catch (error) {
    if (error instanceof ApiError) return send(res, error.status.code, error.status, { ...error.headers })
    return send(res, 500, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: String(error),
      reason: "InternalError",
      code: 500,
    })
  }
}

const startWatch = (
  deps: HandlerDeps,
  req: Request,
  res: Response,
  scope: Scope,
  params: Parameters<Watches["start"]>[1],
) => {
  const expired = deps.watches.expired(scope, params)
  if (expired !== undefined && deps.expiredWatchAsStatus) return send(res, 410, expired)
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private" })
  // Both response kinds stream the same way; one type keeps the calls simple.
  const out = res as ServerResponse
  if ("flushHeaders" in res) out.flushHeaders()
  const stop = deps.watches.start(scope, params, {
    write: (line) => {
      out.write(`${line}\n`)
    },
    end: () => {
      res.end()
    },
  })
  req.on("close", stop)
  res.on("close", stop)
}

export interface Tls {
  readonly certPem: string
  readonly keyPem: string
}

/** The listener: goes down (dropping every connection) and comes back on the same port. */
export class Listener {
  private server: Server
  private readonly sockets = new Set<Socket>()
  port = 0

  constructor(handle: (req: Request, res: Response) => void, tls: Tls | undefined) {
    this.server = (tls === undefined
      ? createHttpServer(handle)
      : createSecureServer({ allowHTTP1: true, cert: tls.certPem, key: tls.keyPem }, handle)) as unknown as Server
    this.server.on("connection", (socket: Socket) => {
      this.sockets.add(socket)
      socket.on("close", () => this.sockets.delete(socket))
    })
  }

  listen(port = this.port): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject)
      this.server.listen(port, "127.0.0.1", () => {
        this.server.off("error", reject)
        this.port = (this.server.address() as { port: number }).port
        resolve()
      })
    })
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server.listening) return resolve()
      this.server.close(() => resolve())
      for (const socket of this.sockets) socket.destroy()
    })
  }
}
