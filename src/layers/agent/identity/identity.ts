/**
 * The workload identity layer: holds the workload's certificate, obtained from the CA (or read
 * from mounted files), renews it at about half of its lifetime, retries with backoff while the
 * CA is unreachable (the held certificate keeps serving), writes OUTPUT_CERTS atomically and
 * records the CA-client metrics of spec 001 §6. It also follows the CA's trust bundle
 * (`WatchTrustBundle`, issue 43): a new bundle replaces the held roots at once — root-cert.pem
 * rewritten, SDS ROOTCA pushed again, the CA client trusting it — without a restart, and is
 * acknowledged to the CA, whose key rotation waits for that.
 */
import { readFile } from "node:fs/promises"
import { Clock, Duration, Effect, Layer, Random, Ref, Runtime, SubscriptionRef } from "effect"
import { Gauge } from "prom-client"
import {
  CaClient,
  type CaCredentials,
  DEFAULT_RENEWAL,
  DEFAULT_RETRY,
  expirySeconds,
  IdentityError,
  type KeySpec,
  mergeRoots,
  type RenewalPolicy,
  type RetryPolicy,
  renewalDelayMs,
  retryCapFor,
  retrySchedule,
  type WorkloadCertificate,
  WorkloadIdentity,
} from "../../../services/agent/identity/identity.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics, type MetricsShape } from "../../../services/metrics/metrics.js"
import { generateKeyAndCsr } from "./csr.js"
import { certificateFromPem, readCertFiles, writeCertFiles } from "./files.js"
import { DEFAULT_MOUNTED_WATCH, type MountedWatch, watchMountedCerts } from "./mounted.js"

export interface IdentitySettings {
  /** spiffe://<trust domain>/ns/<ns>/sa/<sa> */
  readonly identity: string
  readonly keySpec: KeySpec
  /** Requested lifetime in seconds; 0 lets the CA choose. */
  readonly ttlSeconds: number
  /** Token file; when it cannot be read the current certificate authenticates. */
  readonly tokenPath: string
  /** OUTPUT_CERTS directory, when set. */
  readonly outputDir?: string
  /** FILE_MOUNTED_CERTS: read from this directory instead of requesting. */
  readonly mountedDir?: string
  /** How the mounted files are followed (FILE_DEBOUNCE_DURATION, poll fallback). */
  readonly mountedWatch?: MountedWatch
  readonly renewal?: RenewalPolicy
  readonly retry?: RetryPolicy
}

const REQUEST_TYPE = "csr"

export const identityMetrics = (metrics: MetricsShape) => ({
  requests: metrics.counter(
    "num_outgoing_requests",
    "Number of total outgoing requests (e.g. to a token exchange server, CA, etc.)",
    ["request_type"],
  ),
  failures: metrics.counter(
    "num_failed_outgoing_requests",
    "Number of failed outgoing requests (e.g. to a token exchange server, CA, etc.)",
    ["request_type"],
  ),
  retries: metrics.counter(
    "num_outgoing_retries",
    "Number of outgoing retry requests (e.g. to a token exchange server, CA, etc.)",
    ["request_type"],
  ),
  latency: metrics.counter(
    "outgoing_latency",
    "The latency of outgoing requests (e.g. to a token exchange server, CA, etc.) in milliseconds.",
    ["request_type"],
  ),
})

/** `cert_expiry_seconds`, computed at scrape time from the held certificate and the Effect clock. */
const expiryGauge = (metrics: MetricsShape, value: () => number | undefined) => {
  const name = "cert_expiry_seconds"
  metrics.registry.removeSingleMetric(name)
  return new Gauge({
    name,
    help: "The time remaining, in seconds, before the certificate chain will expire. A negative value indicates the cert is expired.",
    registers: [metrics.registry],
    collect() {
      const v = value()
      if (v !== undefined) this.set(v)
    },
  })
}

const readToken = (path: string) =>
  Effect.promise(() =>
    readFile(path, "utf8").then(
      (t) => t.trim(),
      () => "",
    ),
  ).pipe(Effect.map((t) => (t === "" ? undefined : t)))

