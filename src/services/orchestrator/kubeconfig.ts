/**
 * The part of a kubeconfig the orchestrator client needs: the current context's cluster and user,
 * read as `@kubernetes/client-node`'s KubeConfig reads them (same field names, same checks, same
 * relative-path rule), so that a kubeconfig with only static credentials (client certificate and
 * key, bearer token or token file, basic auth, `as`) is used without loading that library: it is
 * a large ES module (about 0.5 s of CPU), and these are the credentials an orchestrator's own
 * kubeconfigs and the in-cluster service account carry. A user with `exec` or an `auth-provider`
 * (programs to run, tokens to refresh) is `dynamic`: the client hands those to the library.
 */
import { dirname, isAbsolute, join } from "node:path"
import { parse } from "yaml"
import { isObject, type Obj } from "./json.js"

export interface KubeconfigCluster {
  readonly name: string
  /** Without a trailing slash. */
  readonly server: string
  readonly caData?: string
  /** Absolute (made so against the kubeconfig's directory). */
  readonly caFile?: string
  readonly skipTLSVerify: boolean
  readonly tlsServerName?: string
}

export interface KubeconfigUser {
  readonly name: string
  readonly certData?: string
  readonly certFile?: string
  readonly keyData?: string
  readonly keyFile?: string
  readonly token?: string
  /** `token-file`: read once, when the kubeconfig is loaded (as the library does). */
  readonly tokenFile?: string
  readonly username?: string
  readonly password?: string
  /** `as`: sent as Impersonate-User. */
  readonly impersonateUser?: string
  /** True when the user has `exec` or `auth-provider`: credentials only the library produces. */
  readonly dynamic: boolean
}

export interface KubeconfigSelection {
  readonly cluster: KubeconfigCluster
  readonly user: KubeconfigUser
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const absolute = (root: string | undefined, file: string | undefined): string | undefined =>
  file === undefined || root === undefined || isAbsolute(file) ? file : join(root, file)

const named = (list: unknown, what: string): ReadonlyArray<Obj> => {
  if (!Array.isArray(list)) return []
  return list.map((entry, i) => {
    if (!isObject(entry) || text(entry.name) === undefined) throw new Error(`${what}[${i}].name is missing`)
    return entry
  })
}

const clusterOf = (entry: Obj, i: number, root: string | undefined): KubeconfigCluster => {
  const c = entry.cluster
  if (!isObject(c)) throw new Error(`clusters[${i}].cluster is missing`)
  const server = text(c.server)
  if (server === undefined) throw new Error(`clusters[${i}].cluster.server is missing`)
  const caData = text(c["certificate-authority-data"])
  const caFile = absolute(root, text(c["certificate-authority"]))
  const tlsServerName = text(c["tls-server-name"])
  return {
    name: entry.name as string,
    server: server.replace(/\/$/, ""),
    ...(caData !== undefined ? { caData } : {}),
    ...(caFile !== undefined ? { caFile } : {}),
    skipTLSVerify: c["insecure-skip-tls-verify"] === true,
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
  }
}

const userOf = (entry: Obj, root: string | undefined): KubeconfigUser => {
  const u = isObject(entry.user) ? entry.user : {}
  const fields: Record<string, string | undefined> = {
    certData: text(u["client-certificate-data"]),
    certFile: absolute(root, text(u["client-certificate"])),
    keyData: text(u["client-key-data"]),
    keyFile: absolute(root, text(u["client-key"])),
    token: text(u.token),
    tokenFile: text(u["token-file"]),
    username: text(u.username),
    password: text(u.password),
    impersonateUser: text(u.as),
  }
  const present = (v: unknown) => v !== undefined && v !== null
  return {
    ...(Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Omit<
      KubeconfigUser,
      "name" | "dynamic"
    >),
    name: entry.name as string,
    dynamic: present(u.exec) || present(u["auth-provider"]),
  }
}

/**
 * The cluster and user of `context` (or the file's current context). `file` makes relative
 * certificate paths absolute against its directory. Throws with the reason when the document is
 * not a kubeconfig or the context names no cluster.
 */
export const selectKubeconfig = (
  yaml: string,
  options: { file?: string; context?: string } = {},
): KubeconfigSelection => {
  const doc: unknown = parse(yaml)
  if (!isObject(doc)) throw new Error("not a kubeconfig (expected a mapping)")
  const root = options.file === undefined ? undefined : dirname(options.file)
  const contextName =
    options.context !== undefined && options.context !== "" ? options.context : text(doc["current-context"])
  const contexts = named(doc.contexts, "contexts")
  const clusters = named(doc.clusters, "clusters")
  const users = named(doc.users, "users")
  const context = contexts.find((c) => c.name === contextName)
  const ctx = context === undefined ? undefined : context.context
  if (context !== undefined && !isObject(ctx))
    throw new Error(`contexts[${contexts.indexOf(context)}].context is missing`)
  // Every cluster is checked, as the library checks them when it loads the file.
  const all = clusters.map((c, i) => clusterOf(c, i, root))
  const cluster = isObject(ctx) ? all.find((c) => c.name === ctx.cluster) : undefined
  if (cluster === undefined) throw new Error("no current cluster (check current-context)")
  const userEntry = isObject(ctx) ? users.find((u) => u.name === ctx.user) : undefined
  return { cluster, user: userEntry === undefined ? { name: "", dynamic: false } : userOf(userEntry, root) }
}
