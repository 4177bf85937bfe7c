/**
 * The agent's token exchange service (`--stsPort`, spec 001 part 1 rule 2): OAuth 2.0 token
 * exchange (RFC 8693) at `POST /token` on loopback, as the reference agent serves it to the proxy
 * (and to gRPC clients) that need a token for a cloud service.
 *
 * The reference exchanges the workload's subject token for a federated access token with the
 * cloud provider configured for the mesh. This build has no cloud provider, so the exchange is a
 * pass-through: a well-formed request gets its own subject token back as the access token, with
 * `expires_in` the seconds left before the token's `exp` claim (omitted when the JWT has none:
 * nothing says how long it lives). The request is checked as the reference checks it — POST,
 * form-encoded, the token-exchange grant, subject token type JWT — and, since the type says JWT,
 * the subject token must parse as one (its signature is not checked: whoever would accept the
 * token checks it) and not be expired. Anything else is answered 400 with an OAuth error body, so
 * a client misconfiguration shows at once rather than as a token some cloud later refuses.
 * `audience` and `scope` are accepted and unused: they only steer a real provider's exchange.
 */

export const STS_PATH = "/token"
export const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"
export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
export const JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
export const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"

/** The 200 body (RFC 8693 §2.2.1). */
export interface TokenExchangeSuccess {
  readonly access_token: string
  readonly issued_token_type: string
  readonly token_type: "Bearer"
  readonly expires_in?: number
}

/** The 400 body (RFC 6749 §5.2). */
export interface TokenExchangeError {
  readonly error: "invalid_request" | "unsupported_grant_type"
  readonly error_description: string
}

export type TokenExchangeAnswer =
  | { readonly status: 200; readonly body: TokenExchangeSuccess }
  | { readonly status: 400; readonly body: TokenExchangeError }

export interface TokenExchangeRequest {
  readonly method: string
  /** The Content-Type header, parameters included. */
  readonly contentType: string | undefined
  readonly body: string
  /** Now, in seconds since the epoch (for `expires_in`). */
  readonly nowSeconds: number
}

const invalid = (description: string): TokenExchangeAnswer => ({
  status: 400,
  body: { error: "invalid_request", error_description: description },
})

const base64UrlJson = (segment: string): unknown => {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return undefined
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
}

/** The claims of a compact JWT (header.payload.signature); undefined when the token is not one. */
export const jwtClaims = (token: string): Readonly<Record<string, unknown>> | undefined => {
  const parts = token.split(".")
  if (parts.length !== 3) return undefined
  const header = base64UrlJson(parts[0]!)
  const claims = base64UrlJson(parts[1]!)
  if (typeof header !== "object" || header === null || typeof claims !== "object" || claims === null) return undefined
  return claims as Record<string, unknown>
}

/** The answer to one request to the token endpoint. */
export const exchangeToken = (request: TokenExchangeRequest): TokenExchangeAnswer => {
  if (request.method !== "POST") return invalid(`request method is invalid, should be POST but got ${request.method}`)
  const mediaType = (request.contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType !== FORM_CONTENT_TYPE)
    return invalid(`request content type is invalid, should be ${FORM_CONTENT_TYPE} but got ${mediaType || "none"}`)
  const form = new URLSearchParams(request.body)
  const grantType = form.get("grant_type") ?? ""
  if (grantType === "") return invalid("grant_type is missing")
  if (grantType !== TOKEN_EXCHANGE_GRANT)
    return {
      status: 400,
      body: {
        error: "unsupported_grant_type",
        error_description: `grant_type should be ${TOKEN_EXCHANGE_GRANT} but got ${grantType}`,
      },
    }
  const subjectTokenType = form.get("subject_token_type") ?? ""
  if (subjectTokenType !== JWT_TOKEN_TYPE)
    return invalid(`subject_token_type should be ${JWT_TOKEN_TYPE} but got ${subjectTokenType || "none"}`)
  const subjectToken = form.get("subject_token") ?? ""
  if (subjectToken === "") return invalid("subject_token is missing")
  const requested = form.get("requested_token_type") ?? ""
  if (requested !== "" && requested !== ACCESS_TOKEN_TYPE)
    return invalid(`requested_token_type should be ${ACCESS_TOKEN_TYPE} but got ${requested}`)
  const claims = jwtClaims(subjectToken)
  if (claims === undefined) return invalid("subject_token is not a JWT")
  const exp = claims.exp
  let expiresIn: number | undefined
  if (typeof exp === "number" && Number.isFinite(exp)) {
    expiresIn = Math.floor(exp - request.nowSeconds)
    if (expiresIn <= 0) return invalid("subject_token has expired")
  }
  return {
    status: 200,
    body: {
      access_token: subjectToken,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}),
    },
  }
}
