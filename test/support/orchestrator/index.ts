/**
 * An in-process orchestrator (Kubernetes) API server for tests, speaking the real wire
 * protocol so that kubectl, `@kubernetes/client-node` and the built `mesh-discovery` can use
 * it, with hooks to change objects directly, inject faults, expire history, drop watches and
 * take the server down and up.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { opensslServerCert } from "../openssl.js"
import { type Fault, Faults, type RequestRecord, type Verb } from "./faults.js"
import { writeKubeconfig } from "./kubeconfig.js"
import { PodLogs } from "./pod-logs.js"
import { type CustomResource, customType, type KubeObject, Registry, type ResourceType } from "./resources.js"
import { Api, type TokenReviewer } from "./rest.js"
import { handler, Listener } from "./server.js"
import { Store } from "./store.js"
import { Watches } from "./watch.js"

export { kubeconfigYaml, writeKubeconfig } from "./kubeconfig.js"
export type { CustomResource, Fault, KubeObject, RequestRecord, TokenReviewer, Verb }

export interface OrchestratorOptions {
  /** Serve TLS (HTTP/2 and HTTP/1.1) with a fresh self-signed CA; default true. */
  readonly tls?: boolean
  /** Require `Authorization: Bearer <token>` (the kubeconfig carries it). */
  readonly token?: string
  /** Changes kept for watches and paged lists before older versions expire; default 10,000. */
  readonly historyLimit?: number
  /** Period of BOOKMARK events on watches that allow them; default 1 s. */
  readonly bookmarkIntervalMillis?: number
  /** Creating in a missing namespace fails with 404, as the NamespaceLifecycle plugin does; default true. */
  readonly requireNamespace?: boolean
  /** Namespaces present at start; default default, kube-system, kube-public, kube-node-lease. */
  readonly namespaces?: ReadonlyArray<string>
  readonly customResources?: ReadonlyArray<CustomResource>
  /** Answers TokenReviews; default: tokens added with `addToken`, everything else unauthenticated. */
  readonly tokenReviewer?: TokenReviewer
  /** Answer watches from an expired resourceVersion with HTTP 410 (old servers) instead of an ERROR event. */
  readonly expiredWatchAsStatus?: boolean
  /** Serve /openapi/v3; default true. Off, kubectl falls back to the (schema-less) /openapi/v2 as with old servers. */
  readonly openApiV3?: boolean
}

export interface Orchestrator {
  /** `https://127.0.0.1:<port>` (or http://). */
  readonly url: string
  readonly port: number
  readonly caPem: string | undefined
  readonly token: string | undefined
  /** The current global resourceVersion. */
  readonly resourceVersion: () => number
  /** Writes a kubeconfig for this server (in a fresh temporary directory unless `path`) and returns its path. */
  readonly kubeconfig: (options?: { path?: string; namespace?: string; token?: string }) => string
  readonly registerCustomResource: (c: CustomResource) => void
  /** Creates or replaces an object as given (status included), bypassing validation; returns it stored. */
  readonly put: (o: KubeObject) => KubeObject
  readonly get: (
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    name: string,
  ) => KubeObject | undefined
  readonly list: (apiVersion: string, kind: string, namespace?: string) => Array<KubeObject>
  readonly remove: (apiVersion: string, kind: string, namespace: string | undefined, name: string) => boolean
  /** Tokens the default TokenReviewer accepts. */
  readonly addToken: (
    token: string,
    user: { username: string; uid?: string; groups?: Array<string> },
    audiences?: Array<string>,
  ) => void
  readonly setTokenReviewer: (reviewer: TokenReviewer) => void
  readonly failNext: (fault: Fault) => void
  readonly requests: () => ReadonlyArray<RequestRecord>
  readonly requestCount: (filter?: { verb?: Verb; path?: string | RegExp }) => number
  /** Forgets the change history: every older resourceVersion now answers 410 Expired. */
  readonly compact: () => void
  readonly dropWatches: () => void
  readonly bookmark: () => void
  readonly watchCount: () => number
  /** Closes the listener and every connection; `up` listens again on the same port. */
  readonly down: () => Promise<void>
  readonly up: () => Promise<void>
  readonly close: () => Promise<void>
  /** Sets the text `pods/<pod>/log?container=<container>` serves. */
  readonly setPodLog: (namespace: string, pod: string, container: string, text: string) => void
}

