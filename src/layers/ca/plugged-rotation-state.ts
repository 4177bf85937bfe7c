/**
 * What a plugged-in CA's change of root (issue 43) must keep across a restart: ROOT_CA_DIR or the
 * `cacerts` Secret already holds the new CA, so the old one — which signs until every agent has
 * the new root — and the roots kept after the switch exist nowhere else. Stored as JSON:
 *
 * - `publishing` (phase (a)): the previous CA (signing certificate and intermediates, its key, its
 *   own roots), the signing certificate of the CA being published, and when publishing began;
 * - `retired` (phases (b)–(c)): roots still trusted, each with its end date.
 *
 * Nothing pending and nothing retained: no record at all. The record holds a private key, so the
 * directory store writes it for the owner only, as `ca-key.pem`; the orchestrator's store is a
 * Secret (orchestrator/cacerts-secret.ts).
 */
import { existsSync } from "node:fs"
import { mkdir, readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { CaMaterialError } from "../../services/ca/errors.js"
import { toPem } from "../../services/ca/material.js"
import type { RetiredRoot } from "../../services/ca/rotation.js"
import { parseCertificates, type x509 } from "../../services/ca/x509.js"
import {
  assemblePluggedTexts,
  type LoadedMaterial,
  retiredRootsFromJson,
  retiredRootsRecord,
  STATE_FILES,
  writeAtomic,
} from "./key-material.js"

type Cert = x509.X509Certificate

export interface PluggedRotationState {
  /** Phase (a): the CA that keeps signing until the switch, and the one being published. */
  readonly publishing?: {
    /** Its own roots only (`retired` are kept apart). */
    readonly previous: LoadedMaterial
    readonly nextSigningCert: Cert
    readonly sinceMs: number
  }
  readonly retired: ReadonlyArray<RetiredRoot<Cert>>
}

/** Where the state is kept: the CA's state directory, or a Secret beside `cacerts`. */
export interface PluggedRotationStore {
  readonly origin: string
  readonly load: Effect.Effect<Option.Option<PluggedRotationState>, CaMaterialError>
  /** Stores the state; undefined (nothing published, nothing retained) removes the record. */
  readonly save: (state: PluggedRotationState | undefined) => Effect.Effect<void, CaMaterialError>
}

/** A plugged-in CA's own roots: its trust bundle without the roots retained from earlier CAs. */
export const ownRoots = (loaded: LoadedMaterial): ReadonlyArray<Cert> =>
  loaded.material.trustBundle.filter((c) => !loaded.retired.some((r) => r.cert.equal(c)))

export const pluggedRotationJson = (state: PluggedRotationState): string => {
  const publishing = state.publishing
  const record = {
    ...(publishing !== undefined
      ? {
          publishing: {
            previous: {
              cert: [publishing.previous.material.signingCert, ...publishing.previous.material.intermediates]
                .map(toPem)
                .join(""),
              key: publishing.previous.key.privateKeyPem,
              root: ownRoots(publishing.previous).map(toPem).join(""),
            },
            next: toPem(publishing.nextSigningCert),
            sinceMs: publishing.sinceMs,
          },
        }
      : {}),
    retired: retiredRootsRecord(state.retired),
  }
  return `${JSON.stringify(record, null, 2)}\n`
}

interface StoredRecord {
  readonly publishing?: {
    readonly previous?: { readonly cert?: unknown; readonly key?: unknown; readonly root?: unknown }
    readonly next?: unknown
    readonly sinceMs?: unknown
  }
  readonly retired?: unknown
}

/** Reads a stored state; the previous CA is checked as when it was plugged in (key, chain, root). */
export const pluggedRotationFromJson = (
  text: string,
  origin: string,
): Effect.Effect<PluggedRotationState, CaMaterialError> =>
  Effect.gen(function* () {
    const fail = (why: string) => Effect.fail(new CaMaterialError({ reason: `${origin}: ${why}` }))
    const record = yield* Effect.try({
      try: () => JSON.parse(text) as StoredRecord,
      catch: (e) => new CaMaterialError({ reason: `${origin}: ${(e as Error).message}` }),
    })
    const retired = yield* retiredRootsFromJson(record.retired ?? [], origin)
    const p = record.publishing
    if (p === undefined) return { retired }
    const previous = p.previous
    if (
      typeof previous?.cert !== "string" ||
      typeof previous.key !== "string" ||
      typeof previous.root !== "string" ||
      typeof p.next !== "string" ||
      typeof p.sinceMs !== "number"
    ) {
      return yield* fail("expected publishing: {previous: {cert, key, root}, next, sinceMs}")
    }
    const loaded = yield* assemblePluggedTexts(
      { cert: previous.cert, key: previous.key, chain: undefined, root: previous.root },
      { cert: origin, key: origin, chain: undefined, root: origin, bundle: origin },
    )
    const next = yield* Effect.try({
      try: () => parseCertificates(p.next as string)[0],
      catch: (e) => new CaMaterialError({ reason: `${origin}: ${(e as Error).message}` }),
    })
    if (next === undefined) return yield* fail("no certificate for the CA being published")
    return { publishing: { previous: loaded, nextSigningCert: next, sinceMs: p.sinceMs }, retired }
  })

/** `plugged-rotation.json` in the CA's state directory (beside the self-signed root's files). */
export const directoryPluggedRotationStore = (stateDir: string): PluggedRotationStore => {
  const path = join(stateDir, STATE_FILES.pluggedRotation)
  return {
    origin: path,
    load: Effect.gen(function* () {
      if (!existsSync(path)) return Option.none()
      const text = yield* Effect.tryPromise({
        try: () => readFile(path, "utf8"),
        catch: (e) => new CaMaterialError({ reason: `cannot read ${path}: ${(e as Error).message}` }),
      })
      return Option.some(yield* pluggedRotationFromJson(text, path))
    }),
    save: (state) =>
      state === undefined
        ? Effect.tryPromise({
            try: () => rm(path, { force: true }),
            catch: (e) => new CaMaterialError({ reason: `cannot remove ${path}: ${(e as Error).message}` }),
          })
        : Effect.zipRight(
            Effect.tryPromise({
              try: () => mkdir(stateDir, { recursive: true, mode: 0o700 }),
              catch: (e) => new CaMaterialError({ reason: `cannot create ${stateDir}: ${(e as Error).message}` }),
            }),
            // It holds the previous CA's private key: the owner only.
            writeAtomic(path, pluggedRotationJson(state), 0o600),
          ),
  }
}
