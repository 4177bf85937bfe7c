/**
 * Root key rotation without downtime (issue 43), run beside the CA's material
 * (services/ca/key-rotation.ts has the rules):
 *
 * - self-signed: `rotate` (meshctl admin ca rotate-key, or a key that no longer matches
 *   `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE` with `MESHCA_KEY_ROTATION_ON_KEY_MISMATCH`) makes a new
 *   key and root (new serial) and stores it as pending beside the root (`key-rotation.json`):
 *   phase (a), the bundle holds both roots, the old key signs. When every agent watching the
 *   bundle acknowledged it, the new key signs and the old root becomes a retired root, kept
 *   `MAX_WORKLOAD_CERT_TTL` (phase (c)), then dropped. A restart resumes from what is stored.
 * - plugged-in: a ROOT_CA_DIR / `cacerts` replacement whose root the bundle does not hold goes
 *   through the same phases: `pluggedChanged` publishes the union of both bundles while the old
 *   plugged-in CA signs; the switch keeps the old roots as retired roots. The source already
 *   holds the new CA, so the old one and the retired roots are stored (`pluggedStore`: the state
 *   directory, or a Secret beside `cacerts`) and a restart resumes from them.
 *
 * Every change of the material goes through one semaphore, so the root rotator, a trigger and
 * the phase loop never overwrite each other's result.
 */
import { KeyObject } from "node:crypto"
import { Clock, Duration, Effect, Option, Ref, Schedule, SubscriptionRef } from "effect"
import type { KeyRotationShape, KeyRotationStatus } from "../../services/ca/ca.js"
import { CaMaterialError } from "../../services/ca/errors.js"
import {
  bundleVersion,
  DEFAULT_KEY_ROTATION,
  type KeyRotationPhase,
  keyMismatch,
  phaseGaugeValue,
  publishDecision,
  retireAtMs,
} from "../../services/ca/key-rotation.js"
import { createSelfSignedRoot, trustBundlePem } from "../../services/ca/material.js"
import { liveRetiredRoots, type RetiredRoot } from "../../services/ca/rotation.js"
import type { CaSettings } from "../../services/ca/settings.js"
import {
  ackWatcher,
  addWatcher,
  countWatchers,
  laggingWatchers,
  noWatchers,
  removeWatcher,
  type TrustBundleWatchers,
} from "../../services/ca/trust-bundle-watchers.js"
import type { x509 } from "../../services/ca/x509.js"
import type { LoadedMaterial } from "./key-material.js"
import { selfSignedMaterial } from "./key-material.js"
import type { SelfSignedStore } from "./key-sources.js"
import { generateRsaKey, type KeyPair } from "./keys.js"
import type { CaMetrics } from "./metrics.js"
import { ownRoots, type PluggedRotationState, type PluggedRotationStore } from "./plugged-rotation-state.js"

type Cert = x509.X509Certificate

/** "RSA-2048", "EC-prime256v1": what a key is, for logs and the status page. */
const describeKey = (key: KeyPair): string => {
  const object = KeyObject.from(key.privateKey)
  const details = object.asymmetricKeyDetails
  return object.asymmetricKeyType === "rsa"
    ? `RSA-${details?.modulusLength ?? "?"}`
    : `${(object.asymmetricKeyType ?? "unknown").toUpperCase()}-${details?.namedCurve ?? "?"}`
}

