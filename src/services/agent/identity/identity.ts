/**
 * Workload identity of `mesh-agent` (spec 001 §2 "Certificates and keys", §5): the contracts of
 * the certificate the agent holds, of the CA client it renews it with, and the pure rules —
 * key type from the environment, when to renew, how to back off.
 */
import { Context, Data, Duration, type Effect, Schedule, type Stream } from "effect"

/** The workload's key and certificate chain as PEM, with the trust bundle the CA returned. */
export interface WorkloadCertificate {
  /** PKCS#8 private key. */
  readonly keyPem: string
  /** The issued certificate first, then intermediates (the root is not repeated here). */
  readonly certChainPem: string
  /** Root certificate(s) to trust. */
  readonly rootCertPem: string
  readonly notBefore: Date
  readonly notAfter: Date
  /** The SPIFFE identity in the leaf's URI SAN. */
  readonly identity: string
}

export class IdentityError extends Data.TaggedError("IdentityError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** A refusal or transport failure of the CA call. `retryable` false for refusals that will not heal. */
export class CaCallError extends Data.TaggedError("CaCallError")<{
  readonly reason: string
  readonly code?: number
}> {
  override get message() {
    return this.reason
  }
}

export interface CaCredentials {
  /** Bearer token (JWT) read from the token file. */
  readonly token?: string
  /** The certificate the workload currently holds, for mutual TLS. */
  readonly clientCert?: { readonly certPem: string; readonly keyPem: string }
}

/** Signs CSRs: the CA at `CA_ADDR` (layer) or a fake (tests). */
export interface CaClientShape {
  /** Returns the chain: leaf first, root last. */
  readonly sign: (
    csrPem: string,
    validitySeconds: number,
    credentials: CaCredentials,
  ) => Effect.Effect<ReadonlyArray<string>, CaCallError>
  /**
   * Follows the CA's trust bundle (`WatchTrustBundle`): `onBundle` gets the roots (PEM) now and
   * on every change, and the bundle is acknowledged once it returned. Ends (fails) with the
   * stream; the caller reconnects. Absent: the CA client cannot watch (fakes, older CAs).
   */
  readonly watchTrustBundle?: (
    credentials: Effect.Effect<CaCredentials, IdentityError>,
    onBundle: (rootsPem: string) => Effect.Effect<void>,
  ) => Effect.Effect<void, CaCallError | IdentityError>
  /** Roots the CA's serving certificate may chain to, beyond the configured ones (the bundle held). */
  readonly trustRoots?: (rootsPem: string) => Effect.Effect<void>
}

/**
 * The roots to hold after a renewal: the CA's answer and the bundle last watched, each root
 * once. A renewal signed just before a bundle change may answer with the older bundle; the
 * watched one keeps the newer roots until the next watched bundle replaces it.
 */
export const mergeRoots = (answered: string, watched: string | undefined): string => {
  if (watched === undefined) return answered
  const blocks = (text: string) =>
    [...text.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)].map((m) => `${m[0]}\n`)
  const out = blocks(answered)
  for (const block of blocks(watched)) if (!out.includes(block)) out.push(block)
  return out.join("")
}

export class CaClient extends Context.Tag("mesh/agent/CaClient")<CaClient, CaClientShape>() {}

export interface WorkloadIdentityShape {
  /** The certificate currently held (always valid once the layer is built). */
  readonly current: Effect.Effect<WorkloadCertificate>
  /** The current certificate, then every renewal. */
  readonly changes: Stream.Stream<WorkloadCertificate>
}

export class WorkloadIdentity extends Context.Tag("mesh/agent/WorkloadIdentity")<
  WorkloadIdentity,
  WorkloadIdentityShape
>() {}

// ---------------------------------------------------------------------------------------------
// Key type (WORKLOAD_RSA_KEY_SIZE, ECC_SIGNATURE_ALGORITHM, ECC_CURVE)

export type KeySpec =
  | { readonly kind: "RSA"; readonly bits: number }
  | { readonly kind: "EC"; readonly curve: "P-256" | "P-384" }

export const keySpecFrom = (env: {
  readonly WORKLOAD_RSA_KEY_SIZE: number
  readonly ECC_SIGNATURE_ALGORITHM: string
  readonly ECC_CURVE: string
}): KeySpec | string => {
  const algorithm = env.ECC_SIGNATURE_ALGORITHM.trim().toUpperCase()
  if (algorithm === "") {
    if (env.WORKLOAD_RSA_KEY_SIZE < 2048 || env.WORKLOAD_RSA_KEY_SIZE > 8192) {
      return `WORKLOAD_RSA_KEY_SIZE ${env.WORKLOAD_RSA_KEY_SIZE}: must be between 2048 and 8192`
    }
    return { kind: "RSA", bits: env.WORKLOAD_RSA_KEY_SIZE }
  }
  if (algorithm !== "ECDSA") return `ECC_SIGNATURE_ALGORITHM "${env.ECC_SIGNATURE_ALGORITHM}": only ECDSA is supported`
  const curve = env.ECC_CURVE.trim().toUpperCase().replace("-", "")
  if (curve === "" || curve === "P256") return { kind: "EC", curve: "P-256" }
  if (curve === "P384") return { kind: "EC", curve: "P-384" }
  return `ECC_CURVE "${env.ECC_CURVE}": one of P256, P384`
}

// ---------------------------------------------------------------------------------------------
// Token file (JWT_POLICY)

