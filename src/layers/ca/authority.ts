/**
 * The CertificateAuthority layer: key material from a plugged-in CA (watched and hot-reloaded)
 * or from a persisted self-signed root (rotated by the root rotator fiber), signing workload
 * certificates with Node crypto (material.ts), and the root/chain expiry gauges.
 */
import { watch } from "node:fs"
import { Clock, Duration, Effect, Either, Layer, Option, Random, Schedule, Stream, SubscriptionRef } from "effect"
import { CertificateAuthority, type CertificateAuthorityShape } from "../../services/ca/ca.js"
import { CaConfig } from "../../services/ca/config.js"
import { MIN_RSA_BITS } from "../../services/ca/csr.js"
import { CaConfigError, CaMaterialError } from "../../services/ca/errors.js"
import {
  createSelfSignedRoot,
  type LeafRequest,
  makeLeafIssuer,
  responseChainAfterLeaf,
  type SigningMaterial,
} from "../../services/ca/material.js"
import { initialDelayMs, liveRetiredRoots, rotationEnabled, shouldRotate } from "../../services/ca/rotation.js"
import { type CaSettings, caSettingsFromConfig } from "../../services/ca/settings.js"
import { resolveTtl, type TtlPolicy } from "../../services/ca/ttl.js"
import { subtle } from "../../services/ca/x509.js"
import { Metrics } from "../../services/metrics/metrics.js"
import {
  assemblePlugged,
  createSelfSigned,
  type LoadedMaterial,
  loadPlugged,
  selfSignedMaterial,
} from "./key-material.js"
import { makeKeyRotation } from "./key-rotation.js"
import { directoryStore, type KeySources, type SelfSignedStore } from "./key-sources.js"
import { generateEcKey } from "./keys.js"
import { type CaMetrics, caMetrics } from "./metrics.js"
import { directoryPluggedRotationStore, type PluggedRotationStore } from "./plugged-rotation-state.js"

export type { CaSettings, KeySources }

const GAUGE_REFRESH = Duration.minutes(1)

const updateGauges = (metrics: CaMetrics, loaded: LoadedMaterial, nowMs: number) => {
  const m = loaded.material
  const rootExpiry = m.root.notAfter.getTime()
  const chainExpiry = Math.min(...[m.signingCert, ...m.intermediates, m.root].map((c) => c.notAfter.getTime()))
  metrics.rootExpiryTimestamp.set(Math.floor(rootExpiry / 1000))
  metrics.rootExpirySeconds.set(Math.floor((rootExpiry - nowMs) / 1000))
  metrics.chainExpiryTimestamp.set(Math.floor(chainExpiry / 1000))
  metrics.chainExpirySeconds.set(Math.floor((chainExpiry - nowMs) / 1000))
}

/**
 * One check of the self-signed root: rotates it when it is inside its grace period (keeping the
 * key, as the reference does, and keeping the old root in the trust bundle until every
 * certificate it can have signed has expired); drops retired roots whose time is up.
 */
export const checkRootOnce = (
  settings: CaSettings,
  state: SubscriptionRef.SubscriptionRef<LoadedMaterial>,
  metrics: CaMetrics,
  store: SelfSignedStore = directoryStore(settings.stateDir),
) =>
  Effect.gen(function* () {
    const nowMs = yield* Clock.currentTimeMillis
    const current = yield* SubscriptionRef.get(state)
    const live = liveRetiredRoots(current.retired, nowMs)
    if (!shouldRotate(current.material.root, nowMs, settings.rotation.gracePeriodPercentile)) {
      if (live.length !== current.retired.length) {
        const pruned = selfSignedMaterial(current.material.root, current.key, live, current.pending)
        yield* store.persist(pruned)
        yield* SubscriptionRef.set(state, pruned)
        yield* Effect.logInfo(
          `self-signed CA: ${current.retired.length - live.length} retired root(s) left the trust bundle`,
        )
      }
      updateGauges(metrics, current, nowMs)
      return false
    }
    const old = current.material.root
    const root = yield* Effect.mapError(
      createSelfSignedRoot(current.key, { trustDomain: settings.trustDomain, ttl: settings.selfSignedTtl, nowMs }),
      (e) => new CaMaterialError({ reason: e.reason }),
    )
    const retainUntilMs = Math.min(old.notAfter.getTime(), nowMs + Duration.toMillis(settings.policy.maxTtl))
    const retired = retainUntilMs > nowMs ? [...live, { cert: old, retainUntilMs }] : live
    const next = selfSignedMaterial(root, current.key, retired, current.pending)
    yield* store.persist(next)
    yield* SubscriptionRef.set(state, next)
    updateGauges(metrics, next, nowMs)
    yield* Effect.logInfo(
      `self-signed CA: rotated root ${old.serialNumber} → ${root.serialNumber}; the old root stays trusted until ${new Date(retainUntilMs).toISOString()}`,
    )
    return true
  })

