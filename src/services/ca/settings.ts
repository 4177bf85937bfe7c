/**
 * The pure decisions of the discovery CA from its `CaConfig`: the CA's own settings, the DNS
 * names of the server's certificate, and the TLS restrictions of its listeners
 * (`--tls-cipher-suites`, `COMPLIANCE_POLICY`).
 */
import type { SecureVersion } from "node:tls"
import { type Duration, Either } from "effect"
import { CIPHER_SUITE_OPENSSL_NAMES } from "../net/cipher-suites.js"
import type { CaConfigValues } from "./config.js"
import type { KeyRotationSettings } from "./key-rotation.js"
import type { RotationSettings } from "./rotation.js"
import type { TtlPolicy } from "./ttl.js"

export interface CaSettings {
  readonly trustDomain: string
  /** `ROOT_CA_DIR`: a plugged-in CA, when its files are there. */
  readonly rootCaDir: string
  /** Where the self-signed root and its key are kept across restarts. */
  readonly stateDir: string
  /** `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE` */
  readonly rsaKeySize: number
  /** `MESHCA_SELF_SIGNED_CA_CERT_TTL` */
  readonly selfSignedTtl: Duration.Duration
  readonly rotation: RotationSettings
  /** `DEFAULT_WORKLOAD_CERT_TTL`, `MAX_WORKLOAD_CERT_TTL` */
  readonly policy: TtlPolicy
  /** Settling delay after a change in the plugged-in CA directory before reloading. */
  readonly reloadDelay?: Duration.Duration
  /** Key rotation (issue 43); absent: `DEFAULT_KEY_ROTATION`. */
  readonly keyRotation?: KeyRotationSettings
}

/** The CA's own settings from its configuration. */
export const caSettingsFromConfig = (
  config: Pick<
    CaConfigValues,
    | "trustDomain"
    | "stateDir"
    | "ROOT_CA_DIR"
    | "MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE"
    | "MESHCA_SELF_SIGNED_CA_CERT_TTL"
    | "MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL"
    | "MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE"
    | "MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR"
    | "DEFAULT_WORKLOAD_CERT_TTL"
    | "MAX_WORKLOAD_CERT_TTL"
    | "MESHCA_KEY_ROTATION_CHECK_INTERVAL"
    | "MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT"
    | "MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT"
    | "MESHCA_KEY_ROTATION_ON_KEY_MISMATCH"
    | "MESHCA_TRUST_BUNDLE_MAX_WATCHERS"
  >,
): CaSettings => ({
  trustDomain: config.trustDomain,
  rootCaDir: config.ROOT_CA_DIR,
  stateDir: config.stateDir,
  rsaKeySize: config.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE,
  selfSignedTtl: config.MESHCA_SELF_SIGNED_CA_CERT_TTL,
  rotation: {
    checkInterval: config.MESHCA_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL,
    gracePeriodPercentile: config.MESHCA_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE,
    enableJitter: config.MESHCA_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR,
  },
  policy: { defaultTtl: config.DEFAULT_WORKLOAD_CERT_TTL, maxTtl: config.MAX_WORKLOAD_CERT_TTL },
  keyRotation: {
    checkInterval: config.MESHCA_KEY_ROTATION_CHECK_INTERVAL,
    publishMinWait: config.MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT,
    publishTimeout: config.MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT,
    rotateOnKeyMismatch: config.MESHCA_KEY_ROTATION_ON_KEY_MISMATCH,
    maxWatchers: config.MESHCA_TRUST_BUNDLE_MAX_WATCHERS,
  },
})

/** DNS names of the server's own certificate: meshd.<ns>.svc, the revision's name, MESHD_CUSTOM_HOST. */
export const serverDnsNames = (
  config: Pick<CaConfigValues, "MESHD_CUSTOM_HOST" | "REVISION">,
  namespace: string,
): Array<string> => {
  const names = [`meshd.${namespace}.svc`]
  if (config.REVISION !== "" && config.REVISION !== "default") names.push(`meshd-${config.REVISION}.${namespace}.svc`)
  for (const host of config.MESHD_CUSTOM_HOST.split(",").map((h) => h.trim())) {
    if (host !== "" && !names.includes(host)) names.push(host)
  }
  return names
}

/** TLS restrictions of a listener (the shape of the secure gRPC and HTTPS listeners' `tls`). */
export interface ServerTlsPolicy {
  /** OpenSSL cipher list. */
  readonly ciphers?: string
  readonly minVersion?: SecureVersion
  readonly maxVersion?: SecureVersion
  /** ECDH curves, e.g. "P-256:P-384". */
  readonly ecdhCurve?: string
}

/** TLS 1.2 with ECDHE and AES-GCM only, on P-256/P-384: the reference's `fips-140-2` policy. */
export const FIPS_140_2_CIPHER_SUITES = [
  "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
  "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
  "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
] as const

/** The listeners' TLS restrictions from `--tls-cipher-suites` and `COMPLIANCE_POLICY`. */
export const caServerTls = (
  compliancePolicy: string,
  cipherSuites: ReadonlyArray<string>,
): Either.Either<ServerTlsPolicy, string> => {
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
