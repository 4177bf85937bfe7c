/**
 * The CA's key material from the orchestrator: the `cacerts` Secret of the mesh namespace, read
 * through a Secret informer (one object, by field selector) so that a change reaches the CA at
 * once.
 *
 * - A plugged-in CA in the Secret (same keys as ROOT_CA_DIR) is used when ROOT_CA_DIR holds none,
 *   and hot-reloaded; a broken update keeps the last good CA.
 * - With `USE_CACERTS_FOR_SELF_SIGNED_CA` the self-signed root lives in that Secret (type
 *   `mesh.io/ca-root`) instead of the state directory, so replicas share one root: read back on
 *   start, created when absent (the loser of a creation race adopts the winner's), rewritten on
 *   rotation, and followed when another replica rotates.
 *
 * Start-up waits for the first list of the Secret: without it the CA cannot know which root is
 * the mesh's, and starting with a different one would split trust.
 */
import { Duration, Effect, Layer, Option, Ref, Stream } from "effect"
import { CertificateAuthority } from "../../../services/ca/ca.js"
import {
  CACERTS_SECRET,
  CacertsKeys,
  decodeSecretData,
  isSelfSignedStore,
  matchLayout,
  PLUGGED_ROTATION_KEY,
  pluggedRotationSecret,
  pluggedRotationSecretName,
  selfSignedSecret,
} from "../../../services/ca/cacerts.js"
import { CaConfig } from "../../../services/ca/config.js"
import { MIN_RSA_BITS } from "../../../services/ca/csr.js"
import { CaConfigError, CaMaterialError } from "../../../services/ca/errors.js"
import { toPem, trustBundlePem } from "../../../services/ca/material.js"
import { caSettingsFromConfig } from "../../../services/ca/settings.js"
import { withScope } from "../../../services/logging/logging.js"
import type { Metrics } from "../../../services/metrics/metrics.js"
import {
  OrchestratorClient,
  type OrchestratorClientShape,
  type OrchestratorError,
} from "../../../services/orchestrator/client.js"
import { Informers } from "../../../services/orchestrator/informer.js"
import type { OrchSecret } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"
import { makeCertificateAuthority } from "../authority.js"
import {
  assemblePluggedTexts,
  type LoadedMaterial,
  PLUGGED_LAYOUTS,
  pendingRootJson,
  retiredRootsJson,
  selfSignedFromTexts,
} from "../key-material.js"
import type { KeySources, PluggedSource, SelfSignedStore } from "../key-sources.js"
import { type PluggedRotationStore, pluggedRotationFromJson, pluggedRotationJson } from "../plugged-rotation-state.js"

export interface CacertsOptions {
  /** The mesh namespace (`--namespace` / `POD_NAMESPACE`). */
  readonly namespace: string
  /** `USE_CACERTS_FOR_SELF_SIGNED_CA` */
  readonly useForSelfSigned: boolean
  /** Default `cacerts`. */
  readonly secretName?: string
  /** How often start-up logs that it still waits for the API server. Default 10 s. */
  readonly waitLogInterval?: Duration.Duration
}

const apiFailure = (what: string, e: OrchestratorError) =>
  new CaMaterialError({ reason: `${what}: HTTP ${e.status} ${e.reason}: ${e.message}` })

/**
 * A plugged-in CA's change of root, kept in the Secret `name` beside `cacerts` (read once at
 * start, written on each change, deleted when nothing is pending or retained). Replicas each run
 * their own phases; the last write wins, and they hold the same previous CA.
 */