/**
 * The root rotator: a random start delay (jitter), then a check every interval; `lock` (the key
 * rotation's) keeps a check from racing a key rotation's change of the material.
 */
export const rootRotator = (
  settings: CaSettings,
  state: SubscriptionRef.SubscriptionRef<LoadedMaterial>,
  metrics: CaMetrics,
  store: SelfSignedStore = directoryStore(settings.stateDir),
  lock?: Effect.Semaphore,
) =>
  Effect.gen(function* () {
    if (!rotationEnabled(settings.rotation)) {
      yield* Effect.logInfo("self-signed CA: root rotation is disabled (check interval ≤ 0)")
      return
    }
    const delay = initialDelayMs(settings.rotation, yield* Random.next)
    if (delay > 0) yield* Effect.sleep(Duration.millis(delay))
    return yield* Effect.forever(
      Effect.sleep(settings.rotation.checkInterval).pipe(
        Effect.zipRight(
          lock === undefined
            ? checkRootOnce(settings, state, metrics, store)
            : lock.withPermits(1)(checkRootOnce(settings, state, metrics, store)),
        ),
        Effect.catchAll((e) => Effect.logError(`self-signed CA: root check failed: ${e.reason}`)),
      ),
    )
  })

/** Changes in a directory, as a stream of (debounced) ticks. */
const directoryChanges = (dir: string, settle: Duration.Duration) =>
  Stream.async<void>((emit) => {
    const watcher = watch(dir, () => void emit.single(undefined))
    watcher.on("error", () => void emit.end())
    return Effect.sync(() => watcher.close())
  }).pipe(Stream.debounce(settle))

const sameMaterial = (a: LoadedMaterial, b: LoadedMaterial) =>
  a.material.signingCert.equal(b.material.signingCert) &&
  a.material.trustBundle.length === b.material.trustBundle.length &&
  a.material.trustBundle.every((c, i) => c.equal(b.material.trustBundle[i]!))

/** A plugged-in CA being watched: where it is, how to read it again, when it may have changed. */
interface PluggedWatch {
  readonly origin: string
  readonly load: Effect.Effect<LoadedMaterial, CaMaterialError>
  readonly changes: Stream.Stream<void>
  /** Where a change of root in progress, and the roots retained after one, are kept. */
  readonly rotation: PluggedRotationStore
}

/**
 * Reloads the plugged-in CA on every change of its source; a bad bundle keeps the last good one.
 * A CA under a root the bundle does not hold goes through the key rotation's overlap (`changed`).
 */
const watchPlugged = (
  source: PluggedWatch,
  state: SubscriptionRef.SubscriptionRef<LoadedMaterial>,
  metrics: CaMetrics,
  changed: (next: LoadedMaterial) => Effect.Effect<void>,
) =>
  source.changes.pipe(
    Stream.runForEach(() =>
      Effect.gen(function* () {
        const next = yield* source.load
        if (sameMaterial(yield* SubscriptionRef.get(state), next)) return
        yield* changed(next)
        updateGauges(metrics, yield* SubscriptionRef.get(state), yield* Clock.currentTimeMillis)
        yield* Effect.logInfo(`plugged-in CA read again from ${source.origin}`)
      }).pipe(
        Effect.catchAll((e) =>
          Effect.logError(`plugged-in CA reload from ${source.origin} failed, keeping the previous CA: ${e.reason}`),
        ),
      ),
    ),
  )

/**
 * Follows a shared self-signed store: when another replica rotated (or pruned) the root, this
 * one adopts what is stored. A store that lost its root gets the current one back.
 */
