/**
 * The push's JWKS input: how key sets are had (`PILOT_JWT_ENABLE_REMOTE_JWKS`) and those the
 * control plane resolved, keyed by `jwksKey` (services/jwks/targets.ts).
 */
import type { JwksMode } from "../../jwks/mode.js"

export interface JwksInput {
  readonly mode: JwksMode
  readonly resolved: ReadonlyMap<string, string>
}

/** Nothing resolved by the server: every proxy fetches its keys itself (the behaviour without a resolver). */
export const proxyFetchedJwks: JwksInput = { mode: "proxy", resolved: new Map() }