export const startOrchestrator = async (options: OrchestratorOptions = {}): Promise<Orchestrator> => {
  const registry = new Registry()
  for (const c of options.customResources ?? []) registry.add(customType(c))
  const store = new Store(options.historyLimit ?? 10_000)
  const tokens = new Map<
    string,
    { user: { username: string; uid?: string; groups?: Array<string> }; audiences?: Array<string> }
  >()
  const defaultReviewer: TokenReviewer = (spec) => {
    const known = tokens.get(spec.token ?? "")
    if (known === undefined) return { authenticated: false, error: "invalid bearer token" }
    const wanted = spec.audiences ?? []
    const audiences = known.audiences ?? wanted
    if (wanted.length > 0 && !wanted.some((a) => audiences.includes(a)))
      return { authenticated: false, error: "token audiences do not match" }
    return {
      authenticated: true,
      user: known.user,
      audiences: wanted.length > 0 ? wanted.filter((a) => audiences.includes(a)) : audiences,
    }
  }
  const apiOptions = {
    requireNamespace: options.requireNamespace ?? true,
    tokenReviewer: options.tokenReviewer ?? defaultReviewer,
  }
  const api = new Api(store, registry, apiOptions)
  const watches = new Watches(store, api, options.bookmarkIntervalMillis ?? 1000)
  const faults = new Faults()
  const dir = mkdtempSync(join(tmpdir(), "orchestrator-"))
  const tls = options.tls ?? true
  const cert = tls ? opensslServerCert(dir, "orchestrator", "IP:127.0.0.1,DNS:localhost") : undefined
  let url = ""
  const podLogs = new PodLogs()
  const listener = new Listener(
    handler({
      api,
      registry,
      watches,
      faults,
      token: options.token,
      expiredWatchAsStatus: options.expiredWatchAsStatus ?? false,
      openApiV3: options.openApiV3 ?? true,
      address: () => url.replace(/^https?:\/\//, ""),
      podLogs,
    }),
    cert,
  )
  await listener.listen(0)
  url = `${tls ? "https" : "http"}://127.0.0.1:${listener.port}`

  const typeOf = (apiVersion: string, kind: string): ResourceType => {
    const t = registry.byKind(apiVersion, kind)
    if (t === undefined) throw new Error(`orchestrator: no resource for ${apiVersion} ${kind}`)
    return t
  }
  for (const name of options.namespaces ?? ["default", "kube-system", "kube-public", "kube-node-lease"])
    api.put(typeOf("v1", "Namespace"), { apiVersion: "v1", kind: "Namespace", metadata: { name } })

  return {
    url,
    port: listener.port,
    caPem: cert?.caPem,
    token: options.token,
    resourceVersion: () => store.resourceVersion,
    kubeconfig: (o = {}) =>
      writeKubeconfig(o.path ?? join(mkdtempSync(join(tmpdir(), "kubeconfig-")), "config"), {
        server: url,
        ...(cert === undefined ? {} : { caPem: cert.caPem }),
        ...((o.token ?? options.token) === undefined ? {} : { token: (o.token ?? options.token)! }),
        ...(o.namespace === undefined ? {} : { namespace: o.namespace }),
      }),
    registerCustomResource: (c) => registry.add(customType(c)),
    put: (o) => api.put(typeOf(o.apiVersion ?? "", o.kind ?? ""), structuredClone(o)),
    get: (apiVersion, kind, namespace, name) => store.get(typeOf(apiVersion, kind), namespace, name),
    list: (apiVersion, kind, namespace) => store.list(typeOf(apiVersion, kind), namespace),
    remove: (apiVersion, kind, namespace, name) => {
      const type = typeOf(apiVersion, kind)
      const o = store.get(type, namespace, name)
      if (o !== undefined) api.removeNow(type, o)
      return o !== undefined
    },
    addToken: (token, user, audiences) => {
      tokens.set(token, { user, ...(audiences === undefined ? {} : { audiences }) })
    },
    setTokenReviewer: (reviewer) => {
      apiOptions.tokenReviewer = reviewer
    },
    failNext: (fault) => faults.inject(fault),
    requests: () => faults.log,
    requestCount: (filter) => faults.count(filter),
    compact: () => store.compact(),
    dropWatches: () => watches.dropAll(),
    bookmark: () => watches.bookmarkAll(),
    watchCount: () => watches.count,
    down: async () => {
      watches.dropAll()
      await listener.close()
    },
    up: () => listener.listen(),
    close: async () => {
      watches.dropAll()
      await listener.close()
    },
    setPodLog: (namespace, pod, container, text) => podLogs.set(namespace, pod, container, text),
  }
}