const followStore = (
  store: SelfSignedStore,
  state: SubscriptionRef.SubscriptionRef<LoadedMaterial>,
  metrics: CaMetrics,
) =>
  store.changes.pipe(
    Stream.runForEach(() =>
      Effect.gen(function* () {
        const stored = yield* store.load
        const current = yield* SubscriptionRef.get(state)
        if (Option.isNone(stored)) {
          yield* Effect.logWarning(`self-signed CA: the root in ${store.origin} is gone; storing the current one again`)
          const kept = yield* store.create(current)
          if (sameMaterial(current, kept)) return
          yield* SubscriptionRef.set(state, kept)
          updateGauges(metrics, kept, yield* Clock.currentTimeMillis)
          return
        }
        const next = stored.value
        if (sameMaterial(current, next)) return
        yield* SubscriptionRef.set(state, next)
        updateGauges(metrics, next, yield* Clock.currentTimeMillis)
        yield* Effect.logInfo(
          `self-signed CA: adopted root ${next.material.root.serialNumber} stored in ${store.origin} by another instance`,
        )
      }).pipe(
        Effect.catchAll((e) =>
          Effect.logError(`self-signed CA: cannot read ${store.origin}, keeping the current root: ${e.reason}`),
        ),
      ),
    ),
  )

/** The stored self-signed root, or a new one stored (or the one another replica stored first). */
const loadOrCreateFrom = (settings: CaSettings, store: SelfSignedStore, nowMs: number) =>
  Effect.gen(function* () {
    const stored = yield* store.load
    if (Option.isSome(stored)) {
      yield* Effect.logInfo(
        `self-signed CA: loaded root ${stored.value.material.root.serialNumber} from ${store.origin}`,
      )
      return stored.value
    }
    const created = yield* createSelfSigned(
      { trustDomain: settings.trustDomain, rsaKeySize: settings.rsaKeySize, ttl: settings.selfSignedTtl },
      nowMs,
    )
    const kept = yield* store.create(created)
    yield* Effect.logInfo(
      kept === created
        ? `self-signed CA: created root ${kept.material.root.serialNumber} in ${store.origin}`
        : `self-signed CA: another instance stored root ${kept.material.root.serialNumber} in ${store.origin} first; using it`,
    )
    return kept
  })

/** PEMs of the chain after the leaf (ending with the trust bundle), computed once per material. */
const makeChainPems = () => {
  // Weakly keyed by the material, which the CA replaces on every change: nothing accumulates.
  const cache = new WeakMap<SigningMaterial, ReadonlyArray<string>>()
  return (material: SigningMaterial) => {
    let pems = cache.get(material)
    if (pems === undefined) {
      pems = responseChainAfterLeaf(material)
      cache.set(material, pems)
    }
    return pems
  }
}

/**
 * The CA: a plugged-in CA from ROOT_CA_DIR first, then from `sources.plugged` (the orchestrator's
 * `cacerts` Secret), else a self-signed root kept in `sources.selfSigned` (default: the state
 * directory).
 */