export const makeWorkloadIdentity = (settings: IdentitySettings) =>
  Effect.gen(function* () {
    const metricsService = yield* Metrics
    const metrics = identityMetrics(metricsService)
    const runtime = yield* Effect.runtime<never>()
    const renewal = settings.renewal ?? DEFAULT_RENEWAL
    const retry = settings.retry ?? DEFAULT_RETRY
    let held: WorkloadCertificate | undefined
    expiryGauge(metricsService, () =>
      held === undefined ? undefined : expirySeconds(held, Runtime.runSync(runtime)(Clock.currentTimeMillis)),
    )
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => metricsService.registry.removeSingleMetric("cert_expiry_seconds")),
    )

    /** The bundle last received on the watch stream, merged into every renewal's roots. */
    const watched = yield* Ref.make<string | undefined>(undefined)

    const publish = (cert: WorkloadCertificate) =>
      Effect.gen(function* () {
        held = cert
        if (settings.outputDir !== undefined && settings.mountedDir === undefined) {
          yield* writeCertFiles(settings.outputDir, cert).pipe(Effect.catchAll((e) => Effect.logError(e.reason)))
        }
      })

    if (settings.mountedDir !== undefined) {
      const dir = settings.mountedDir
      const first = yield* readCertFiles(dir).pipe(
        Effect.mapError((e) => new IdentityError({ reason: `FILE_MOUNTED_CERTS: ${e.reason}` })),
      )
      yield* publish(first)
      const ref = yield* SubscriptionRef.make(first)
      yield* Effect.logInfo(
        `workload certificate for ${first.identity} read from ${dir}, valid until ${first.notAfter.toISOString()}`,
      ).pipe(withScope("cache"))
      yield* watchMountedCerts(dir, ref, settings.mountedWatch ?? DEFAULT_MOUNTED_WATCH, publish)
      return { ref, issue: undefined }
    }

    const ca = yield* CaClient

    const credentials = (current: WorkloadCertificate | undefined) =>
      Effect.gen(function* () {
        const token = yield* readToken(settings.tokenPath)
        if (token !== undefined) return { token } satisfies CaCredentials
        if (current !== undefined) {
          return { clientCert: { certPem: current.certChainPem, keyPem: current.keyPem } } satisfies CaCredentials
        }
        return yield* new IdentityError({
          reason: `no credentials for the CA: cannot read the token file ${settings.tokenPath} and no certificate is held yet`,
        })
      })

    /** One CSR round trip, counted. */
    const attempt = (keyPem: string, csrPem: string, current: WorkloadCertificate | undefined) =>
      Effect.gen(function* () {
        const creds = yield* credentials(current)
        const start = yield* Clock.currentTimeMillis
        metrics.requests.inc({ request_type: REQUEST_TYPE })
        const chain = yield* ca.sign(csrPem, settings.ttlSeconds, creds).pipe(
          Effect.tapError(() => Effect.sync(() => metrics.failures.inc({ request_type: REQUEST_TYPE }))),
          Effect.ensuring(
            Effect.flatMap(Clock.currentTimeMillis, (end) =>
              Effect.sync(() => metrics.latency.inc({ request_type: REQUEST_TYPE }, end - start)),
            ),
          ),
        )
        const last = chain.length > 1 ? chain[chain.length - 1]! : ""
        const root = mergeRoots(last.endsWith("\n") ? last : `${last}\n`, yield* Ref.get(watched))
        const certChain = (chain.length > 1 ? chain.slice(0, -1) : chain).map((p) => (p.endsWith("\n") ? p : `${p}\n`))
        const cert = yield* certificateFromPem(keyPem, certChain.join(""), root)
        if (cert.identity !== settings.identity) {
          return yield* new IdentityError({
            reason: `the CA issued a certificate for "${cert.identity}", expected "${settings.identity}"`,
          })
        }
        return cert
      })

    /** A new certificate: a new key, then CSR attempts with backoff until one succeeds. */
    const issue = (current: WorkloadCertificate | undefined) =>
      Effect.gen(function* () {
        const { keyPem, csrPem } = yield* generateKeyAndCsr(settings.keySpec, settings.identity)
        const tries = yield* Ref.make(0)
        const now = yield* Clock.currentTimeMillis
        const policy = current === undefined ? retry : retryCapFor(retry, current.notAfter.getTime() - now)
        return yield* Effect.gen(function* () {
          const n = yield* Ref.getAndUpdate(tries, (k) => k + 1)
          if (n > 0) metrics.retries.inc({ request_type: REQUEST_TYPE })
          return yield* attempt(keyPem, csrPem, current)
        }).pipe(
          Effect.tapError((e) =>
            Effect.logWarning(`certificate request for ${settings.identity} failed (will retry): ${e.reason}`),
          ),
          Effect.retry(retrySchedule(policy)),
        )
      }).pipe(withScope("ca"))

    const first = yield* issue(undefined)
    yield* publish(first)
    yield* Effect.logInfo(
      `workload certificate for ${first.identity} issued, valid until ${first.notAfter.toISOString()}`,
    ).pipe(withScope("cache"))
    const ref = yield* SubscriptionRef.make(first)

    /** Publishes and holds the certificate `make` builds; renewals and bundles take turns. */
    const turns = yield* Effect.makeSemaphore(1)
    const holding = (make: Effect.Effect<WorkloadCertificate>) =>
      turns.withPermits(1)(
        Effect.gen(function* () {
          const next = yield* make
          yield* publish(next)
          yield* SubscriptionRef.set(ref, next)
          if (ca.trustRoots !== undefined) yield* ca.trustRoots(next.rootCertPem)
          return next
        }),
      )

    const renewOnce = Effect.gen(function* () {
      const current = yield* SubscriptionRef.get(ref)
      const now = yield* Clock.currentTimeMillis
      const delay = renewalDelayMs(current, now, renewal, yield* Random.next)
      yield* Effect.sleep(Duration.millis(delay))
      const issued = yield* issue(current)
      // A bundle may have arrived while the CA answered: its roots are kept.
      const next = yield* holding(
        Effect.map(Ref.get(watched), (w) => ({ ...issued, rootCertPem: mergeRoots(issued.rootCertPem, w) })),
      )
      yield* Effect.logInfo(
        `workload certificate for ${next.identity} renewed, valid until ${next.notAfter.toISOString()}`,
      ).pipe(withScope("cache"))
    })
    if (ca.trustRoots !== undefined) yield* ca.trustRoots(first.rootCertPem)
    const watch = ca.watchTrustBundle
    if (watch !== undefined) {
      const apply = (rootsPem: string) =>
        Effect.gen(function* () {
          yield* Ref.set(watched, rootsPem)
          if ((yield* SubscriptionRef.get(ref)).rootCertPem === rootsPem) return
          const next = yield* holding(Effect.map(SubscriptionRef.get(ref), (c) => ({ ...c, rootCertPem: rootsPem })))
          yield* Effect.logInfo(
            `trust bundle for ${next.identity} updated: ${(rootsPem.match(/BEGIN CERTIFICATE/g) ?? []).length} root(s)`,
          ).pipe(withScope("cache"))
        })
      yield* Effect.forkScoped(
        watch(Effect.flatMap(SubscriptionRef.get(ref), credentials), apply).pipe(
          Effect.tapError((e) => Effect.logDebug(`trust bundle watch ended (will reconnect): ${e.reason}`)),
          Effect.retry(retrySchedule(retry)),
          Effect.forever,
          withScope("ca"),
        ),
      )
    }
    yield* Effect.forkScoped(
      renewOnce.pipe(
        // A failure outside the CA call (key generation) must not end renewal.
        Effect.catchAll((e) =>
          Effect.logError(`renewal failed: ${e.reason}`).pipe(Effect.zipRight(Effect.sleep("1 second"))),
        ),
        Effect.forever,
      ),
    )
    return { ref, issue }
  }).pipe(
    Effect.map(({ ref }) =>
      WorkloadIdentity.of({
        current: SubscriptionRef.get(ref),
        changes: ref.changes,
      }),
    ),
  )

/** Requires CaClient unless `mountedDir` is set (then provide any CaClient, e.g. `noCaClient`). */
export const layer = (settings: IdentitySettings) => Layer.scoped(WorkloadIdentity, makeWorkloadIdentity(settings))
