/**
 * Which key sets the control plane resolves for the RequestAuthentications, and under which key
 * the resolved map holds them.
 *
 * Keys of the resolved map (`jwksKey`): a rule's `jwksUri` when it has one; otherwise
 * `issuer:<issuer>`, the key set found through the issuer's OIDC discovery document. A valid
 * `jwksUri` is an http(s) URL, so the two forms never collide.
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../config/duration.js"
import type { RequestAuthenticationSpec } from "../config-model/schemas/request-authentication.js"
import { openIdConfigurationUrl } from "./documents.js"
import type { JwksMode } from "./mode.js"

export type JwtRule = NonNullable<RequestAuthenticationSpec["jwtRules"]>[number]

/** The reference's JWKS fetch timeout, used when a rule sets none. */
export const DEFAULT_JWKS_TIMEOUT_NANOS = 5_000_000_000n

/** A rule's `timeout` (fetch timeout of its key set), or the default. */
export const ruleTimeoutNanos = (rule: Pick<JwtRule, "timeout">): bigint => {
  if (rule.timeout === undefined) return DEFAULT_JWKS_TIMEOUT_NANOS
  const nanos = Either.getOrElse(parseGoDurationNanos(rule.timeout), () => DEFAULT_JWKS_TIMEOUT_NANOS)
  return nanos > 0n ? nanos : DEFAULT_JWKS_TIMEOUT_NANOS
}

const hasText = (value: string | undefined): value is string => value !== undefined && value !== ""

const ISSUER_KEY_PREFIX = "issuer:"

/** The key of a rule's key set in the resolved map (see the module comment). */
export const jwksKey = (rule: Pick<JwtRule, "issuer" | "jwksUri">): string =>
  hasText(rule.jwksUri) ? rule.jwksUri : `${ISSUER_KEY_PREFIX}${rule.issuer}`

export interface JwksHostPort {
  readonly host: string
  readonly port: number
}

/** Host and port of an http(s) JWKS URI (the port defaults by scheme), or undefined. */
export const jwksHostPort = (uri: string): JwksHostPort | undefined => {
  try {
    const url = new URL(uri)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    if (url.hostname === "") return undefined
    const port = url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80
    return { host: url.hostname, port }
  } catch {
    return undefined
  }
}

/** Whether a host and port belong to a service of the mesh registry. */
export type IsMeshService = (host: string, port: number) => boolean

/** The predicate for a registry's services (hostname + service port). */
export const meshServiceLookup = (
  services: Iterable<{ readonly hostname: string; readonly ports: ReadonlyArray<{ readonly port: number }> }>,
): IsMeshService => {
  const known = new Set<string>()
  for (const service of services) for (const p of service.ports) known.add(`${service.hostname}:${p.port}`)
  return (host, port) => known.has(`${host}:${port}`)
}

/** One key set the control plane keeps resolved. */
export interface JwksTarget {
  /** Its key in the resolved map (`jwksKey`). */
  readonly key: string
  /** An issuer of a rule naming it (for logs; the discovery source when `jwksUri` is unset). */
  readonly issuer: string
  /** Where the keys are; undefined = discover it from the issuer's OIDC discovery document. */
  readonly jwksUri?: string
  /** Timeout of each HTTP request, milliseconds (the longest of the rules sharing the key). */
  readonly timeoutMs: number
}

/** Whether the control plane must resolve a rule's keys in a mode (undefined = not its job). */
const serverTarget = (rule: JwtRule, mode: JwksMode, isMeshService: IsMeshService): JwksTarget | undefined => {
  if (hasText(rule.jwks)) return undefined
  const timeoutMs = Number(ruleTimeoutNanos(rule) / 1_000_000n)
  if (!hasText(rule.jwksUri)) {
    // The proxy cannot discover a URI: discovery is the server's in every mode.
    return openIdConfigurationUrl(rule.issuer) === undefined
      ? undefined
      : { key: jwksKey(rule), issuer: rule.issuer, timeoutMs }
  }
  const target = jwksHostPort(rule.jwksUri)
  if (target === undefined) return undefined
  if (mode === "proxy") return undefined
  if (mode === "hybrid" && isMeshService(target.host, target.port)) return undefined
  return { key: jwksKey(rule), issuer: rule.issuer, jwksUri: rule.jwksUri, timeoutMs }
}

/**
 * The key sets the control plane resolves for these RequestAuthentications in a mode: every
 * rule without inline `jwks` in `server` mode; in `hybrid` mode those whose `jwksUri` host and
 * port is not a mesh service; in every mode the rules without `jwksUri` (OIDC discovery).
 * One target per key, in first-seen order.
 */
export const serverFetchTargets = (
  requestAuthentications: ReadonlyArray<{ readonly spec: RequestAuthenticationSpec }>,
  mode: JwksMode,
  isMeshService: IsMeshService,
): ReadonlyArray<JwksTarget> => {
  const byKey = new Map<string, JwksTarget>()
  for (const ra of requestAuthentications)
    for (const rule of ra.spec.jwtRules ?? []) {
      const target = serverTarget(rule, mode, isMeshService)
      if (target === undefined) continue
      const seen = byKey.get(target.key)
      if (seen === undefined) byKey.set(target.key, target)
      else if (target.timeoutMs > seen.timeoutMs) byKey.set(target.key, { ...seen, timeoutMs: target.timeoutMs })
    }
  return [...byKey.values()]
}
