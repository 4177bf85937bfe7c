/**
 * Registry credentials and challenges: the `.dockerconfigjson` of a pull secret (`auths[host]`
 * with `auth` = base64 "user:password", or `username`/`password`), the `WWW-Authenticate`
 * challenge of a 401 (Basic, or Bearer with realm/service/scope) and the token request it leads to.
 */
import { Either } from "effect"

export interface RegistryCredentials {
  readonly username: string
  readonly password: string
}

export interface AuthChallenge {
  readonly scheme: string
  readonly params: Readonly<Record<string, string>>
}

const DOCKER_HUB_ALIASES = ["docker.io", "index.docker.io", "registry-1.docker.io"]

/** A config key (`https://index.docker.io/v1/`, `host:port`, `http://host`) → `host[:port]`. */
const hostOfKey = (key: string) =>
  key
    .trim()
    .replace(/^[a-z]+:\/\//i, "")
    .replace(/\/.*$/, "")
    .toLowerCase()

const credentialsOf = (entry: unknown): RegistryCredentials | undefined => {
  if (typeof entry !== "object" || entry === null) return undefined
  const { auth, username, password } = entry as Record<string, unknown>
  if (typeof auth === "string" && auth !== "") {
    const decoded = Buffer.from(auth, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  }
  if (typeof username === "string" && username !== "")
    return { username, password: typeof password === "string" ? password : "" }
  return undefined
}

/** The credentials of a pull secret by registry host. Accepts the legacy `.dockercfg` form (no `auths`). */
export const parseDockerConfig = (text: string): Either.Either<ReadonlyMap<string, RegistryCredentials>, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return Either.left("the pull secret is not JSON")
  }
  if (typeof json !== "object" || json === null) return Either.left("the pull secret is not a JSON object")
  const document = json as Record<string, unknown>
  const auths = typeof document.auths === "object" && document.auths !== null ? document.auths : document
  const result = new Map<string, RegistryCredentials>()
  for (const [key, entry] of Object.entries(auths as Record<string, unknown>)) {
    const credentials = credentialsOf(entry)
    if (credentials !== undefined) result.set(hostOfKey(key), credentials)
  }
  return Either.right(result)
}

/** The credentials for a registry; Docker Hub's names are interchangeable. */
export const credentialsFor = (
  config: ReadonlyMap<string, RegistryCredentials>,
  registry: string,
): RegistryCredentials | undefined => {
  const host = registry.toLowerCase()
  const exact = config.get(host)
  if (exact !== undefined) return exact
  if (DOCKER_HUB_ALIASES.includes(host))
    for (const alias of DOCKER_HUB_ALIASES) {
      const found = config.get(alias)
      if (found !== undefined) return found
    }
  return undefined
}

export const basicAuthorization = (credentials: RegistryCredentials) =>
  `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, "utf8").toString("base64")}`

/** Parses `Bearer realm="https://auth",service="registry",scope="repository:a/b:pull"` (RFC 7235 params). */
export const parseChallenge = (header: string): AuthChallenge | undefined => {
  const match = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header)
  if (match === null) return undefined
  const params: Record<string, string> = {}
  const param = /\s*([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))\s*,?/gy
  const rest = match[2] ?? ""
  let p: RegExpExecArray | null
  // biome-ignore lint/suspicious/noAssignInExpressions: sticky-regex scan
  while (param.lastIndex < rest.length && (p = param.exec(rest)) !== null) {
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, "$1") : (p[3] ?? "")
  }
  return { scheme: match[1]!.toLowerCase(), params }
}

/** The token endpoint URL of a Bearer challenge; the scope defaults to pulling `repository`. */
export const tokenRequestUrl = (challenge: AuthChallenge, repository: string): Either.Either<string, string> => {
  const realm = challenge.params.realm
  if (realm === undefined || realm === "") return Either.left("the Bearer challenge has no realm")
  let url: URL
  try {
    url = new URL(realm)
  } catch {
    return Either.left(`the Bearer realm "${realm}" is not a URL`)
  }
  if (challenge.params.service !== undefined) url.searchParams.set("service", challenge.params.service)
  url.searchParams.set("scope", challenge.params.scope ?? `repository:${repository}:pull`)
  return Either.right(url.href)
}

/** The token of a token endpoint's JSON answer (`token`, or the OAuth2 `access_token`). */
export const parseTokenResponse = (body: Uint8Array): Either.Either<string, string> => {
  try {
    const json = JSON.parse(Buffer.from(body).toString("utf8")) as Record<string, unknown>
    const token = typeof json.token === "string" && json.token !== "" ? json.token : json.access_token
    return typeof token === "string" && token !== ""
      ? Either.right(token)
      : Either.left("the token response has no token")
  } catch {
    return Either.left("the token response is not JSON")
  }
}
