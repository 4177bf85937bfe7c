/**
 * Serving-certificate sources of the server's own listeners — the secure gRPC listener and the
 * HTTPS webhook listener (`PILOT_CERT_PROVIDER`, issue 5 item 6):
 *
 * - `caIssuedCertSource`: issued by the built-in CA for the server's DNS names, re-issued when
 *   the CA changes and at half of its lifetime; client certificates verify against the CA's
 *   trust bundle.
 * - `fileCertSource`: `--tlsCertFile` / `--tlsKeyFile` (and `--caCertFile` as extra
 *   client-certificate roots), checked at start-up (unreadable, unparsable or mismatched files
 *   fail naming the flag and file) and reloaded when their directories change; a bad
 *   replacement is logged and the last good certificate keeps serving.
 * - `ServingCert` / `shareServingCertSource`: one source run once, its material replayed to every
 *   listener that subscribes, so both listeners serve one certificate with one rotation.
 */

import { createPrivateKey, X509Certificate } from "node:crypto"
import { watch } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Clock, Context, Duration, Effect, Stream, SubscriptionRef } from "effect"
import { CertificateAuthority } from "../../services/ca/ca.js"
import { trustBundlePem } from "../../services/ca/material.js"
import { type ListenerTls, SecureGrpcError, type ServingCertSource, type ServingMaterial } from "./listener.js"

/** Issued by the built-in CA (`PILOT_CERT_PROVIDER=meshd`). */
export const caIssuedCertSource =
  (dnsNames: ReadonlyArray<string>, ttlSeconds = 24 * 3600): ServingCertSource<SecureGrpcError, CertificateAuthority> =>
  (apply) =>
    Effect.gen(function* () {
      const ca = yield* CertificateAuthority
      const refresh = Effect.gen(function* () {
        const material = yield* ca.material
        const cert = yield* ca.issueServerCertificate(dnsNames, ttlSeconds)
        yield* apply({ clientCaPem: trustBundlePem(material), certChainPem: cert.certChainPem, keyPem: cert.keyPem })
        return cert
      })
      const first = yield* Effect.mapError(
        refresh,
        (e) => new SecureGrpcError({ reason: `cannot issue the server's serving certificate: ${e.reason}` }),
      )
      // Re-issue when the CA changes (new root or plugged-in CA) ...
      yield* Effect.forkScoped(
        ca.changes.pipe(
          Stream.drop(1),
          Stream.runForEach(() =>
            refresh.pipe(
              Effect.catchAll((e) => Effect.logError(`cannot re-issue the serving certificate: ${e.reason}`)),
            ),
          ),
        ),
      )
      // ... and at half of the certificate's lifetime.
      yield* Effect.forkScoped(
        Effect.iterate(first.notAfter.getTime() - first.notBefore.getTime(), {
          while: () => true,
          body: (lifetimeMs) =>
            Effect.gen(function* () {
              yield* Effect.sleep(Duration.millis(Math.max(1000, lifetimeMs / 2)))
              const next = yield* refresh
              return next.notAfter.getTime() - (yield* Clock.currentTimeMillis)
            }).pipe(
              Effect.catchAll((e) =>
                Effect.as(Effect.logError(`cannot renew the serving certificate: ${e.reason}`), 60_000),
              ),
            ),
        }),
      )
    })

export interface CertFiles {
  /** `--tlsCertFile` */
  readonly certFile: string
  /** `--tlsKeyFile` */
  readonly keyFile: string
  /** `--caCertFile`; empty = none. */
  readonly caCertFile: string
}

const readFlagFile = (flag: string, path: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new SecureGrpcError({ reason: `${flag}=${path}: cannot read the file: ${(e as Error).message}` }),
  })

/** Reads and checks the files: a certificate, a key that matches it, optional CA certificates. */
export const loadCertFiles = (files: CertFiles) =>
  Effect.gen(function* () {
    const certPem = yield* readFlagFile("--tlsCertFile", files.certFile)
    const keyPem = yield* readFlagFile("--tlsKeyFile", files.keyFile)
    const cert = yield* Effect.try({
      try: () => new X509Certificate(certPem),
      catch: (e) =>
        new SecureGrpcError({
          reason: `--tlsCertFile=${files.certFile}: not a PEM certificate: ${(e as Error).message}`,
        }),
    })
    const key = yield* Effect.try({
      try: () => createPrivateKey(keyPem),
      catch: (e) =>
        new SecureGrpcError({
          reason: `--tlsKeyFile=${files.keyFile}: not a PEM private key: ${(e as Error).message}`,
        }),
    })
    if (!cert.checkPrivateKey(key)) {
      return yield* new SecureGrpcError({
        reason: `--tlsKeyFile=${files.keyFile} does not match the certificate of --tlsCertFile=${files.certFile}`,
      })
    }
    let caPem = ""
    if (files.caCertFile !== "") {
      caPem = yield* readFlagFile("--caCertFile", files.caCertFile)
      yield* Effect.try({
        try: () => new X509Certificate(caPem),
        catch: (e) =>
          new SecureGrpcError({
            reason: `--caCertFile=${files.caCertFile}: not a PEM certificate: ${(e as Error).message}`,
          }),
      })
    }
    return { certPem, keyPem, caPem, notAfter: cert.validTo }
  })

