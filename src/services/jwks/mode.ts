/**
 * `PILOT_JWT_ENABLE_REMOTE_JWKS`: who fetches the key sets of RequestAuthentication rules.
 *
 * - `server`: the control plane fetches every key set and the generator inlines it
 *   (`meshd`, `false`; the reference's `istiod` is read the same way).
 * - `hybrid`: the proxy fetches when the JWKS host is a mesh service it has a cluster for, the
 *   control plane fetches the others (`hybrid`, `true`).
 * - `proxy`: the proxy always fetches (`proxy`; the reference's `envoy`).
 *
 * Rules without a `jwksUri` are always resolved by the control plane (OIDC discovery), whatever
 * the mode: the proxy cannot discover a URI.
 */
export type JwksMode = "server" | "hybrid" | "proxy"

export interface ParsedJwksMode {
  readonly mode: JwksMode
  /** Set when the value was not recognised (the mode is then `server`); the caller logs it. */
  readonly error?: string
}

const MODES: ReadonlyMap<string, JwksMode> = new Map([
  ["meshd", "server"],
  ["istiod", "server"],
  ["false", "server"],
  ["hybrid", "hybrid"],
  ["true", "hybrid"],
  ["proxy", "proxy"],
  ["envoy", "proxy"],
])

/** The mode named by `PILOT_JWT_ENABLE_REMOTE_JWKS` (case-insensitive, as the reference reads it). */
export const parseJwksMode = (value: string): ParsedJwksMode => {
  const normalized = value.trim().toLowerCase()
  // Unset behaves as the default.
  if (normalized === "") return { mode: "server" }
  const mode = MODES.get(normalized)
  if (mode !== undefined) return { mode }
  return {
    mode: "server",
    error: `PILOT_JWT_ENABLE_REMOTE_JWKS=${JSON.stringify(value)} is not one of meshd, false, hybrid, true, proxy; the server fetches JWKS`,
  }
}