const pluggedRotationStore = (
  client: OrchestratorClientShape,
  namespace: string,
  name: string,
): PluggedRotationStore => {
  const where = `Secret ${namespace}/${name}`
  const read = client.get<OrchSecret>(Resources.secrets, namespace, name).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e) => e.notFound,
      () => Effect.succeedNone,
    ),
  )
  const write = (json: string) =>
    Effect.flatMap(read, (existing) => {
      const secret = pluggedRotationSecret(namespace, name, json)
      if (Option.isNone(existing)) return Effect.asVoid(client.create(Resources.secrets, secret))
      // Replaced only as read: a write by another replica meanwhile is a conflict, not lost.
      const resourceVersion = existing.value.metadata.resourceVersion
      return Effect.asVoid(
        client.replace(
          Resources.secrets,
          resourceVersion === undefined ? secret : { ...secret, metadata: { ...secret.metadata, resourceVersion } },
        ),
      )
    })
  return {
    origin: where,
    load: Effect.gen(function* () {
      const secret = yield* Effect.mapError(read, (e) => apiFailure(`cannot read ${where}`, e))
      if (Option.isNone(secret)) return Option.none()
      const json = decodeSecretData(secret.value)[PLUGGED_ROTATION_KEY]
      if (json === undefined) return Option.none()
      return Option.some(yield* pluggedRotationFromJson(json, `${where} key ${PLUGGED_ROTATION_KEY}`))
    }),
    save: (state) =>
      (state === undefined
        ? client.remove(Resources.secrets, namespace, name).pipe(
            Effect.catchIf(
              (e) => e.notFound,
              () => Effect.void,
            ),
          )
        : write(pluggedRotationJson(state)).pipe(
            // Written by another replica between the read and the write: once more from a fresh read.
            Effect.catchIf(
              (e) => e.conflict,
              () => write(pluggedRotationJson(state)),
            ),
          )
      ).pipe(Effect.mapError((e) => apiFailure(`cannot write ${where}`, e))),
  }
}

/**
 * The key sources of the `cacerts` Secret: always a plugged-in source; the self-signed store too
 * with `useForSelfSigned`. Completes once the Secret has been listed.
 */
