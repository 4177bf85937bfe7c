/**
 * Token keys for the JWT authenticator: an OIDC issuer's JWKS found through its discovery
 * document (`<issuer>/.well-known/openid-configuration` → `jwks_uri`), a `JWT_RULE`'s
 * `jwksUri`, or a `JWT_RULE`'s inline `jwks`.
 *
 * Remote key sets are fetched on first use and kept for `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`
 * (refetched on the first token after that); a token naming an unknown key id refetches early,
 * at most once per cool-down, so a rotated issuer key is picked up without waiting. A failed
 * refresh keeps the previous keys; a failed first fetch (or discovery) is retried on the next
 * token. `JWKS_RESOLVER_INSECURE_SKIP_VERIFY` skips verification of the JWKS (and discovery)
 * server's certificate.
 */
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { type Jose, jose } from "../../services/ca/jose-library.js"

export interface JwksOptions {
  /** `JWKS_RESOLVER_INSECURE_SKIP_VERIFY` */
  readonly insecureSkipVerify?: boolean
  /** `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`, milliseconds; default 20 minutes. */
  readonly refreshIntervalMs?: number
  /** Least time between two refetches for unknown key ids, milliseconds; default 30 seconds. */
  readonly cooldownMs?: number
  /** The clock (tests pass their own). */
  readonly now?: () => number
}

export const DEFAULT_JWKS_REFRESH_MS = 20 * 60 * 1000
const DEFAULT_COOLDOWN_MS = 30 * 1000
const FETCH_TIMEOUT_MS = 10_000

/** GETs a JSON document over HTTP(S), optionally without verifying the server's certificate. */
export const getJson = (url: URL, insecureSkipVerify = false): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const https = url.protocol === "https:"
    if (!https && url.protocol !== "http:") return reject(new Error(`unsupported URL scheme ${url.protocol}`))
    const options = { timeout: FETCH_TIMEOUT_MS, headers: { accept: "application/json" } }
    const req = https
      ? httpsRequest(url, { ...options, rejectUnauthorized: !insecureSkipVerify })
      : httpRequest(url, options)
    req.on("timeout", () => req.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS / 1000}s`)))
    req.on("error", reject)
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("error", reject)
      res.on("end", () => {
        if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}`))
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
        } catch (e) {
          reject(new Error(`not JSON: ${(e as Error).message}`))
        }
      })
    })
    req.end()
  })

const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`

export const discoverJwksUri = async (issuer: string, options: JwksOptions = {}): Promise<URL> => {
  let doc: { issuer?: unknown; jwks_uri?: unknown }
  try {
    doc = (await getJson(new URL(discoveryUrl(issuer)), options.insecureSkipVerify)) as typeof doc
  } catch (e) {
    throw new Error(`OIDC discovery of ${issuer} failed: ${(e as Error).message}`)
  }
  if (doc.issuer !== issuer) {
    throw new Error(`OIDC discovery of ${issuer} failed: the document names issuer ${String(doc.issuer)}`)
  }
  if (typeof doc.jwks_uri !== "string") throw new Error(`OIDC discovery of ${issuer} failed: no jwks_uri`)
  return new URL(doc.jwks_uri)
}

/** A key set fetched from `locate()`'s URI, cached per the refresh interval. */
const cachedRemoteKeys = (locate: () => Promise<URL>, options: JwksOptions): Jose.JWTVerifyGetKey => {
  const now = options.now ?? Date.now
  const refreshMs = options.refreshIntervalMs ?? DEFAULT_JWKS_REFRESH_MS
  const cooldownMs = options.cooldownMs ?? DEFAULT_COOLDOWN_MS
  let cached: { readonly keys: Jose.JWTVerifyGetKey; readonly fetchedAt: number } | undefined
  let inflight: Promise<NonNullable<typeof cached>> | undefined

  const fetchKeys = () => {
    inflight ??= (async () => {
      const uri = await locate()
      let json: unknown
      try {
        json = await getJson(uri, options.insecureSkipVerify)
      } catch (e) {
        throw new Error(`fetching the JWKS at ${uri} failed: ${(e as Error).message}`)
      }
      const keys = jose().createLocalJWKSet(json as Jose.JSONWebKeySet)
      cached = { keys, fetchedAt: now() }
      return cached
    })().finally(() => {
      inflight = undefined
    })
    return inflight
  }
  /** Refetches; with keys already held, a failure keeps them. */
  const refresh = async () => {
    if (cached === undefined) return fetchKeys()
    const previous = cached
    return fetchKeys().catch(() => previous)
  }

  return async (header, token) => {
    let current = cached === undefined || now() - cached.fetchedAt >= refreshMs ? await refresh() : cached
    try {
      return await current.keys(header, token)
    } catch (e) {
      if ((e as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY" || now() - current.fetchedAt < cooldownMs)
        throw e
      current = await refresh()
      return current.keys(header, token)
    }
  }
}

/** Keys of an OIDC issuer; the discovery document is read once it succeeds. */
export const oidcKeyResolver = (issuer: string, options: JwksOptions = {}): Jose.JWTVerifyGetKey => {
  let uri: Promise<URL> | undefined
  const locate = () => {
    if (uri === undefined) {
      uri = discoverJwksUri(issuer, options)
      uri.catch(() => {
        uri = undefined
      })
    }
    return uri
  }
  return cachedRemoteKeys(locate, options)
}

export const remoteKeyResolver = (jwksUri: string, options: JwksOptions = {}): Jose.JWTVerifyGetKey => {
  const uri = new URL(jwksUri)
  return cachedRemoteKeys(() => Promise.resolve(uri), options)
}

export const localKeyResolver = (jwks: string): Jose.JWTVerifyGetKey =>
  jose().createLocalJWKSet(JSON.parse(jwks) as Jose.JSONWebKeySet)
