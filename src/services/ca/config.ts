/**
 * `CaConfig`: what the certificate authority of `mesh-discovery`, its secure gRPC listener and
 * the xDS stream guards read — the CA and identity variables of `discoveryEnv` plus the flags
 * and mesh-config fields they depend on (`--secureGRPCAddr`, `--namespace`, `--tlsCertFile`, ...).
 */
import type { ServerOptions } from "@grpc/grpc-js"
import { discoveryEnv } from "../config/discovery-env.js"
import { EnvConfig } from "../config/env-config.js"
import { DEFAULT_TRUST_DOMAIN, Ports, SYSTEM_NAMESPACE } from "../constants.js"
import type { ListenAddress } from "../net/address.js"
import type { Authenticator } from "./authenticate.js"
import { noPodLocator, type PodLocator } from "./identity.js"

/** Where the self-signed root is kept across restarts (relative to the working directory). */
export const DEFAULT_CA_STATE_DIR = "./var/lib/meshd/ca"

/** Where `PILOT_CERT_PROVIDER=custom` reads mounted certificates (relative to the working directory). */
export const CUSTOM_CERTS_DIR = "./var/run/secrets/meshd/tls"

/** The flag- and mesh-derived fields of `CaConfig`. */
export interface CaFields {
  /** `--secureGRPCAddr` */
  readonly secureGrpcAddr: ListenAddress
  /** The namespace the server runs in (`--namespace` / `POD_NAMESPACE`). */
  readonly namespace: string
  /** Trust domain of issued identities (mesh config). */
  readonly trustDomain: string
  /** The mesh config's trust domain aliases (accepted by the xDS identity check). */
  readonly trustDomainAliases: ReadonlyArray<string>
  /** Where the self-signed root is kept. */
  readonly stateDir: string
  /** The orchestrator's pod locator, for `CA_TRUSTED_NODE_ACCOUNTS` impersonation. */
  readonly podLocator: PodLocator
  /** Extra authenticators (e.g. the orchestrator TokenReview authenticator), tried after the built-in ones. */
  readonly extraAuthenticators: ReadonlyArray<Authenticator>
  /** `--tls-cipher-suites` (Go names); empty = the TLS stack's defaults. */
  readonly cipherSuites: ReadonlyArray<string>
  /** `--tlsCertFile` / `--tlsKeyFile` / `--caCertFile`; "" = not given. */
  readonly tlsCertFile: string
  readonly tlsKeyFile: string
  readonly caCertFile: string
  /** Where `PILOT_CERT_PROVIDER=custom` finds tls.crt, tls.key and ca.crt. */
  readonly customCertsDir: string
  /** grpc-js options of the secure listener (the ADS keepalive and size limits); none = grpc-js defaults. */
  readonly serverOptions?: ServerOptions
}

export class CaConfig extends EnvConfig<CaConfig, CaFields>()("mesh/CaConfig", {
  table: discoveryEnv,
  names: [
    "AUDIENCE",
    "CA_TRUSTED_NODE_ACCOUNTS",
    "MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR",
    "MESHCA_SELF_SIGNED_CA_CERT_TTL",
    "MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE",
    "MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL",
    "MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE",
    "MESHCA_KEY_ROTATION_CHECK_INTERVAL",
    "MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT",
    "MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT",
    "MESHCA_KEY_ROTATION_ON_KEY_MISMATCH",
    "MESHCA_TRUST_BUNDLE_MAX_WATCHERS",
    "DEFAULT_WORKLOAD_CERT_TTL",
    "MAX_WORKLOAD_CERT_TTL",
    "ENABLE_CA_SERVER",
    "MESHD_CUSTOM_HOST",
    "ROOT_CA_DIR",
    "USE_CACERTS_FOR_SELF_SIGNED_CA",
    "TOKEN_AUDIENCES",
    "TOKEN_ISSUER",
    "JWT_RULE",
    "REVISION",
    "COMPLIANCE_POLICY",
    "PILOT_CERT_PROVIDER",
    "XDS_AUTH",
    "XDS_AUTH_PLAINTEXT",
    "PILOT_ENABLE_XDS_IDENTITY_CHECK",
    "PILOT_SKIP_VALIDATE_TRUST_DOMAIN",
    "JWKS_RESOLVER_INSECURE_SKIP_VERIFY",
    "PILOT_JWT_PUB_KEY_REFRESH_INTERVAL",
  ],
  fields: {
    secureGrpcAddr: { host: undefined, port: Ports.xdsTls },
    namespace: SYSTEM_NAMESPACE,
    trustDomain: DEFAULT_TRUST_DOMAIN,
    trustDomainAliases: [],
    stateDir: DEFAULT_CA_STATE_DIR,
    podLocator: noPodLocator,
    extraAuthenticators: [],
    cipherSuites: [],
    tlsCertFile: "",
    tlsKeyFile: "",
    caCertFile: "",
    customCertsDir: CUSTOM_CERTS_DIR,
  },
}) {}

/** The values `CaConfig` holds. */
export type CaConfigValues = typeof CaConfig.Service
