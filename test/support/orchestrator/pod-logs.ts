/**
 * The `pods/<name>/log` subresource of the fake orchestrator: plain text set by the test
 * (`setPodLog`), per namespace, pod and container. Honours `container` (required when the pod
 * has several containers, as the real server does), `sinceTime`/`sinceSeconds` (lines starting
 * with an RFC 3339 timestamp before the bound are left out) and `tailLines`. Requests for pods
 * that do not exist answer 404 like the real server.
 */
import type { ServerResponse } from "node:http"
import type { Http2ServerResponse } from "node:http2"
import { badRequest, notFound } from "./status.js"

type Response = ServerResponse | Http2ServerResponse

const LOG_PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/

interface PodLike {
  readonly [key: string]: unknown
}

const containerNames = (pod: PodLike): ReadonlyArray<string> =>
  ((pod.spec as { containers?: ReadonlyArray<{ name?: string }> } | undefined)?.containers ?? []).map(
    (c) => c.name ?? "",
  )

export class PodLogs {
  private readonly logs = new Map<string, string>()

  set(namespace: string, pod: string, container: string, text: string): void {
    this.logs.set(`${namespace}/${pod}/${container}`, text)
  }

  /** Serves the request when it is a pod log request; false otherwise (other routes go on). */
  serve(
    path: string,
    query: URLSearchParams,
    getPod: (namespace: string, name: string) => PodLike | undefined,
    res: Response,
  ): boolean {
    const match = LOG_PATH.exec(path)
    if (match === null) return false
    const namespace = decodeURIComponent(match[1]!)
    const name = decodeURIComponent(match[2]!)
    const pod = getPod(namespace, name)
    if (pod === undefined) throw notFound({ group: "", plural: "pods" }, name)
    const containers = containerNames(pod)
    let container = query.get("container") ?? ""
    if (container === "") {
      if (containers.length !== 1)
        throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(" ")}]`)
      container = containers[0]!
    }
    if (!containers.includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`)
    let lines = (this.logs.get(`${namespace}/${name}/${container}`) ?? "").split("\n")
    if (lines.at(-1) === "") lines.pop()
    const since = query.has("sinceTime")
      ? Date.parse(query.get("sinceTime")!)
      : query.has("sinceSeconds")
        ? Date.now() - Number(query.get("sinceSeconds")) * 1000
        : undefined
    if (since !== undefined && !Number.isNaN(since))
      lines = lines.filter((line) => {
        const stamp = /^(\S+)/.exec(line)?.[1]
        const at = stamp === undefined ? Number.NaN : Date.parse(stamp)
        return Number.isNaN(at) || at >= since
      })
    if (query.has("tailLines")) lines = lines.slice(Math.max(0, lines.length - Number(query.get("tailLines"))))
    res.writeHead(200, { "content-type": "text/plain", "cache-control": "no-cache, private" })
    res.end(lines.length === 0 ? "" : `${lines.join("\n")}\n`)
    return true
  }
}
