/**
 * The discovery server's callers, from `CaConfig`: every authenticator of the CA and of secure
 * xDS (client certificate, `TOKEN_ISSUER` / `JWT_RULE` tokens with an audience in
 * `TOKEN_AUDIENCES` + `AUDIENCE`, keys per `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL` and
 * `JWKS_RESOLVER_INSECURE_SKIP_VERIFY`), node impersonation per `CA_TRUSTED_NODE_ACCOUNTS`
 * (decided by `podLocator`), and the xDS stream guards per `XDS_AUTH`, `XDS_AUTH_PLAINTEXT`,
 * `PILOT_ENABLE_XDS_IDENTITY_CHECK` and `PILOT_SKIP_VALIDATE_TRUST_DOMAIN` (spec 000 §5 rules 1, 2, 7).
 */
import { Duration, Effect, Either, Layer } from "effect"
import type { Authenticator } from "../../services/ca/authenticate.js"
import { CaAuthenticators } from "../../services/ca/callers.js"
import { CaConfig, type CaConfigValues } from "../../services/ca/config.js"
import { CaConfigError } from "../../services/ca/errors.js"
import { makeXdsGuard } from "../../services/xds/protocol/xds-auth.js"
import { XdsGuards, type XdsGuardsShape } from "../../services/xds/protocol/xds-guards.js"
import { buildAuthenticators, buildNodeAuthorizer } from "./authenticators.js"

/** Every authenticator of the CA and of secure xDS. */
export const authenticatorsFromConfig = (
  config: Pick<
    CaConfigValues,
    | "trustDomain"
    | "extraAuthenticators"
    | "TOKEN_ISSUER"
    | "JWT_RULE"
    | "TOKEN_AUDIENCES"
    | "AUDIENCE"
    | "JWKS_RESOLVER_INSECURE_SKIP_VERIFY"
    | "PILOT_JWT_PUB_KEY_REFRESH_INTERVAL"
  >,
): Either.Either<ReadonlyArray<Authenticator>, string> =>
  Either.map(
    buildAuthenticators({
      trustDomain: config.trustDomain,
      tokenIssuer: config.TOKEN_ISSUER,
      jwtRule: config.JWT_RULE,
      tokenAudiences: config.TOKEN_AUDIENCES,
      audience: config.AUDIENCE,
      jwks: {
        insecureSkipVerify: config.JWKS_RESOLVER_INSECURE_SKIP_VERIFY,
        refreshIntervalMs: Duration.toMillis(config.PILOT_JWT_PUB_KEY_REFRESH_INTERVAL),
      },
    }),
    (list) => [...list, ...config.extraAuthenticators],
  )

/** The xDS stream guards of the secure and the plaintext listeners. */
export const xdsGuards = (
  config: Pick<
    CaConfigValues,
    | "trustDomain"
    | "trustDomainAliases"
    | "XDS_AUTH"
    | "XDS_AUTH_PLAINTEXT"
    | "PILOT_ENABLE_XDS_IDENTITY_CHECK"
    | "PILOT_SKIP_VALIDATE_TRUST_DOMAIN"
  >,
  authenticators: ReadonlyArray<Authenticator>,
): XdsGuardsShape => {
  const settings = {
    identityCheck: config.PILOT_ENABLE_XDS_IDENTITY_CHECK,
    skipValidateTrustDomain: config.PILOT_SKIP_VALIDATE_TRUST_DOMAIN,
    trustDomain: config.trustDomain,
    trustDomainAliases: config.trustDomainAliases,
  }
  return {
    secure: makeXdsGuard(authenticators, { ...settings, authenticate: config.XDS_AUTH }),
    plaintext: makeXdsGuard(authenticators, {
      ...settings,
      authenticate: config.XDS_AUTH && config.XDS_AUTH_PLAINTEXT,
    }),
  }
}

/** `CaAuthenticators` from `CaConfig`; a malformed `JWT_RULE` or node account list fails start-up. */
export const layerAuthenticators: Layer.Layer<CaAuthenticators, CaConfigError, CaConfig> = Layer.effect(
  CaAuthenticators,
  Effect.gen(function* () {
    const config = yield* CaConfig
    const authenticators = authenticatorsFromConfig(config)
    if (Either.isLeft(authenticators)) return yield* new CaConfigError({ reason: authenticators.left })
    const nodeAuthorizer = buildNodeAuthorizer(config.CA_TRUSTED_NODE_ACCOUNTS, config.trustDomain, config.podLocator)
    if (Either.isLeft(nodeAuthorizer)) return yield* new CaConfigError({ reason: nodeAuthorizer.left })
    return { authenticators: authenticators.right, nodeAuthorizer: nodeAuthorizer.right }
  }),
)

/** `XdsGuards` from `CaConfig` and the shared authenticators. */
export const layerXdsGuards: Layer.Layer<XdsGuards, never, CaConfig | CaAuthenticators> = Layer.effect(
  XdsGuards,
  Effect.gen(function* () {
    const config = yield* CaConfig
    const { authenticators } = yield* CaAuthenticators
    return xdsGuards(config, authenticators)
  }),
)
