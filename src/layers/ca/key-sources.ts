/**
 * Where the CA's key material comes from, beyond ROOT_CA_DIR: a plugged-in CA held elsewhere
 * (the orchestrator's `cacerts` Secret) and the store of the self-signed root (the state
 * directory by default; the `cacerts` Secret with `USE_CACERTS_FOR_SELF_SIGNED_CA`, so replicas
 * share one root). The authority (authority.ts) takes these as a second argument; sources that
 * need other services close over them when they are built.
 */
import { Effect, type Option, Stream } from "effect"
import type { CaMaterialError } from "../../services/ca/errors.js"
import { type LoadedMaterial, loadSelfSignedDir, persistSelfSigned } from "./key-material.js"
import type { PluggedRotationStore } from "./plugged-rotation-state.js"

/** A plugged-in CA outside ROOT_CA_DIR, hot-reloaded. */
export interface PluggedSource {
  /** For log lines, e.g. "Secret mesh-system/cacerts". */
  readonly origin: string
  /** The CA now; None when the source holds none (the authority then falls back to self-signed). */
  readonly load: Effect.Effect<Option.Option<LoadedMaterial>, CaMaterialError>
  /** A tick each time the CA may have changed; the authority then runs `load` again. */
  readonly changes: Stream.Stream<void>
}

/** Where the self-signed root, its key and the retired roots are kept. */
export interface SelfSignedStore {
  readonly origin: string
  /** The stored root, if any. */
  readonly load: Effect.Effect<Option.Option<LoadedMaterial>, CaMaterialError>
  /**
   * Stores a freshly created root unless another one got there first; returns what is stored
   * afterwards (the other replica's root when it won).
   */
  readonly create: (loaded: LoadedMaterial) => Effect.Effect<LoadedMaterial, CaMaterialError>
  /** Stores a rotated (or pruned) root; fails if the stored one changed meanwhile. */
  readonly persist: (loaded: LoadedMaterial) => Effect.Effect<void, CaMaterialError>
  /** A tick each time someone else may have changed the stored root (another replica's rotation). */
  readonly changes: Stream.Stream<void>
}

export interface KeySources {
  readonly plugged?: PluggedSource
  readonly selfSigned?: SelfSignedStore
  /** Where `plugged`'s change of root is kept across restarts (default: the state directory). */
  readonly pluggedRotation?: PluggedRotationStore
}

/** The state directory: this instance's own root, kept across restarts. */
export const directoryStore = (stateDir: string): SelfSignedStore => ({
  origin: stateDir,
  load: loadSelfSignedDir(stateDir),
  create: (loaded) => Effect.as(persistSelfSigned(stateDir, loaded), loaded),
  persist: (loaded) => persistSelfSigned(stateDir, loaded),
  changes: Stream.empty,
})