export const makeCacertsKeySources = (options: CacertsOptions) =>
  Effect.gen(function* () {
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.namespace
    const name = options.secretName ?? CACERTS_SECRET
    const where = `Secret ${namespace}/${name}`
    const secrets = yield* informers.informer<OrchSecret>(Resources.secrets, {
      namespace,
      fieldSelector: `metadata.name=${name}`,
    })
    yield* secrets.synced.pipe(
      Effect.race(
        Effect.forever(
          Effect.zipRight(
            Effect.sleep(options.waitLogInterval ?? Duration.seconds(10)),
            Effect.logWarning(`CA: waiting for the orchestrator to list ${where}`),
          ),
        ),
      ),
      withScope("ca"),
    )

    // Every change of the Secret as a tick (the current state is read again on each).
    const changes: Stream.Stream<void> = Stream.unwrapScoped(
      Effect.map(secrets.subscribe, ({ batches }) => Stream.map(Stream.fromQueue(batches), () => undefined)),
    )

    const current = () => secrets.get(namespace, name)

    const pluggedOf = (
      secret: OrchSecret | undefined,
    ): Effect.Effect<Option.Option<LoadedMaterial>, CaMaterialError> => {
      if (secret === undefined) return Effect.succeed(Option.none())
      // With USE_CACERTS_FOR_SELF_SIGNED_CA the Secret this CA wrote is its store, not a plugged CA.
      if (options.useForSelfSigned && isSelfSignedStore(secret)) return Effect.succeed(Option.none())
      const data = decodeSecretData(secret)
      const match = matchLayout(data, PLUGGED_LAYOUTS)
      switch (match._tag) {
        case "Absent":
          return Effect.succeed(Option.none())
        case "Incomplete":
          return Effect.fail(
            new CaMaterialError({
              reason: `the plugged-in CA in ${where} is incomplete: missing ${match.missing.join(", ")} (a complete bundle is ${match.names.join(", ")})`,
            }),
          )
        case "Complete": {
          const l = match.layout
          const at = (key: string) => `${where} key ${key}`
          return Effect.map(
            assemblePluggedTexts(
              { cert: data[l.cert]!, key: data[l.key]!, chain: l.chain && data[l.chain], root: data[l.root]! },
              {
                cert: at(l.cert),
                key: at(l.key),
                chain: l.chain === undefined ? undefined : at(l.chain),
                root: at(l.root),
                bundle: where,
              },
            ),
            Option.some,
          )
        }
      }
    }

    const plugged: PluggedSource = { origin: where, load: Effect.suspend(() => pluggedOf(current())), changes }

    // The resourceVersion of the stored root this instance last read or wrote: a rotation
    // replaces only that version, so two replicas rotating at once cannot both win.
    const storedVersion = yield* Ref.make<string | undefined>(undefined)
    const storeOf = (secret: OrchSecret) =>
      Effect.gen(function* () {
        const data = decodeSecretData(secret)
        const at = (key: string) => `${where} key ${key}`
        if (data[CacertsKeys.caCert] === undefined || data[CacertsKeys.caKey] === undefined) {
          return yield* new CaMaterialError({
            reason: `${where} holds no self-signed root (no ${CacertsKeys.caCert} and ${CacertsKeys.caKey})`,
          })
        }
        const loaded = yield* selfSignedFromTexts(
          {
            cert: data[CacertsKeys.caCert],
            key: data[CacertsKeys.caKey],
            retired: data[CacertsKeys.retiredRoots],
            pending: data[CacertsKeys.keyRotation],
          },
          {
            cert: at(CacertsKeys.caCert),
            key: at(CacertsKeys.caKey),
            retired: at(CacertsKeys.retiredRoots),
            pending: at(CacertsKeys.keyRotation),
          },
        )
        yield* Ref.set(storedVersion, secret.metadata.resourceVersion)
        return loaded
      })
    const secretOf = (loaded: LoadedMaterial, resourceVersion: string | undefined): OrchSecret => {
      const secret = selfSignedSecret(namespace, name, {
        rootPem: toPem(loaded.material.root),
        keyPem: loaded.key.privateKeyPem,
        trustBundlePem: trustBundlePem(loaded.material),
        retiredJson: retiredRootsJson(loaded),
        pendingJson: loaded.pending !== undefined ? pendingRootJson(loaded.pending) : undefined,
      })
      return resourceVersion === undefined ? secret : { ...secret, metadata: { ...secret.metadata, resourceVersion } }
    }
    const create = (loaded: LoadedMaterial) =>
      client.create(Resources.secrets, secretOf(loaded, undefined)).pipe(
        Effect.flatMap((written) => Effect.as(Ref.set(storedVersion, written.metadata.resourceVersion), loaded)),
        Effect.catchAll((e) =>
          e.conflict
            ? // Another replica stored its root first: use that one.
              client.get<OrchSecret>(Resources.secrets, namespace, name).pipe(
                Effect.mapError((e2) => apiFailure(`cannot read ${where} after a conflict`, e2)),
                Effect.flatMap(storeOf),
              )
            : Effect.fail(apiFailure(`cannot create ${where}`, e)),
        ),
      )
    const selfSigned: SelfSignedStore = {
      origin: where,
      load: Effect.suspend(() => {
        const secret = current()
        return secret === undefined ? Effect.succeed(Option.none()) : Effect.map(storeOf(secret), Option.some)
      }),
      create,
      persist: (loaded) =>
        Effect.gen(function* () {
          const version = yield* Ref.get(storedVersion)
          if (version === undefined) return yield* Effect.asVoid(create(loaded))
          const written = yield* client
            .replace(Resources.secrets, secretOf(loaded, version))
            .pipe(
              Effect.mapError((e) =>
                e.conflict
                  ? new CaMaterialError({ reason: `${where} was changed by another instance meanwhile` })
                  : apiFailure(`cannot update ${where}`, e),
              ),
            )
          yield* Ref.set(storedVersion, written.metadata.resourceVersion)
        }),
      changes,
    }
    const pluggedRotation = pluggedRotationStore(client, namespace, pluggedRotationSecretName(name))
    const sources: KeySources = options.useForSelfSigned
      ? { plugged, selfSigned, pluggedRotation }
      : { plugged, pluggedRotation }
    return sources
  })

/**
 * The CertificateAuthority on the orchestrator: as `Authority.layer` (ROOT_CA_DIR first), plus
 * the `cacerts` Secret of the CA's namespace as plugged-in CA and, with
 * `USE_CACERTS_FOR_SELF_SIGNED_CA`, as the self-signed store.
 */
export const layerAuthority: Layer.Layer<
  CertificateAuthority,
  CaConfigError | CaMaterialError,
  Metrics | CaConfig | OrchestratorClient | Informers
> = Layer.scoped(
  CertificateAuthority,
  Effect.gen(function* () {
    const config = yield* CaConfig
    if (config.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE < MIN_RSA_BITS) {
      return yield* new CaConfigError({
        reason: `MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=${config.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE} is below ${MIN_RSA_BITS}`,
      })
    }
    const sources = yield* makeCacertsKeySources({
      namespace: config.namespace,
      useForSelfSigned: config.USE_CACERTS_FOR_SELF_SIGNED_CA,
    })
    return yield* makeCertificateAuthority(caSettingsFromConfig(config), sources)
  }),
)
