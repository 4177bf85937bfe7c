/**
 * Remote-cluster kubeconfigs come from Secrets anyone able to write one in the mesh namespace
 * controls, so options that make the control plane run a program or read one of its own files
 * and send the contents to the remote server (auth providers other than OIDC, `exec`, client
 * certificate/key files, token files) are refused unless `PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS`
 * lists them (by auth-provider name or `clientKey`, `clientCertificate`, `tokenFile`, `exec`).
 *
 * As the reference does, each user is rebuilt from the fields known here, so a field added to
 * the format later is not acted on without review. The cluster part is left alone: its server
 * URL cannot be constrained, and a `certificate-authority` file is only used locally (its
 * content is never sent).
 */
import { parse, stringify } from "yaml"

/** Parses the variable: comma-separated option names, blanks ignored. */
export const parseInsecureOptions = (text: string): ReadonlySet<string> =>
  new Set(
    text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
  )

export type SanitizeResult =
  | { readonly _tag: "Allowed"; readonly yaml: string }
  /** Parses, but uses an option not allowed. */
  | { readonly _tag: "Refused"; readonly reason: string }
  /** Not a kubeconfig at all. */
  | { readonly _tag: "Invalid"; readonly reason: string }

/** User fields carried over; everything else in a user is dropped. */
const USER_FIELDS = [
  "client-certificate",
  "client-certificate-data",
  "client-key",
  "client-key-data",
  "token",
  "tokenFile",
  // What @kubernetes/client-node reads (synchronously, at load) for a token file.
  "token-file",
  "as",
  "as-uid",
  "as-groups",
  "as-user-extra",
  "username",
  "password",
  "auth-provider",
  "exec",
] as const

/** Auth providers that neither read files nor run programs. */
const SAFE_AUTH_PROVIDERS = new Set(["oidc"])

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const present = (v: unknown): boolean => v !== undefined && v !== null && v !== ""

/** Why one user is refused, or undefined when it is allowed. */
const refusal = (user: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined => {
  const provider = user["auth-provider"]
  if (present(provider)) {
    const name = isRecord(provider) && typeof provider.name === "string" ? provider.name : ""
    if (!SAFE_AUTH_PROVIDERS.has(name) && !allowed.has(name))
      return `auth provider ${name || "(unnamed)"} is not allowed`
  }
  if (present(user["client-key"]) && !allowed.has("clientKey")) return "clientKey is not allowed"
  if (present(user["client-certificate"]) && !allowed.has("clientCertificate"))
    return "clientCertificate is not allowed"
  if ((present(user.tokenFile) || present(user["token-file"])) && !allowed.has("tokenFile"))
    return "tokenFile is not allowed"
  if (present(user.exec) && !allowed.has("exec")) return "exec is not allowed"
  return undefined
}

/** Checks a remote kubeconfig against the allowed options and returns it rebuilt. */
export const sanitizeKubeconfig = (text: string, allowed: ReadonlySet<string>): SanitizeResult => {
  let doc: unknown
  try {
    doc = parse(text)
  } catch (e) {
    return { _tag: "Invalid", reason: `kubeconfig cannot be loaded: ${(e as Error).message.split("\n")[0]}` }
  }
  if (!isRecord(doc)) return { _tag: "Invalid", reason: "kubeconfig cannot be loaded: not a mapping" }
  const users = doc.users ?? []
  if (!Array.isArray(users)) return { _tag: "Invalid", reason: "kubeconfig is not valid: users is not a list" }
  const rebuilt: Array<unknown> = []
  for (const [index, entry] of users.entries()) {
    if (!isRecord(entry))
      return { _tag: "Invalid", reason: `kubeconfig is not valid: users[${index}] is not a mapping` }
    const name = typeof entry.name === "string" ? entry.name : `#${index}`
    const user = entry.user ?? {}
    if (!isRecord(user)) return { _tag: "Invalid", reason: `kubeconfig is not valid: user "${name}" is not a mapping` }
    const why = refusal(user, allowed)
    if (why !== undefined) return { _tag: "Refused", reason: `kubeconfig is not allowed: user "${name}": ${why}` }
    const kept: Record<string, unknown> = {}
    for (const field of USER_FIELDS) if (user[field] !== undefined) kept[field] = user[field]
    rebuilt.push({ ...entry, user: kept })
  }
  return { _tag: "Allowed", yaml: stringify({ ...doc, users: rebuilt }) }
}
