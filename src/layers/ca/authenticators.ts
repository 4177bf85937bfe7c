/**
 * The authenticators of the CA server from the environment: the client certificate first (for
 * renewals), then a JWT authenticator for `TOKEN_ISSUER` (OIDC discovery) and one for
 * `JWT_RULE`, accepting the audiences of `TOKEN_AUDIENCES` (and `AUDIENCE`). An orchestrator
 * TokenReview authenticator is appended by the orchestrator layer when there is one.
 */
import { Either } from "effect"
import { type Authenticator, clientCertAuthenticator } from "../../services/ca/authenticate.js"
import {
  makeNodeAuthorizer,
  type NodeAuthorizer,
  type PodLocator,
  parseTrustedNodeAccounts,
} from "../../services/ca/identity.js"
import { acceptedAudiences, jwtAuthenticator, parseJwtRule } from "../../services/ca/jwt.js"
import { type JwksOptions, localKeyResolver, oidcKeyResolver, remoteKeyResolver } from "./oidc.js"

export interface AuthSettings {
  readonly trustDomain: string
  /** `TOKEN_ISSUER` */
  readonly tokenIssuer: string
  /** `JWT_RULE` (JSON) */
  readonly jwtRule: string
  /** `TOKEN_AUDIENCES` (comma-separated) */
  readonly tokenAudiences: string
  /** `AUDIENCE` */
  readonly audience: string
  /** How remote key sets are fetched (`JWKS_RESOLVER_INSECURE_SKIP_VERIFY`, `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL`). */
  readonly jwks?: JwksOptions
}

export const buildAuthenticators = (settings: AuthSettings): Either.Either<ReadonlyArray<Authenticator>, string> => {
  const audiences = acceptedAudiences(settings.tokenAudiences, settings.audience)
  const list: Array<Authenticator> = [clientCertAuthenticator()]
  if (settings.tokenIssuer.trim() !== "") {
    const issuer = settings.tokenIssuer.trim()
    list.push(
      jwtAuthenticator({
        issuer,
        audiences,
        trustDomain: settings.trustDomain,
        keys: oidcKeyResolver(issuer, settings.jwks),
      }),
    )
  }
  if (settings.jwtRule.trim() !== "") {
    const rule = parseJwtRule(settings.jwtRule)
    if (Either.isLeft(rule)) return Either.left(rule.left)
    const r = rule.right
    const keys =
      r.jwks !== undefined && r.jwks !== ""
        ? localKeyResolver(r.jwks)
        : r.jwksUri !== undefined && r.jwksUri !== ""
          ? remoteKeyResolver(r.jwksUri, settings.jwks)
          : oidcKeyResolver(r.issuer, settings.jwks)
    list.push(
      jwtAuthenticator({
        issuer: r.issuer,
        audiences: r.audiences.length > 0 ? r.audiences : audiences,
        trustDomain: settings.trustDomain,
        keys,
      }),
    )
  }
  return Either.right(list)
}

/** The node authorizer of `CA_TRUSTED_NODE_ACCOUNTS`; undefined when it is empty. */
export const buildNodeAuthorizer = (
  trustedNodeAccounts: string,
  trustDomain: string,
  locator: PodLocator,
): Either.Either<NodeAuthorizer | undefined, string> =>
  Either.map(parseTrustedNodeAccounts(trustedNodeAccounts), (accounts) =>
    accounts.length === 0 ? undefined : makeNodeAuthorizer(accounts, locator, trustDomain),
  )