/** Change events of the directories holding `paths` (atomic replacements included), debounced. */
const directoryChanges = (paths: ReadonlyArray<string>, settle: Duration.Duration) =>
  Stream.asyncScoped<void>((emit) =>
    Effect.acquireRelease(
      Effect.sync(() =>
        [...new Set(paths.map((p) => dirname(p)))].map((dir) => {
          const watcher = watch(dir, () => void emit.single(undefined))
          watcher.on("error", () => void emit.end())
          return watcher
        }),
      ),
      (watchers) =>
        Effect.sync(() => {
          for (const w of watchers) w.close()
        }),
    ),
  ).pipe(Stream.debounce(settle))

/**
 * `--tlsCertFile` / `--tlsKeyFile` / `--caCertFile`. Client certificates verify against
 * `--caCertFile` and, when given, the mesh's roots (`meshRoots`: the current trust bundle first,
 * then every change), so proxies holding mesh certificates can still authenticate.
 */
export const fileCertSource =
  <R = never>(
    files: CertFiles,
    options: { readonly meshRoots?: Stream.Stream<string, never, R>; readonly reloadDelay?: Duration.Duration } = {},
  ): ServingCertSource<SecureGrpcError, R> =>
  (apply) =>
    Effect.gen(function* () {
      let roots = ""
      const build = (loaded: Effect.Effect.Success<ReturnType<typeof loadCertFiles>>): ServingMaterial => ({
        clientCaPem: [loaded.caPem, roots].filter((p) => p.trim() !== "").join("\n"),
        certChainPem: loaded.certPem,
        keyPem: loaded.keyPem,
      })
      let last = yield* loadCertFiles(files)
      if (options.meshRoots !== undefined) {
        const first = yield* Stream.runHead(options.meshRoots)
        if (first._tag === "Some") roots = first.value
      }
      yield* apply(build(last))
      yield* Effect.logInfo(
        `serving certificate from --tlsCertFile=${files.certFile} (valid until ${last.notAfter})${files.caCertFile !== "" ? `, client roots from --caCertFile=${files.caCertFile}` : ""}`,
      )
      const paths = [files.certFile, files.keyFile, ...(files.caCertFile !== "" ? [files.caCertFile] : [])]
      yield* Effect.forkScoped(
        directoryChanges(paths, options.reloadDelay ?? Duration.millis(100)).pipe(
          Stream.runForEach(() =>
            loadCertFiles(files).pipe(
              Effect.flatMap((next) => {
                if (next.certPem === last.certPem && next.keyPem === last.keyPem && next.caPem === last.caPem)
                  return Effect.void
                last = next
                return Effect.zipRight(
                  apply(build(next)),
                  Effect.logInfo(`serving certificate reloaded from ${files.certFile} (valid until ${next.notAfter})`),
                )
              }),
              Effect.catchAll((e) =>
                Effect.logError(`serving certificate reload failed, keeping the previous one: ${e.reason}`),
              ),
            ),
          ),
        ),
      )
      if (options.meshRoots !== undefined) {
        yield* Effect.forkScoped(
          options.meshRoots.pipe(
            Stream.drop(1),
            Stream.runForEach((pem) =>
              Effect.suspend(() => {
                roots = pem
                return apply(build(last))
              }),
            ),
          ),
        )
      }
    })

/** The server's own certificate, shared by every listener that serves it. */
export interface ServingCertShape {
  /** Subscribe a listener; undefined when there is no certificate (`PILOT_CERT_PROVIDER=none`). */
  readonly source: ServingCertSource | undefined
  /** TLS restrictions every listener applies with it (`--tls-cipher-suites`, `COMPLIANCE_POLICY`). */
  readonly tls: ListenerTls
}

export class ServingCert extends Context.Tag("mesh/ServingCert")<ServingCert, ServingCertShape>() {}

/**
 * Runs `source` once (its first material applied before this returns, so a failure is a
 * start-up error) and returns a source replaying the current material and every replacement to
 * each subscriber: one issuance and one rotation however many listeners serve the certificate.
 */
export const shareServingCertSource = <E, R>(source: ServingCertSource<E, R>) =>
  Effect.gen(function* () {
    const current = yield* SubscriptionRef.make<ServingMaterial | undefined>(undefined)
    yield* source((material) => SubscriptionRef.set(current, material))
    const shared: ServingCertSource = (apply) =>
      Effect.gen(function* () {
        const first = yield* SubscriptionRef.get(current)
        if (first !== undefined) yield* apply(first)
        // `changes` starts with the value at subscription time: a replacement made between the
        // read above and the subscription is still delivered.
        yield* Effect.forkScoped(
          current.changes.pipe(
            Stream.filter((m): m is ServingMaterial => m !== undefined && m !== first),
            Stream.runForEach(apply),
          ),
        )
      })
    return shared
  })
