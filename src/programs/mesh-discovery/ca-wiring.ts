/**
 * Builds the certificate authority of `mesh-discovery` from its environment (`discoveryEnv`)
 * and the `--secureGRPCAddr` listen address.
 *
 * - Key material: a plugged-in CA in `ROOT_CA_DIR` when its files are there (watched and
 *   hot-reloaded; an incomplete bundle fails start-up), otherwise a self-signed root
 *   (`MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE`, `MESHCA_SELF_SIGNED_CA_CERT_TTL`) kept in the state
 *   directory `DEFAULT_CA_STATE_DIR` (`./var/lib/meshd/ca`, relative to the working directory,
 *   unless the caller passes another) so that a restart keeps the same root. The root is
 *   rotated per `MESHCA_SELF_SIGNED_ROOT_CERT_*`.
 * - The gRPC CreateCertificate server on `--secureGRPCAddr` (TLS), unless `ENABLE_CA_SERVER` is
 *   false; its serving certificate covers `meshd.<namespace>.svc` (and the revision's name) plus
 *   `MESHD_CUSTOM_HOST`.
 * - Callers are authenticated by client certificate, by `TOKEN_ISSUER` / `JWT_RULE` tokens with an
 *   audience in `TOKEN_AUDIENCES` (+ `AUDIENCE`); `CA_TRUSTED_NODE_ACCOUNTS` enables node
 *   impersonation, decided by `podLocator` (the orchestrator's; without one, refused).
 */
import { Either, Layer } from "effect"
import { buildAuthenticators, buildNodeAuthorizer } from "../../layers/ca/authenticators.js"
import { type CaSettings, certificateAuthorityLayer } from "../../layers/ca/authority.js"
import { type CaServerError, type CaServerTls, caGrpcServerLayer } from "../../layers/ca/grpc-server.js"
import type { Authenticator } from "../../services/ca/authenticate.js"
import type { CertificateAuthority } from "../../services/ca/ca.js"
import { MIN_RSA_BITS } from "../../services/ca/csr.js"
import { CaConfigError, type CaMaterialError } from "../../services/ca/errors.js"
import { noPodLocator, type PodLocator } from "../../services/ca/identity.js"
import type { discoveryEnv } from "../../services/config/discovery-env.js"
import type { EnvValues } from "../../services/config/env.js"
import { DEFAULT_TRUST_DOMAIN, SYSTEM_NAMESPACE } from "../../services/constants.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import { CIPHER_SUITE_OPENSSL_NAMES } from "../../services/net/cipher-suites.js"

export const DEFAULT_CA_STATE_DIR = "./var/lib/meshd/ca"

/** The discovery environment variables the CA reads. */
export type CaEnv = Pick<
  EnvValues<typeof discoveryEnv>,
  | "AUDIENCE"
  | "CA_TRUSTED_NODE_ACCOUNTS"
  | "MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR"
  | "MESHCA_SELF_SIGNED_CA_CERT_TTL"
  | "MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE"
  | "MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL"
  | "MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE"
  | "DEFAULT_WORKLOAD_CERT_TTL"
  | "MAX_WORKLOAD_CERT_TTL"
  | "ENABLE_CA_SERVER"
  | "MESHD_CUSTOM_HOST"
  | "ROOT_CA_DIR"
  | "TOKEN_AUDIENCES"
  | "TOKEN_ISSUER"
  | "JWT_RULE"
  | "REVISION"
  | "COMPLIANCE_POLICY"
>

export interface CaWiringOptions {
  /** `--secureGRPCAddr` */
  readonly secureGrpcAddr: ListenAddress
  /** The namespace the server runs in (`--namespace` / `POD_NAMESPACE`); default mesh-system. */
  readonly namespace?: string
  /** Trust domain of issued identities (mesh config); default cluster.local. */
  readonly trustDomain?: string
  /** Where the self-signed root is kept; default `DEFAULT_CA_STATE_DIR`. */
  readonly stateDir?: string
  /** The orchestrator's pod locator, for `CA_TRUSTED_NODE_ACCOUNTS` impersonation. */
  readonly podLocator?: PodLocator
  /** Extra authenticators (e.g. the orchestrator TokenReview authenticator), tried after the built-in ones. */
  readonly extraAuthenticators?: ReadonlyArray<Authenticator>
  /** `--tls-cipher-suites` (Go names); empty = the TLS stack's defaults. */
  readonly cipherSuites?: ReadonlyArray<string>
}

/** TLS 1.2 with ECDHE and AES-GCM only, on P-256/P-384: the reference's `fips-140-2` policy. */
export const FIPS_140_2_CIPHER_SUITES = [
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
] as const

