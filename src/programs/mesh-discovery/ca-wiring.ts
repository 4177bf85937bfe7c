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
 * - The secure gRPC listener on `--secureGRPCAddr` (TLS): secure ADS always, CreateCertificate
 *   unless `ENABLE_CA_SERVER` is false. Its certificate comes from `--tlsCertFile`/`--tlsKeyFile`
 *   when given (`--caCertFile` adds client-certificate roots), else per `PILOT_CERT_PROVIDER`
 *   (`meshd`: issued by the CA for `meshd.<namespace>.svc`, the revision's name and
 *   `MESHD_CUSTOM_HOST`). xDS streams are guarded per `XDS_AUTH`, `XDS_AUTH_PLAINTEXT`,
 *   `PILOT_ENABLE_XDS_IDENTITY_CHECK` and `PILOT_SKIP_VALIDATE_TRUST_DOMAIN`.
 * - Callers are authenticated by client certificate, by `TOKEN_ISSUER` / `JWT_RULE` tokens with an
 *   audience in `TOKEN_AUDIENCES` (+ `AUDIENCE`; keys per `PILOT_JWT_PUB_KEY_REFRESH_INTERVAL` and
 *   `JWKS_RESOLVER_INSECURE_SKIP_VERIFY`); `CA_TRUSTED_NODE_ACCOUNTS` enables node
 *   impersonation, decided by `podLocator` (the orchestrator's; without one, refused).
 */
import { Duration, Effect, Either, Layer, Stream } from "effect"
import { buildAuthenticators, buildNodeAuthorizer } from "../../layers/ca/authenticators.js"
import { type CaSettings, certificateAuthorityLayer } from "../../layers/ca/authority.js"
import { type CaServerTls, caServiceLayer } from "../../layers/ca/grpc-server.js"
import {
  type SecureGrpcError,
  SecureGrpcListener,
  type ServingCertSource,
  secureGrpcListenerLayer,
  startSecureGrpcLayer,
} from "../../layers/secure-grpc/listener.js"
import {
  caIssuedCertSource,
  fileCertSource,
  ServingCert,
  shareServingCertSource,
} from "../../layers/secure-grpc/serving-cert.js"
import { AdsGrpcService } from "../../layers/xds/ads-server.js"
import type { Authenticator } from "../../services/ca/authenticate.js"
import { CertificateAuthority } from "../../services/ca/ca.js"
import { MIN_RSA_BITS } from "../../services/ca/csr.js"
import { CaConfigError, type CaMaterialError } from "../../services/ca/errors.js"
import { noPodLocator, type PodLocator } from "../../services/ca/identity.js"
import { trustBundlePem } from "../../services/ca/material.js"
import type { discoveryEnv } from "../../services/config/discovery-env.js"
import type { EnvValues } from "../../services/config/env.js"
import { DEFAULT_TRUST_DOMAIN, SYSTEM_NAMESPACE } from "../../services/constants.js"
import type { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import { CIPHER_SUITE_OPENSSL_NAMES } from "../../services/net/cipher-suites.js"
import { makeXdsGuard, type XdsGuard } from "../../services/xds/protocol/xds-auth.js"

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
  | "PILOT_CERT_PROVIDER"
  | "XDS_AUTH"
  | "XDS_AUTH_PLAINTEXT"
  | "PILOT_ENABLE_XDS_IDENTITY_CHECK"
  | "PILOT_SKIP_VALIDATE_TRUST_DOMAIN"
  | "JWKS_RESOLVER_INSECURE_SKIP_VERIFY"
  | "PILOT_JWT_PUB_KEY_REFRESH_INTERVAL"
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
  /** `--tlsCertFile` / `--tlsKeyFile` / `--caCertFile`; empty = not given. */
  readonly tlsCertFile?: string
  readonly tlsKeyFile?: string
  readonly caCertFile?: string
  /** The mesh config's trust domain aliases (accepted by the xDS identity check). */
  readonly trustDomainAliases?: ReadonlyArray<string>
  /** grpc-js options of the secure listener (the ADS keepalive and size limits). */
  readonly serverOptions?: import("@grpc/grpc-js").ServerOptions
  /** Where `PILOT_CERT_PROVIDER=custom` finds tls.crt, tls.key and ca.crt; default `CUSTOM_CERTS_DIR`. */
  readonly customCertsDir?: string
}

/** Where `PILOT_CERT_PROVIDER=custom` reads mounted certificates (relative to the working directory). */
export const CUSTOM_CERTS_DIR = "./var/run/secrets/meshd/tls"

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

/** Every authenticator of the CA and of secure xDS, from the environment. */
export const authenticatorsFromEnv = (
  env: CaEnv,
  options: Pick<CaWiringOptions, "trustDomain" | "extraAuthenticators">,
): Either.Either<ReadonlyArray<Authenticator>, string> =>
  Either.map(
    buildAuthenticators({
      trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
      tokenIssuer: env.TOKEN_ISSUER,
      jwtRule: env.JWT_RULE,
      tokenAudiences: env.TOKEN_AUDIENCES,
      audience: env.AUDIENCE,
      jwks: {
        insecureSkipVerify: env.JWKS_RESOLVER_INSECURE_SKIP_VERIFY,
        refreshIntervalMs: Duration.toMillis(env.PILOT_JWT_PUB_KEY_REFRESH_INTERVAL),
      },
    }),
    (list) => [...list, ...(options.extraAuthenticators ?? [])],
  )

/** The xDS stream guards of the secure and the plaintext listeners (spec 000 §5 rules 1, 2, 7). */
export const xdsGuards = (
  env: CaEnv,
  authenticators: ReadonlyArray<Authenticator>,
  options: Pick<CaWiringOptions, "trustDomain" | "trustDomainAliases">,
): { readonly secure: XdsGuard; readonly plaintext: XdsGuard } => {
  const settings = {
    identityCheck: env.PILOT_ENABLE_XDS_IDENTITY_CHECK,
    skipValidateTrustDomain: env.PILOT_SKIP_VALIDATE_TRUST_DOMAIN,
    trustDomain: options.trustDomain ?? DEFAULT_TRUST_DOMAIN,
    trustDomainAliases: options.trustDomainAliases ?? [],
  }
  return {
    secure: makeXdsGuard(authenticators, { ...settings, authenticate: env.XDS_AUTH }),
    plaintext: makeXdsGuard(authenticators, { ...settings, authenticate: env.XDS_AUTH && env.XDS_AUTH_PLAINTEXT }),
  }
}

/**
 * Where the secure listener's certificate comes from: `--tlsCertFile`/`--tlsKeyFile` when given
 * (whatever `PILOT_CERT_PROVIDER` says, as the spec has it), else per `PILOT_CERT_PROVIDER`:
 * `meshd` → issued by the built-in CA; `custom` → mounted files in `customCertsDir`;
 * `kubernetes` / `k8s.io/NAME` → the orchestrator's signer, not available here (an error);
 * anything else (e.g. `none`) → no certificate, so no secure listener (undefined).
 */
export const servingCertSourceFromEnv = (
  env: Pick<CaEnv, "PILOT_CERT_PROVIDER" | "MESHD_CUSTOM_HOST" | "REVISION">,
  options: Pick<CaWiringOptions, "tlsCertFile" | "tlsKeyFile" | "caCertFile" | "namespace" | "customCertsDir">,
): Either.Either<ServingCertSource<SecureGrpcError, CertificateAuthority> | undefined, string> => {
  const certFile = options.tlsCertFile ?? ""
  const keyFile = options.tlsKeyFile ?? ""
  const caCertFile = options.caCertFile ?? ""
  // Client certificates from mesh proxies verify against the CA's roots as well as --caCertFile.
  const meshRoots = Stream.unwrap(Effect.map(CertificateAuthority, (ca) => Stream.map(ca.changes, trustBundlePem)))
  if (certFile !== "" || keyFile !== "") {
    if (certFile === "") return Either.left(`--tlsKeyFile=${keyFile} is given without --tlsCertFile`)
    if (keyFile === "") return Either.left(`--tlsCertFile=${certFile} is given without --tlsKeyFile`)
    return Either.right(fileCertSource({ certFile, keyFile, caCertFile }, { meshRoots }))
  }
  if (caCertFile !== "") return Either.left(`--caCertFile=${caCertFile} is given without --tlsCertFile/--tlsKeyFile`)
  const provider = env.PILOT_CERT_PROVIDER
  if (provider === "meshd" || provider === "istiod") {
    return Either.right(caIssuedCertSource(serverDnsNames(env, options.namespace ?? SYSTEM_NAMESPACE)))
  }
  if (provider === "kubernetes" || provider.startsWith("k8s.io/")) {
    return Either.left(
      `PILOT_CERT_PROVIDER=${provider} needs the orchestrator's certificate signer, which is not supported without an orchestrator: use meshd, or --tlsCertFile/--tlsKeyFile`,
    )
  }
  if (provider === "custom") {
    const dir = (options.customCertsDir ?? CUSTOM_CERTS_DIR).replace(/\/+$/, "")
    return Either.right(
      fileCertSource(
        { certFile: `${dir}/tls.crt`, keyFile: `${dir}/tls.key`, caCertFile: `${dir}/ca.crt` },
        { meshRoots },
      ),
    )
  }
  return Either.right(undefined)
}

/** The CertificateAuthority: always (the secure listener may take its certificate from it). */
export const caAuthorityLayer = (
  env: CaEnv,
  options: Omit<CaWiringOptions, "secureGrpcAddr"> = {},
): Layer.Layer<CertificateAuthority, CaConfigError | CaMaterialError, Metrics> => {
  if (env.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE < MIN_RSA_BITS) {
    return Layer.fail(
      new CaConfigError({
        reason: `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=${env.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE} is below ${MIN_RSA_BITS}`,
      }),
    )
  }
  return certificateAuthorityLayer(caSettingsFromEnv(env, options))
}

/**
 * The server's own certificate (`servingCertSourceFromEnv`) and TLS restrictions, built once and
 * shared by the secure gRPC listener and the HTTPS webhook listener.
 */
export const servingCertLayer = (
  env: CaEnv,
  options: Pick<
    CaWiringOptions,
    "tlsCertFile" | "tlsKeyFile" | "caCertFile" | "namespace" | "customCertsDir" | "cipherSuites"
  >,
): Layer.Layer<ServingCert, CaConfigError | SecureGrpcError, CertificateAuthority> => {
  const tls = caServerTls(env.COMPLIANCE_POLICY, options.cipherSuites ?? [])
  if (Either.isLeft(tls)) return Layer.fail(new CaConfigError({ reason: tls.left }))
  const source = servingCertSourceFromEnv(env, options)
  if (Either.isLeft(source)) return Layer.fail(new CaConfigError({ reason: source.left }))
  const from = source.right
  if (from === undefined) return Layer.succeed(ServingCert, { source: undefined, tls: tls.right })
  return Layer.scoped(
    ServingCert,
    Effect.map(shareServingCertSource(from), (shared) => ({ source: shared, tls: tls.right })),
  )
}

/**
 * The secure gRPC listener on `--secureGRPCAddr`: the CA service when `ENABLE_CA_SERVER`, plus
 * `services` (secure ADS), bound once every service is added; its certificate from `ServingCert`.
 * Without a serving certificate (`PILOT_CERT_PROVIDER=none`) or without any service, nothing listens.
 */
export const secureGrpcLayer = <R>(
  env: CaEnv,
  options: CaWiringOptions,
  services: Layer.Layer<never, never, R> | undefined,
): Layer.Layer<
  never,
  CaConfigError | SecureGrpcError,
  CertificateAuthority | Metrics | ServingCert | Exclude<R, SecureGrpcListener>
> => {
  const trustDomain = options.trustDomain ?? DEFAULT_TRUST_DOMAIN
  const authenticators = authenticatorsFromEnv(env, options)
  if (Either.isLeft(authenticators)) return Layer.fail(new CaConfigError({ reason: authenticators.left }))
  const nodeAuthorizer = buildNodeAuthorizer(
    env.CA_TRUSTED_NODE_ACCOUNTS,
    trustDomain,
    options.podLocator ?? noPodLocator,
  )
  if (Either.isLeft(nodeAuthorizer)) return Layer.fail(new CaConfigError({ reason: nodeAuthorizer.left }))
  const all: Array<Layer.Layer<never, never, R | SecureGrpcListener | CertificateAuthority | Metrics>> = [
    ...(env.ENABLE_CA_SERVER
      ? [caServiceLayer({ authenticators: authenticators.right, nodeAuthorizer: nodeAuthorizer.right })]
      : []),
    ...(services !== undefined ? [services] : []),
  ]
  if (all.length === 0) return Layer.empty
  const [first, ...rest] = all
  const added = rest.reduce((acc, layer) => Layer.merge(acc, layer), first!)
  return Layer.unwrapEffect(
    Effect.map(ServingCert, (cert) => {
      if (cert.source === undefined) {
        return Layer.effectDiscard(
          Effect.logWarning(
            `PILOT_CERT_PROVIDER=${env.PILOT_CERT_PROVIDER} and no --tlsCertFile: the secure gRPC listener (secure xDS, CA) on --secureGRPCAddr is disabled`,
          ),
        )
      }
      const listener = secureGrpcListenerLayer(
        {
          address: options.secureGrpcAddr,
          tls: cert.tls,
          ...(options.serverOptions !== undefined ? { serverOptions: options.serverOptions } : {}),
        },
        cert.source,
      )
      // Services first, then bind: the port never answers UNIMPLEMENTED while starting.
      return Layer.provide(Layer.provide(startSecureGrpcLayer, added), listener)
    }),
  )
}

/** Secure ADS on the secure listener, every stream through `guard`. */
export const secureAdsLayer = (guard: XdsGuard): Layer.Layer<never, never, SecureGrpcListener | AdsGrpcService> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const ads = yield* AdsGrpcService
      const listener = yield* SecureGrpcListener
      yield* listener.addService(ads.definition, yield* ads.serve(guard))
    }),
  )

/**
 * The CertificateAuthority and, when `ENABLE_CA_SERVER` is true, the CreateCertificate service
 * on its own secure listener (no ADS). `mesh-discovery` uses `caAuthorityLayer` and
 * `secureGrpcLayer` with secure ADS instead.
 */
export const caLayer = (
  env: CaEnv,
  options: CaWiringOptions,
): Layer.Layer<CertificateAuthority, CaConfigError | CaMaterialError | SecureGrpcError, Metrics> => {
  const authority = caAuthorityLayer(env, options)
  // `authority` appears twice but is built once: layers are shared by reference within a build.
  const secure = Layer.provide(secureGrpcLayer<never>(env, options, undefined), servingCertLayer(env, options))
  return Layer.merge(authority, Layer.provide(secure, authority))
}
