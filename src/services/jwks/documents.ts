/**
 * The two documents the JWKS resolver reads: an issuer's OIDC discovery document
 * (`<issuer>/.well-known/openid-configuration`, whose `jwks_uri` names the key set) and a JWKS
 * (a JSON object with a `keys` array). Bodies larger than `MAX_DOCUMENT_BYTES` are refused by
 * the fetcher before they reach these checks.
 */
import { Either } from "effect"

/** Largest discovery document or key set the server accepts (a real JWKS is a few KiB). */
export const MAX_DOCUMENT_BYTES = 1024 * 1024

const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration"

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value)
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
  } catch {
    return false
  }
}

/** Where an issuer's discovery document is; undefined when the issuer is not an http(s) URL. */
export const openIdConfigurationUrl = (issuer: string): string | undefined =>
  isHttpUrl(issuer) ? `${issuer.replace(/\/+$/, "")}${OPENID_CONFIGURATION_PATH}` : undefined

const parseObject = (body: string): Either.Either<Readonly<Record<string, unknown>>, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch (error) {
    return Either.left(`not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
    ? Either.right(parsed as Readonly<Record<string, unknown>>)
    : Either.left("not a JSON object")
}

/** The `jwks_uri` of a discovery document (an http(s) URL), or why there is none. */
export const parseOpenIdConfiguration = (body: string): Either.Either<string, string> =>
  Either.flatMap(parseObject(body), (doc) => {
    const uri = doc.jwks_uri
    if (typeof uri !== "string" || uri === "") return Either.left("the discovery document has no jwks_uri")
    if (!isHttpUrl(uri))
      return Either.left(`the discovery document's jwks_uri ${JSON.stringify(uri)} is not an http(s) URL`)
    return Either.right(uri)
  })

/**
 * A key set as the generator inlines it (compact JSON, so that a re-serialised but equal
 * document does not count as a change), or why the body is not one.
 */
export const checkJwks = (body: string): Either.Either<string, string> =>
  Either.flatMap(parseObject(body), (doc) => {
    const keys = doc.keys
    if (!Array.isArray(keys)) return Either.left("the JWKS has no keys array")
    const bad = keys.findIndex((key) => typeof key !== "object" || key === null || Array.isArray(key))
    if (bad >= 0) return Either.left(`the JWKS's keys[${bad}] is not an object`)
    return Either.right(JSON.stringify(doc))
  })