/** The CA listener's TLS restrictions from `--tls-cipher-suites` and `COMPLIANCE_POLICY`. */
export const caServerTls = (
  compliancePolicy: string,
  cipherSuites: ReadonlyArray<string>,
): Either.Either<CaServerTls, string> => {
  const names = (suites: ReadonlyArray<string>) => {
    const unknown = suites.filter((suite) => CIPHER_SUITE_OPENSSL_NAMES[suite] === undefined)
    return unknown.length > 0
      ? Either.left(`unknown TLS cipher suite(s): ${unknown.join(", ")}`)
      : Either.right(suites.map((suite) => CIPHER_SUITE_OPENSSL_NAMES[suite]!).join(":"))
  }
  if (compliancePolicy === "fips-140-2") {
    return Either.map(names(FIPS_140_2_CIPHER_SUITES), (ciphers) => ({
      ciphers,
      minVersion: "TLSv1.2" as const,
      maxVersion: "TLSv1.2" as const,
      ecdhCurve: "P-256:P-384",
    }))
  }
  if (compliancePolicy !== "")
    return Either.left(`COMPLIANCE_POLICY=${compliancePolicy} is not supported (empty or fips-140-2)`)
  if (cipherSuites.length === 0) return Either.right({})
  return Either.map(names(cipherSuites), (ciphers) => ({ ciphers }))
}

/** DNS names of the server's own certificate: meshd.<ns>.svc, the revision's name, MESHD_CUSTOM_HOST. */
export const serverDnsNames = (env: Pick<CaEnv, "MESHD_CUSTOM_HOST" | "REVISION">, namespace: string) => {
  const names = [`meshd.${namespace}.svc`]
  if (env.REVISION !== "" && env.REVISION !== "default") names.push(`meshd-${env.REVISION}.${namespace}.svc`)
  for (const host of env.MESHD_CUSTOM_HOST.split(",").map((h) => h.trim())) {
    if (host !== "" && !names.includes(host)) names.push(host)
  }
  return names
}

/** The CA's own settings from the environment. */
export const caSettingsFromEnv = (env: CaEnv, options: Omit<CaWiringOptions, "secureGrpcAddr"> = {}): CaSettings => ({
  trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
  rootCaDir: env.ROOT_CA_DIR,
  stateDir: options.stateDir ?? DEFAULT_CA_STATE_DIR,
  rsaKeySize: env.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE,
  selfSignedTtl: env.MESHCA_SELF_SIGNED_CA_CERT_TTL,
  rotation: {
    checkInterval: env.MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL,
    gracePeriodPercentile: env.MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE,
    enableJitter: env.MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR,
  },
  policy: { defaultTtl: env.DEFAULT_WORKLOAD_CERT_TTL, maxTtl: env.MAX_WORKLOAD_CERT_TTL },
})

/**
 * The CertificateAuthority (always: the secure xDS and webhook listeners take their serving
 * certificates from it) and, when `ENABLE_CA_SERVER` is true, the CreateCertificate server on
 * `--secureGRPCAddr` running alongside.
 */
export const caLayer = (
  env: CaEnv,
  options: CaWiringOptions,
): Layer.Layer<CertificateAuthority, CaConfigError | CaMaterialError | CaServerError, Metrics> => {
  const trustDomain = options.trustDomain ?? DEFAULT_TRUST_DOMAIN
  const namespace = options.namespace ?? SYSTEM_NAMESPACE
  if (env.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE < MIN_RSA_BITS) {
    return Layer.fail(
      new CaConfigError({
        reason: `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=${env.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE} is below ${MIN_RSA_BITS}`,
      }),
    )
  }
  const authority = certificateAuthorityLayer(caSettingsFromEnv(env, options))
  if (!env.ENABLE_CA_SERVER) return authority
  const authenticators = buildAuthenticators({
    trustDomain,
    tokenIssuer: env.TOKEN_ISSUER,
    jwtRule: env.JWT_RULE,
    tokenAudiences: env.TOKEN_AUDIENCES,
    audience: env.AUDIENCE,
  })
  if (Either.isLeft(authenticators)) return Layer.fail(new CaConfigError({ reason: authenticators.left }))
  const nodeAuthorizer = buildNodeAuthorizer(
    env.CA_TRUSTED_NODE_ACCOUNTS,
    trustDomain,
    options.podLocator ?? noPodLocator,
  )
  if (Either.isLeft(nodeAuthorizer)) return Layer.fail(new CaConfigError({ reason: nodeAuthorizer.left }))
  const tls = caServerTls(env.COMPLIANCE_POLICY, options.cipherSuites ?? [])
  if (Either.isLeft(tls)) return Layer.fail(new CaConfigError({ reason: tls.left }))
  const server = caGrpcServerLayer({
    tls: tls.right,
    address: options.secureGrpcAddr,
    dnsNames: serverDnsNames(env, namespace),
    authenticators: [...authenticators.right, ...(options.extraAuthenticators ?? [])],
    nodeAuthorizer: nodeAuthorizer.right,
  })
  // `authority` appears twice but is built once: layers are shared by reference within a build.
  return Layer.merge(authority, Layer.discard(Layer.provide(server, authority)))
}