export const THIRD_PARTY_TOKEN_PATH = "./var/run/secrets/tokens/mesh-token"
export const FIRST_PARTY_TOKEN_PATH = "/var/run/secrets/orch.io/serviceaccount/token"

/** The token file for a JWT policy; `first-party-jwt` reads the service-account token. */
export const tokenPathFor = (jwtPolicy: string): string =>
  jwtPolicy === "first-party-jwt" ? FIRST_PARTY_TOKEN_PATH : THIRD_PARTY_TOKEN_PATH

// ---------------------------------------------------------------------------------------------
// Renewal timing

export interface RenewalPolicy {
  /** Fraction of the lifetime after which the certificate is renewed (0.5 = half life). */
  readonly graceRatio: number
  /** The ratio varies by up to ± this much (spreads renewals of many workloads). */
  readonly jitter: number
}

export const DEFAULT_RENEWAL: RenewalPolicy = { graceRatio: 0.5, jitter: 0.01 }

/**
 * Milliseconds from `nowMs` until the certificate should be renewed: at `graceRatio` of its
 * lifetime, moved by `random` ∈ [0,1) within ± `jitter`; never negative.
 */
export const renewalDelayMs = (
  cert: Pick<WorkloadCertificate, "notBefore" | "notAfter">,
  nowMs: number,
  policy: RenewalPolicy,
  random: number,
): number => {
  const lifetime = cert.notAfter.getTime() - cert.notBefore.getTime()
  const ratio = Math.min(1, Math.max(0, policy.graceRatio + (random * 2 - 1) * policy.jitter))
  return Math.max(0, Math.round(cert.notBefore.getTime() + lifetime * ratio - nowMs))
}

/** Seconds until the chain expires; negative once expired (`cert_expiry_seconds`). */
export const expirySeconds = (cert: Pick<WorkloadCertificate, "notAfter">, nowMs: number): number =>
  (cert.notAfter.getTime() - nowMs) / 1000

export interface RetryPolicy {
  readonly base: Duration.Duration
  readonly max: Duration.Duration
}

export const DEFAULT_RETRY: RetryPolicy = { base: Duration.millis(500), max: Duration.seconds(30) }

/**
 * Exponential backoff from `base`, doubling, capped at `max`, jittered, forever: while the CA is
 * down the agent keeps asking (and keeps serving the certificate it holds).
 */
export const retrySchedule = (policy: RetryPolicy) =>
  Schedule.exponential(policy.base, 2).pipe(Schedule.union(Schedule.spaced(policy.max)), Schedule.jittered)

/**
 * The cap for a renewal's retries: the certificate being replaced must not lapse, so backoff
 * never waits longer than a tenth of the time left (and never less than the base).
 */
export const retryCapFor = (policy: RetryPolicy, remainingMs: number): RetryPolicy => ({
  base: policy.base,
  max: Duration.millis(
    Math.max(Duration.toMillis(policy.base), Math.min(Duration.toMillis(policy.max), Math.floor(remainingMs / 10))),
  ),
})

// ---------------------------------------------------------------------------------------------
// Files (OUTPUT_CERTS, FILE_MOUNTED_CERTS)

export const CERT_FILES = { key: "key.pem", chain: "cert-chain.pem", root: "root-cert.pem" } as const

/** Where FILE_MOUNTED_CERTS reads from. */
export const MOUNTED_CERTS_DIR = "./etc/certs"

// ---------------------------------------------------------------------------------------------
// CA provider and credential fetcher (CA_PROVIDER, CREDENTIAL_FETCHER_TYPE; spec 001 §5 rule 1)

/**
 * CA_PROVIDER values the agent can use: the mesh's own CA (`MeshCA`, the default; `Citadel` is
 * the reference's name for the same built-in CA). Cloud CAs need their cloud and are refused.
 */
export const SUPPORTED_CA_PROVIDERS = ["MeshCA", "Citadel"] as const

/** CREDENTIAL_FETCHER_TYPE values: `JWT` (the token file of JWT_POLICY; empty means the same). */
export const SUPPORTED_CREDENTIAL_FETCHERS = ["JWT"] as const

/** Why the CA_PROVIDER / CREDENTIAL_FETCHER_TYPE pair cannot be used, or undefined. */
export const caSettingsProblem = (env: {
  readonly CA_PROVIDER: string
  readonly CREDENTIAL_FETCHER_TYPE: string
}): string | undefined => {
  const provider = env.CA_PROVIDER.trim()
  if (provider !== "" && !(SUPPORTED_CA_PROVIDERS as ReadonlyArray<string>).includes(provider)) {
    return `CA_PROVIDER "${env.CA_PROVIDER}" is not supported: use ${SUPPORTED_CA_PROVIDERS.join(" or ")} (the mesh's own CA at CA_ADDR); cloud CAs such as GoogleCA need their cloud and are not available here`
  }
  const fetcher = env.CREDENTIAL_FETCHER_TYPE.trim()
  if (fetcher !== "" && !(SUPPORTED_CREDENTIAL_FETCHERS as ReadonlyArray<string>).includes(fetcher)) {
    return `CREDENTIAL_FETCHER_TYPE "${env.CREDENTIAL_FETCHER_TYPE}" is not supported: use JWT (the token file of JWT_POLICY); the cloud-VM fetcher (GoogleComputeEngine) needs the cloud's metadata server and is not available here`
  }
  return undefined
}
