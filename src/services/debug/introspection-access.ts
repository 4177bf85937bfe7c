/**
 * Who may use the introspection listener (ControlZ), and what of the environment it shows.
 *
 * `--ctrlz_address '*'` puts the listener on every interface, so it must not hand the process
 * over to whoever can reach the port. The rule mirrors the debug interface's (`/debug/*` is
 * loopback-only): anything that changes the process (every method but GET/HEAD) and the views
 * that can carry credentials (`/envj/`, `/argsj/` and their pages `/envz/`, `/argsz/`) are
 * served to loopback callers only. The read-only status views and pages (scopes, process,
 * memory, version, metrics) stay open as in the reference, which serves them to whoever the
 * operator let reach the address.
 */

/** The views that may reveal credentials: the environment and the command line. */
const LOCAL_ONLY_VIEWS = new Set(["/envj", "/argsj", "/envz", "/argsz"])

/** Whether a request needs a loopback caller. `path` is the URL path without the query. */
export const requiresLocalCaller = (method: string, path: string): boolean => {
  const upper = method.toUpperCase()
  if (upper !== "GET" && upper !== "HEAD") return true
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
  return LOCAL_ONLY_VIEWS.has(trimmed)
}

/**
 * Names that look like they hold a secret: secrets, tokens, keys, passwords, credentials,
 * personal access tokens (`GITHUB_PAT`) and the like, anywhere in the name (`*SECRET*`,
 * `*CREDENTIAL*`, `*AUTH*`). Deliberately broad (a redacted harmless value costs nothing);
 * `PWD`/`OLDPWD` are paths, and `PAT`/`PASS` count only as a whole word (`PATH`, `PASSTHROUGH`
 * are not secrets).
 */
const SECRET_NAME =
  /secret|token|key|passw|passphrase|(^|_)pass($|_)|(^|_)pat($|_)|credential|private|auth|jwt|bearer|cookie|session/i

export const isSecretName = (name: string): boolean => SECRET_NAME.test(name)

export const REDACTED = "<redacted>"

/** `scheme://user:password@host` in a value (e.g. HTTPS_PROXY) keeps the user, loses the password. */
const URL_PASSWORD = /(\/\/[^/\s:@]*):[^/\s@]*@/g

/** The environment as `/envj/` shows it: `NAME=value` lines with secret-looking values redacted. */
export const redactedEnvironment = (env: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> =>
  Object.entries(env).map(([name, value]) =>
    isSecretName(name) ? `${name}=${REDACTED}` : `${name}=${(value ?? "").replace(URL_PASSWORD, `$1:${REDACTED}@`)}`,
  )
