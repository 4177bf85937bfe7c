/**
 * Token keys for the JWT authenticator: an OIDC issuer's JWKS found through its discovery
 * document (`<issuer>/.well-known/openid-configuration` → `jwks_uri`), a `JWT_RULE`'s
 * `jwksUri`, or a `JWT_RULE`'s inline `jwks`. Remote key sets are fetched on first use and
 * cached by jose (refetched when a token names an unknown key id); a failed discovery is
 * retried on the next token.
 */
import * as jose from "jose"

const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`

export const discoverJwksUri = async (issuer: string): Promise<URL> => {
  let response: Response
  try {
    response = await fetch(discoveryUrl(issuer), { signal: AbortSignal.timeout(10_000) })
  } catch (e) {
    throw new Error(`OIDC discovery of ${issuer} failed: ${(e as Error).message}`)
  }
  if (!response.ok) throw new Error(`OIDC discovery of ${issuer} failed: HTTP ${response.status}`)
  const doc = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown }
  if (doc.issuer !== issuer) {
    throw new Error(`OIDC discovery of ${issuer} failed: the document names issuer ${String(doc.issuer)}`)
  }
  if (typeof doc.jwks_uri !== "string") throw new Error(`OIDC discovery of ${issuer} failed: no jwks_uri`)
  return new URL(doc.jwks_uri)
}

/** Keys of an OIDC issuer, discovered lazily. */
export const oidcKeyResolver = (issuer: string): jose.JWTVerifyGetKey => {
  let keys: Promise<jose.JWTVerifyGetKey> | undefined
  return async (header, token) => {
    if (keys === undefined) {
      keys = discoverJwksUri(issuer).then((uri) => jose.createRemoteJWKSet(uri))
      keys.catch(() => {
        keys = undefined
      })
    }
    return (await keys)(header, token)
  }
}

export const remoteKeyResolver = (jwksUri: string): jose.JWTVerifyGetKey => jose.createRemoteJWKSet(new URL(jwksUri))

export const localKeyResolver = (jwks: string): jose.JWTVerifyGetKey =>
  jose.createLocalJWKSet(JSON.parse(jwks) as jose.JSONWebKeySet)