export const makeCertificateAuthority = (settings: CaSettings, sources: KeySources = {}) =>
  Effect.gen(function* () {
    const metrics = caMetrics(yield* Metrics)
    const nowMs = yield* Clock.currentTimeMillis
    let initial: LoadedMaterial | undefined
    let plugged: PluggedWatch | undefined
    const fromDir = yield* loadPlugged(settings.rootCaDir)
    if (Option.isSome(fromDir)) {
      initial = fromDir.value
      plugged = {
        origin: settings.rootCaDir,
        load: assemblePlugged(settings.rootCaDir, fromDir.value.files),
        changes: directoryChanges(settings.rootCaDir, settings.reloadDelay ?? Duration.millis(100)),
        rotation: directoryPluggedRotationStore(settings.stateDir),
      }
    } else if (sources.plugged !== undefined) {
      const source = sources.plugged
      const fromSource = yield* source.load
      if (Option.isSome(fromSource)) {
        initial = fromSource.value
        plugged = {
          origin: source.origin,
          load: Effect.flatMap(source.load, (loaded) =>
            Option.isSome(loaded)
              ? Effect.succeed(loaded.value)
              : Effect.fail(new CaMaterialError({ reason: `${source.origin} no longer holds a CA` })),
          ),
          changes: source.changes,
          rotation: sources.pluggedRotation ?? directoryPluggedRotationStore(settings.stateDir),
        }
      }
    }
    const store = sources.selfSigned ?? directoryStore(settings.stateDir)
    if (initial === undefined) initial = yield* loadOrCreateFrom(settings, store, nowMs)
    const state = yield* SubscriptionRef.make<LoadedMaterial>(initial)
    const lock = yield* Effect.makeSemaphore(1)
    // A plugged-in CA's change of root in progress (or roots retained after one) is resumed here.
    const keyRotation = yield* makeKeyRotation({
      settings,
      state,
      store: plugged === undefined ? store : undefined,
      pluggedStore: plugged?.rotation,
      metrics,
      lock,
    })
    updateGauges(metrics, yield* SubscriptionRef.get(state), nowMs)
    if (plugged !== undefined) {
      yield* Effect.logInfo(`CA: using the plugged-in CA from ${plugged.origin}`)
      yield* Effect.forkScoped(watchPlugged(plugged, state, metrics, keyRotation.pluggedChanged))
    } else {
      yield* Effect.forkScoped(rootRotator(settings, state, metrics, store, lock))
      yield* Effect.forkScoped(followStore(store, state, metrics))
    }
    yield* Effect.forkScoped(keyRotation.run)
    // Keep the "seconds until expiry" gauges current between changes.
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.gen(function* () {
          updateGauges(metrics, yield* SubscriptionRef.get(state), yield* Clock.currentTimeMillis)
        }),
        Schedule.spaced(GAUGE_REFRESH),
      ),
    )

    const material = Effect.map(SubscriptionRef.get(state), (l) => l.material)
    // The issuance path in as few Effect steps as possible: each one costs a few microseconds,
    // which adds up against a signature that takes well under a millisecond.
    // This CA's own signers, serial batch and last validity.
    const issuer = makeLeafIssuer()
    const chainPems = makeChainPems()
    const issue = (policy: TtlPolicy, ttlSeconds: number, leaf: Omit<LeafRequest, "ttl" | "nowMs">) =>
      Effect.flatMap(Effect.zip(SubscriptionRef.get(state), Clock.currentTimeMillis), ([loaded, nowMs]) => {
        const ttl = resolveTtl(ttlSeconds, policy)
        if (Either.isLeft(ttl)) return Effect.fail(ttl.left)
        const cert = issuer.issue(loaded.material, { ...leaf, ttl: ttl.right, nowMs })
        if (Either.isLeft(cert)) return Effect.fail(cert.left)
        return Effect.succeed({ cert: cert.right, chain: [cert.right.pem, ...chainPems(loaded.material)] })
      })

    const service: CertificateAuthorityShape = {
      policy: settings.policy,
      material,
      changes: Stream.map(state.changes, (l) => l.material),
      keyRotation: { status: keyRotation.status, rotate: keyRotation.rotate, watch: keyRotation.watch },
      // No span of its own: the gRPC handler's span covers the request, and a span costs
      // about as much as encoding the certificate.
      sign: (request) =>
        Effect.map(
          issue(settings.policy, request.requestedTtlSeconds, { spki: request.csr.spki, uris: request.identities }),
          (r) => r.chain,
        ),
      issueServerCertificate: Effect.fn("CertificateAuthority.issueServerCertificate")(function* (
        dnsNames: ReadonlyArray<string>,
        ttlSeconds: number,
      ) {
        const key = yield* Effect.orDie(generateEcKey("P-256"))
        // Server certificates are not bound by the workload maximum.
        const policy = { defaultTtl: settings.policy.defaultTtl, maxTtl: Duration.infinity }
        const spki = new Uint8Array(yield* Effect.promise(() => subtle.exportKey("spki", key.publicKey)))
        const { cert, chain } = yield* issue(policy, ttlSeconds, { spki, dnsNames })
        return {
          certChainPem: chain.join(""),
          keyPem: key.privateKeyPem,
          notBefore: cert.notBefore,
          notAfter: cert.notAfter,
        }
      }),
    }
    return service
  })

/** The CA from settings; fails at start-up on a broken plugged-in CA or unwritable state. */
export const layerWith = (settings: CaSettings): Layer.Layer<CertificateAuthority, CaMaterialError, Metrics> =>
  Layer.scoped(CertificateAuthority, makeCertificateAuthority(settings))

/** The CA of `mesh-discovery` from `CaConfig`; a self-signed root key below MIN_RSA_BITS fails start-up. */
export const layer: Layer.Layer<CertificateAuthority, CaConfigError | CaMaterialError, Metrics | CaConfig> =
  Layer.unwrapEffect(
    Effect.map(
      CaConfig,
      (config): Layer.Layer<CertificateAuthority, CaConfigError | CaMaterialError, Metrics> =>
        config.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE < MIN_RSA_BITS
          ? Layer.fail(
              new CaConfigError({
                reason: `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=${config.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE} is below ${MIN_RSA_BITS}`,
              }),
            )
          : layerWith(caSettingsFromConfig(config)),
    ),
  )
