/**
 * How the orchestrator client authenticates to one API server: the TLS material (read once, at
 * start) and the headers of each request (tokens re-read as they rotate). Static credentials
 * (client certificate, token, token file, basic auth, the in-cluster service account) are read
 * here directly; a kubeconfig user with `exec` or an `auth-provider` goes through
 * `@kubernetes/client-node`'s KubeConfig, loaded only then (see services/orchestrator/kubeconfig.ts).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import type { SecureContextOptions } from "node:tls"
import type { KubeConfig } from "@kubernetes/client-node"
import { Data, Effect } from "effect"
import { type KubeconfigSelection, selectKubeconfig } from "../../services/orchestrator/kubeconfig.js"

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

/** Where the service-account credentials are mounted in a pod. */
export const SERVICE_ACCOUNT_DIRS = [
  "/var/run/secrets/orchestrator.io/serviceaccount",
  "/var/run/secrets/kubernetes.io/serviceaccount",
] as const

export const describeSource = (source: OrchestratorSource): string =>
  source._tag === "file"
    ? source.path
    : source._tag === "text"
      ? source.name
      : `in-cluster ${source.host}:${source.port}`

export interface TlsMaterial {
  readonly ca?: SecureContextOptions["ca"]
  readonly cert?: SecureContextOptions["cert"]
  readonly key?: SecureContextOptions["key"]
  readonly rejectUnauthorized?: boolean
  readonly servername?: string
}

export interface Credentials {
  /** The API server URL, without a trailing slash. */
  readonly server: string
  readonly tls: TlsMaterial
  /** The headers of one request (Authorization, Impersonate-User), values trimmed. */
  readonly headers: () => Promise<Record<string, string>>
}

/** A token file is read again once its copy is older than this (as client-go and the library do). */
const TOKEN_FILE_REFRESH_MILLIS = 60_000

/** Reads a token file when first asked, then again once a minute (a rotated service-account token). */
const refreshedTokenFile = (path: string) => {
  let token = ""
  let readAt = Number.NEGATIVE_INFINITY
  return () => {
    if (Date.now() - readAt > TOKEN_FILE_REFRESH_MILLIS) {
      token = fs.readFileSync(path, "utf8").trim()
      readAt = Date.now()
    }
    return token
  }
}

const fileOrData = (file: string | undefined, data: string | undefined): Buffer | undefined =>
  file !== undefined ? fs.readFileSync(file) : data !== undefined ? Buffer.from(data, "base64") : undefined

/** Credentials of a kubeconfig user without `exec`/`auth-provider`, or of the service account. */
const staticCredentials = (
  { cluster, user }: KubeconfigSelection,
  tokenOf: (() => string) | undefined,
): Credentials => {
  const ca = fileOrData(cluster.caFile, cluster.caData)
  const cert = fileOrData(user.certFile, user.certData)
  const key = fileOrData(user.keyFile, user.keyData)
  const fixed: Record<string, string> = {}
  if (user.impersonateUser !== undefined) fixed["Impersonate-User"] = user.impersonateUser
  if (user.username !== undefined)
    fixed.Authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64")}`
  // Read at load, as the library reads `token-file`; a token wins over basic auth, as there.
  const token = user.token ?? (user.tokenFile !== undefined ? fs.readFileSync(user.tokenFile, "utf8") : undefined)
  if (token !== undefined) fixed.Authorization = `Bearer ${token.trim()}`
  return {
    server: cluster.server,
    tls: {
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
      ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}),
      ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
    },
    headers: async () => (tokenOf === undefined ? fixed : { ...fixed, Authorization: `Bearer ${tokenOf()}` }),
  }
}

/**
 * The orchestrator client library, loaded only for a user that needs it: a large ES module.
 * Through `require` (Node.js loads ES modules that way), not `import()`: the bundles run in a
 * vm.Script, which has no dynamic import.
 */
type ClientLibrary = typeof import("@kubernetes/client-node")
const loadClientLibrary = (): ClientLibrary =>
  createRequire(import.meta.url)("@kubernetes/client-node") as ClientLibrary

/** Credentials through the library's KubeConfig (exec plugins, auth providers and their refreshes). */
const libraryCredentials = async (source: OrchestratorSource & { _tag: "file" | "text" }): Promise<Credentials> => {
  const kc: KubeConfig = new (loadClientLibrary().KubeConfig)()
  if (source._tag === "file") kc.loadFromFile(source.path)
  else kc.loadFromString(source.yaml)
  if (source.context !== undefined && source.context !== "") kc.setCurrentContext(source.context)
  const cluster = kc.getCurrentCluster()
  if (cluster === null) throw new Error("no current cluster (check current-context)")
  const tls: import("node:https").RequestOptions = {}
  await kc.applyToHTTPSOptions(tls)
  return {
    server: cluster.server.replace(/\/+$/, ""),
    tls: {
      ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
      ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls.key !== undefined ? { key: tls.key } : {}),
      ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
      ...(cluster.skipTLSVerify === true ? { rejectUnauthorized: false } : {}),
      ...(cluster.tlsServerName !== undefined ? { servername: cluster.tlsServerName } : {}),
    },
    headers: async () => {
      const options: import("node:https").RequestOptions = { headers: {} }
      await kc.applyToHTTPSOptions(options)
      const headers: Record<string, string> = {}
      // Trimmed: a token file ending in a newline would make an invalid header, which
      // http.request throws on instead of failing the request.
      for (const [k, v] of Object.entries(options.headers ?? {})) if (v !== undefined) headers[k] = String(v).trim()
      if (options.auth !== undefined && options.auth !== null)
        headers.Authorization = `Basic ${Buffer.from(options.auth).toString("base64")}`
      return headers
    },
  }
}

const load = async (source: OrchestratorSource): Promise<Credentials> => {
  switch (source._tag) {
    case "file":
    case "text": {
      const yaml = source._tag === "file" ? fs.readFileSync(source.path, "utf8") : source.yaml
      const selection = selectKubeconfig(yaml, {
        ...(source._tag === "file" ? { file: source.path } : {}),
        ...(source.context !== undefined ? { context: source.context } : {}),
      })
      return selection.user.dynamic ? await libraryCredentials(source) : staticCredentials(selection, undefined)
    }
    case "inCluster": {
      const dir = source.serviceAccountDir ?? SERVICE_ACCOUNT_DIRS.find((d) => fs.existsSync(`${d}/token`))
      if (dir === undefined) throw new Error(`no service account token in ${SERVICE_ACCOUNT_DIRS.join(" or ")}`)
      const host = source.host.includes(":") ? `[${source.host}]` : source.host
      return staticCredentials(
        {
          cluster: {
            name: "in-cluster",
            server: `https://${host}:${source.port}`,
            caFile: `${dir}/ca.crt`,
            skipTLSVerify: false,
          },
          user: { name: "in-cluster", dynamic: false },
        },
        refreshedTokenFile(`${dir}/token`),
      )
    }
  }
}

/** The credentials of a source; fails naming the source and the reason. */
export const loadCredentials = (source: OrchestratorSource): Effect.Effect<Credentials, OrchestratorConfigError> =>
  Effect.tryPromise({
    try: () => load(source),
    catch: (e) =>
      new OrchestratorConfigError({
        source: describeSource(source),
        reason: String((e as Error | undefined)?.message ?? e),
      }),
  })