const keyShape = (key: KeyPair) => {
  const object = KeyObject.from(key.privateKey)
  return { type: object.asymmetricKeyType, modulusLength: object.asymmetricKeyDetails?.modulusLength }
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The roots of `extra` that `bundle` lacks, appended to it. */
const union = (bundle: ReadonlyArray<Cert>, extra: ReadonlyArray<Cert>): ReadonlyArray<Cert> => [
  ...bundle,
  ...extra.filter((c) => !bundle.some((b) => b.equal(c))),
]

/** A plugged-in CA with `retired` roots kept after its own bundle. */
const pluggedWithRetired = (loaded: LoadedMaterial, retired: ReadonlyArray<RetiredRoot<Cert>>): LoadedMaterial => ({
  ...loaded,
  material: {
    ...loaded.material,
    trustBundle: union(
      ownRoots(loaded),
      retired.map((r) => r.cert),
    ),
  },
  retired,
})

export interface KeyRotationDeps {
  readonly settings: CaSettings
  readonly state: SubscriptionRef.SubscriptionRef<LoadedMaterial>
  /** The self-signed root's store; undefined for a plugged-in CA. */
  readonly store: SelfSignedStore | undefined
  /** A plugged-in CA's rotation state (resumed on start); undefined for a self-signed CA. */
  readonly pluggedStore?: PluggedRotationStore | undefined
  readonly metrics: CaMetrics
  /** Serialises every change of `state`. */
  readonly lock: Effect.Semaphore
}

export interface KeyRotationControl extends KeyRotationShape {
  /** One check of the phases (the loop runs it every `MESHCA_KEY_ROTATION_CHECK_INTERVAL`). */
  readonly step: Effect.Effect<void, CaMaterialError>
  /**
   * A plugged-in CA read again: adopted at once when the bundle already trusts its root,
   * otherwise phase (a) toward it.
   */
  readonly pluggedChanged: (next: LoadedMaterial) => Effect.Effect<void>
  /** The phase loop, forked by the CA for its lifetime. */
  readonly run: Effect.Effect<void>
}

export const makeKeyRotation = (deps: KeyRotationDeps) =>
  Effect.gen(function* () {
    const { settings, state, store, pluggedStore, metrics, lock } = deps
    const rotation = settings.keyRotation ?? DEFAULT_KEY_ROTATION
    const startedMs = yield* Clock.currentTimeMillis
    const watchers = yield* Ref.make<TrustBundleWatchers>(noWatchers)
    const nextId = yield* Ref.make(0)
    const decision = yield* Ref.make<string | undefined>(undefined)
    /** Plugged-in: the replacement being published, since when, and the CA signing meanwhile. */
    const pluggedNext = yield* Ref.make<
      { readonly next: LoadedMaterial; readonly sinceMs: number; readonly previous: LoadedMaterial } | undefined
    >(undefined)

    // The bundle's version, once per material (the phase loop asks at every check). Weakly keyed
    // by the material, which the CA replaces on every change: nothing accumulates.
    const versions = new WeakMap<object, string>()
    const versionOf = (material: LoadedMaterial["material"]) => {
      let version = versions.get(material)
      if (version === undefined) {
        version = bundleVersion(trustBundlePem(material))
        versions.set(material, version)
      }
      return version
    }

    const phaseOf = (loaded: LoadedMaterial, plugged: boolean): KeyRotationPhase =>
      loaded.pending !== undefined || plugged ? "publishing" : loaded.retired.length > 0 ? "retaining" : "idle"

    const updateGauges = Effect.gen(function* () {
      const loaded = yield* SubscriptionRef.get(state)
      const counts = countWatchers(yield* Ref.get(watchers), versionOf(loaded.material))
      metrics.bundleWatchers.set(counts.total)
      metrics.bundleWatchersCurrent.set(counts.current)
      metrics.bundleRoots.set(loaded.material.trustBundle.length)
      metrics.keyRotationPhase.set(phaseGaugeValue(phaseOf(loaded, (yield* Ref.get(pluggedNext)) !== undefined)))
    })

    const persist = (loaded: LoadedMaterial) =>
      store === undefined || loaded.material.source !== "self-signed" ? Effect.void : store.persist(loaded)

    /**
     * A plugged-in CA's rotation state, stored with each change. A failure is logged, not
     * raised: the source already holds the new CA, and the overlap in memory is still the safe
     * path; only a restart would not resume it.
     */
    const persistPlugged = (loaded: LoadedMaterial) =>
      Effect.gen(function* () {
        if (pluggedStore === undefined || loaded.material.source !== "plugged") return
        const publishing = yield* Ref.get(pluggedNext)
        const record: PluggedRotationState | undefined =
          publishing !== undefined
            ? {
                publishing: {
                  previous: publishing.previous,
                  nextSigningCert: publishing.next.material.signingCert,
                  sinceMs: publishing.sinceMs,
                },
                retired: loaded.retired,
              }
            : loaded.retired.length > 0
              ? { retired: loaded.retired }
              : undefined
        yield* pluggedStore
          .save(record)
          .pipe(
            Effect.catchAll((e) =>
              Effect.logError(
                `plugged-in CA: cannot store the rotation state in ${pluggedStore.origin} (a restart would not resume it): ${e.reason}`,
              ),
            ),
          )
      })

    const set = (loaded: LoadedMaterial) =>
      Effect.gen(function* () {
        // Stored before it is published: what agents see is what a restart resumes.
        yield* persist(loaded)
        yield* persistPlugged(loaded)
        yield* SubscriptionRef.set(state, loaded)
        yield* updateGauges
      })

    const status: Effect.Effect<KeyRotationStatus> = Effect.gen(function* () {
      const loaded = yield* SubscriptionRef.get(state)
      const plugged = yield* Ref.get(pluggedNext)
      const version = versionOf(loaded.material)
      const all = yield* Ref.get(watchers)
      const counts = countWatchers(all, version)
      const why = yield* Ref.get(decision)
      const root = loaded.material.root
      return {
        phase: phaseOf(loaded, plugged !== undefined),
        source: loaded.material.source,
        root: { serial: root.serialNumber, notAfter: root.notAfter.toISOString(), key: describeKey(loaded.key) },
        ...(loaded.pending !== undefined
          ? {
              pending: {
                serial: loaded.pending.cert.serialNumber,
                publishedAt: iso(loaded.pending.publishedAtMs),
                key: describeKey(loaded.pending.key),
              },
            }
          : plugged !== undefined
            ? {
                pending: {
                  serial: plugged.next.material.root.serialNumber,
                  publishedAt: iso(plugged.sinceMs),
                  key: describeKey(plugged.next.key),
                },
              }
            : {}),
        retired: loaded.retired.map((r) => ({ serial: r.cert.serialNumber, retainUntil: iso(r.retainUntilMs) })),
        bundle: { version, roots: loaded.material.trustBundle.length },
        watchers: {
          ...counts,
          lagging: laggingWatchers(all, version).map((w) => ({
            identity: w.identity,
            peer: w.peer,
            ...(w.acked !== undefined ? { acked: w.acked } : {}),
          })),
        },
        ...(why !== undefined ? { decision: why } : {}),
      }
    })

    /** Phase (a) of a self-signed rotation: a new key and root, published beside the current one. */
    const startSelfSigned = (reason: string) =>
      Effect.gen(function* () {
        const current = yield* SubscriptionRef.get(state)
        if (current.material.source !== "self-signed") {
          return yield* new CaMaterialError({
            reason:
              "the CA uses a plugged-in root: rotate its key by replacing ROOT_CA_DIR or the cacerts Secret (the same overlap applies)",
          })
        }
        if (current.pending !== undefined) return
        const key = yield* generateRsaKey(settings.rsaKeySize)
        // After the key (seconds of work on a busy machine): the bundle is published from now.
        const nowMs = yield* Clock.currentTimeMillis
        const cert = yield* Effect.mapError(
          createSelfSignedRoot(key, { trustDomain: settings.trustDomain, ttl: settings.selfSignedTtl, nowMs }),
          (e) => new CaMaterialError({ reason: e.reason }),
        )
        const live = liveRetiredRoots(current.retired, nowMs)
        yield* set(selfSignedMaterial(current.material.root, current.key, live, { cert, key, publishedAtMs: nowMs }))
        yield* Ref.set(decision, undefined)
        yield* Effect.logInfo(
          `self-signed CA: key rotation started (${reason}): new root ${cert.serialNumber} (${describeKey(key)}) published in the trust bundle; root ${current.material.root.serialNumber} keeps signing until every connected agent has the bundle`,
        )
      })

    /** Phase (b): the pending root signs; the old one is kept until its certificates expired. */
    const switchSelfSigned = (current: LoadedMaterial, nowMs: number, why: string) =>
      Effect.gen(function* () {
        const pending = current.pending!
        const old = current.material.root
        const retainUntilMs = retireAtMs(old.notAfter.getTime(), nowMs, settings.policy.maxTtl)
        const retired = [
          ...liveRetiredRoots(current.retired, nowMs),
          ...(retainUntilMs > nowMs ? [{ cert: old, retainUntilMs }] : []),
        ]
        yield* set(selfSignedMaterial(pending.cert, pending.key, retired))
        yield* Effect.logInfo(
          `self-signed CA: key rotation switched signing to root ${pending.cert.serialNumber} (${why}); root ${old.serialNumber} stays trusted until ${iso(retainUntilMs)}`,
        )
      })

    const switchPlugged = (current: LoadedMaterial, next: LoadedMaterial, nowMs: number, why: string) =>
      Effect.gen(function* () {
        const retainUntilMs = (cert: Cert) => retireAtMs(cert.notAfter.getTime(), nowMs, settings.policy.maxTtl)
        const nextRoots = next.material.trustBundle
        const kept = [
          ...liveRetiredRoots(current.retired, nowMs),
          ...current.material.trustBundle
            .filter((c) => !current.retired.some((r) => r.cert.equal(c)))
            .map((cert) => ({ cert, retainUntilMs: retainUntilMs(cert) })),
        ].filter((r) => r.retainUntilMs > nowMs && !nextRoots.some((c) => c.equal(r.cert)))
        yield* Ref.set(pluggedNext, undefined)
        yield* set(pluggedWithRetired(next, kept))
        yield* Effect.logInfo(
          `plugged-in CA: switched signing to ${next.material.signingCert.serialNumber} (${why}); ${kept.length} old root(s) stay trusted until their certificates expire`,
        )
      })

    const countsFor = (loaded: LoadedMaterial) =>
      Effect.map(Ref.get(watchers), (all) => countWatchers(all, versionOf(loaded.material)))

    const step: Effect.Effect<void, CaMaterialError> = lock.withPermits(1)(
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const current = yield* SubscriptionRef.get(state)
        const plugged = yield* Ref.get(pluggedNext)
        if (current.pending !== undefined || plugged !== undefined) {
          const since = Math.max(plugged?.sinceMs ?? current.pending!.publishedAtMs, startedMs)
          const verdict = publishDecision(since, nowMs, yield* countsFor(current), rotation)
          const previous = yield* Ref.getAndSet(decision, verdict.reason)
          if (verdict._tag === "wait") {
            if (previous !== verdict.reason) yield* Effect.logInfo(`key rotation waits: ${verdict.reason}`)
            return yield* updateGauges
          }
          if (plugged !== undefined) return yield* switchPlugged(current, plugged.next, nowMs, verdict.reason)
          return yield* switchSelfSigned(current, nowMs, verdict.reason)
        }
        const live = liveRetiredRoots(current.retired, nowMs)
        if (live.length !== current.retired.length) {
          const pruned =
            current.material.source === "self-signed"
              ? selfSignedMaterial(current.material.root, current.key, live)
              : pluggedWithRetired(current, live)
          yield* set(pruned)
          yield* Effect.logInfo(
            `CA: ${current.retired.length - live.length} retired root(s) left the trust bundle; ${live.length} remain`,
          )
          return
        }
        if (rotation.rotateOnKeyMismatch && current.material.source === "self-signed") {
          const mismatch = keyMismatch(keyShape(current.key), settings.rsaKeySize)
          if (mismatch !== undefined) return yield* startSelfSigned(mismatch)
        }
        yield* updateGauges
      }),
    )

    const rotate: Effect.Effect<KeyRotationStatus, CaMaterialError> = lock
      .withPermits(1)(startSelfSigned("requested"))
      .pipe(Effect.zipRight(status))

    /** Same signing certificate and same own bundle (retired roots aside). */
    const samePlugged = (a: LoadedMaterial, b: LoadedMaterial) => {
      const [x, y] = [ownRoots(a), ownRoots(b)]
      return (
        a.material.signingCert.equal(b.material.signingCert) &&
        x.length === y.length &&
        x.every((c, i) => c.equal(y[i]!))
      )
    }

    /**
     * A plugged-in CA read from its source: adopted at once when the bundle already trusts its
     * root, otherwise published while the current CA signs (phase (a)), from `sinceMs`.
     */
    const adoptPlugged = (next: LoadedMaterial, sinceMs?: number) =>
      Effect.gen(function* () {
        const current = yield* SubscriptionRef.get(state)
        const publishing = yield* Ref.get(pluggedNext)
        if (publishing !== undefined && samePlugged(publishing.next, next)) return
        const nowMs = yield* Clock.currentTimeMillis
        if (publishing === undefined && samePlugged(current, next)) return
        if (publishing === undefined && bundleHolds(current.material.trustBundle, next.material.root)) {
          // Same trust (e.g. a new intermediate under a root already trusted): no overlap needed.
          yield* set(pluggedWithRetired(next, liveRetiredRoots(current.retired, nowMs)))
          yield* Effect.logInfo(`plugged-in CA reloaded: signing cert ${next.material.signingCert.serialNumber}`)
          return
        }
        yield* Ref.set(pluggedNext, { next, sinceMs: sinceMs ?? nowMs, previous: publishing?.previous ?? current })
        yield* Ref.set(decision, undefined)
        yield* set({
          ...current,
          material: {
            ...current.material,
            trustBundle: union(current.material.trustBundle, next.material.trustBundle),
          },
        })
        yield* Effect.logInfo(
          `plugged-in CA replaced by one with root ${next.material.root.serialNumber}: its roots are published in the trust bundle; the previous CA keeps signing until every connected agent has the bundle`,
        )
      })

    const pluggedChanged = (next: LoadedMaterial) =>
      lock.withPermits(1)(
        adoptPlugged(next).pipe(Effect.catchAll((e) => Effect.logError(`plugged-in CA change: ${e.reason}`))),
      )

    /**
     * On start, a plugged-in CA's stored rotation: the roots retained after a switch stay in the
     * bundle; a CA that was being published when the process stopped is published again from
     * when it began (the previous CA signing meanwhile) if the source still holds it, and a CA
     * the source holds instead goes through `adoptPlugged` from the previous one.
     */
    const resumePlugged = Effect.gen(function* () {
      const loaded = yield* SubscriptionRef.get(state)
      if (pluggedStore === undefined || loaded.material.source !== "plugged") return
      const stored = yield* pluggedStore.load
      if (Option.isNone(stored)) return
      const nowMs = yield* Clock.currentTimeMillis
      const live = liveRetiredRoots(stored.value.retired, nowMs)
      const publishing = stored.value.publishing
      if (publishing === undefined) {
        const kept = live.filter((r) => !bundleHolds(loaded.material.trustBundle, r.cert))
        yield* set(pluggedWithRetired(loaded, kept))
        if (kept.length > 0) {
          yield* Effect.logInfo(
            `plugged-in CA: ${kept.length} root(s) of an earlier CA stay trusted (stored in ${pluggedStore.origin}) until ${iso(Math.max(...kept.map((r) => r.retainUntilMs)))}`,
          )
        }
        return
      }
      const previous = pluggedWithRetired(publishing.previous, live)
      yield* SubscriptionRef.set(state, previous)
      const resumes = loaded.material.signingCert.equal(publishing.nextSigningCert)
      yield* adoptPlugged(loaded, resumes ? publishing.sinceMs : undefined)
      // Reverted to the previous CA while stopped: nothing is published, and the record says so.
      yield* persistPlugged(yield* SubscriptionRef.get(state))
      const now = yield* Ref.get(pluggedNext)
      yield* Effect.logInfo(
        now === undefined
          ? `plugged-in CA: the CA published before the restart (${publishing.nextSigningCert.serialNumber}) is no longer in the source, which holds one the bundle trusts: no overlap is needed`
          : `plugged-in CA: ${resumes ? "resumed publishing" : "publishing"} root ${loaded.material.root.serialNumber} (since ${iso(now.sinceMs)}); ${previous.material.signingCert.serialNumber} signs until every connected agent has the bundle`,
      )
    }).pipe(
      Effect.catchAll((e) =>
        Effect.logError(`plugged-in CA: cannot resume the stored rotation, using the CA as read: ${e.reason}`),
      ),
    )

    const watch = {
      register: (identity: string, peer: string) =>
        Effect.gen(function* () {
          const all = yield* Ref.get(watchers)
          if (all.size >= rotation.maxWatchers) {
            return yield* Effect.fail(
              `${all.size} trust bundle streams are open, the most MESHCA_TRUST_BUNDLE_MAX_WATCHERS allows`,
            )
          }
          const id = yield* Ref.updateAndGet(nextId, (n) => n + 1)
          yield* Ref.update(watchers, (w) => addWatcher(w, id, identity, peer))
          yield* updateGauges
          return id
        }),
      ack: (id: number, version: string) =>
        Effect.zipRight(
          Ref.update(watchers, (w) => ackWatcher(w, id, version)),
          updateGauges,
        ),
      unregister: (id: number) =>
        Effect.zipRight(
          Ref.update(watchers, (w) => removeWatcher(w, id)),
          updateGauges,
        ),
    }

    const run = step.pipe(
      Effect.catchAll((e) => Effect.logError(`CA key rotation: ${e.reason}`)),
      // A zero or negative interval would spin: checks are at least 100 ms apart.
      Effect.repeat(Schedule.spaced(Duration.max(rotation.checkInterval, Duration.millis(100)))),
      Effect.asVoid,
    )

    yield* lock.withPermits(1)(resumePlugged)
    yield* updateGauges
    return { status, rotate, watch, step, pluggedChanged, run } satisfies KeyRotationControl
  })

/** Whether `bundle` holds `root` (a replaced plugged-in CA needs the overlap unless it does). */
export const bundleHolds = (bundle: ReadonlyArray<Cert>, root: Cert): boolean => bundle.some((c) => c.equal(root))
