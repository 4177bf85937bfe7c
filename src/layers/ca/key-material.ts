/**
 * Where the CA key comes from.
 *
 * Plugged-in CA: `ROOT_CA_DIR` holds either `ca-cert.pem`, `ca-key.pem`, `cert-chain.pem`,
 * `root-cert.pem` (the reference's layout) or `tls.crt`, `tls.key`, `ca.crt` (cert-manager's).
 * A directory with some but not all files of a layout is a start-up error naming the missing
 * files; key/certificate mismatches and broken chains are errors too.
 *
 * Self-signed CA: the root and its key live in a state directory (`ca-cert.pem`, `ca-key.pem`,
 * `retired-roots.json` for roots kept in the trust bundle after a rotation, `key-rotation.json`
 * for a new root and key being published before they sign: issue 43), written atomically with
 * the keys readable by the owner only, so a restart keeps the same root and resumes a rotation.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { CaMaterialError } from "../../services/ca/errors.js"
import { createSelfSignedRoot, type SigningMaterial, toPem } from "../../services/ca/material.js"
import type { RetiredRoot } from "../../services/ca/rotation.js"
import { parseCertificates, x509 } from "../../services/ca/x509.js"
import { generateRsaKey, importPrivateKeyPem, type KeyPair, keyMatchesPublicKey } from "./keys.js"

export const PLUGGED_LAYOUTS = [
  { cert: "ca-cert.pem", key: "ca-key.pem", chain: "cert-chain.pem", root: "root-cert.pem" },
  { cert: "tls.crt", key: "tls.key", chain: undefined, root: "ca.crt" },
] as const

const fail = (reason: string) => Effect.fail(new CaMaterialError({ reason }))

/** Synchronous, as `writeAtomic` is (small files, read at start-up while lists are read). */
const readText = (path: string) =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: (e) => new CaMaterialError({ reason: `cannot read ${path}: ${(e as Error).message}` }),
  })

const certsOf = (text: string, path: string) =>
  Effect.try({
    try: () => parseCertificates(text),
    catch: (e) => new CaMaterialError({ reason: `${path}: cannot parse certificates: ${(e as Error).message}` }),
  })

const signedBy = (cert: x509.X509Certificate, issuer: x509.X509Certificate) =>
  Effect.tryPromise({
    try: () => cert.verify({ publicKey: issuer.publicKey, signatureOnly: true }),
    catch: () => new CaMaterialError({ reason: "cannot verify a certificate signature" }),
  }).pipe(Effect.orElseSucceed(() => false))

const isCa = (cert: x509.X509Certificate) => cert.getExtension(x509.BasicConstraintsExtension)?.ca === true

/** The files present of each plugged layout; which files are missing. */
export const pluggedFiles = (dir: string) =>
  PLUGGED_LAYOUTS.map((layout) => {
    const names = [layout.cert, layout.key, ...(layout.chain ? [layout.chain] : []), layout.root]
    const present = names.filter((n) => existsSync(join(dir, n)))
    return { layout, names, present, missing: names.filter((n) => !present.includes(n)) }
  })

/** A new root and key in phase (a) of a key rotation: in the trust bundle, not signing yet. */
export interface PendingRoot {
  readonly cert: x509.X509Certificate
  readonly key: KeyPair
  readonly publishedAtMs: number
}

export interface LoadedMaterial {
  readonly material: SigningMaterial
  readonly key: KeyPair
  readonly retired: ReadonlyArray<RetiredRoot<x509.X509Certificate>>
  /** Self-signed: the root being published by a key rotation. */
  readonly pending?: PendingRoot
}

/** The texts of a plugged-in bundle, wherever they were read from. */
export interface PluggedTexts {
  readonly cert: string
  readonly key: string
  readonly chain: string | undefined
  readonly root: string
}

/** Where each text came from (a path, or a Secret's key), and the bundle as a whole, for error messages. */
export interface PluggedOrigin {
  readonly cert: string
  readonly key: string
  readonly chain: string | undefined
  readonly root: string
  readonly bundle: string
}

/**
 * Checks and assembles plugged-in material from its texts: key matches the signing certificate,
 * which is a CA, and the chain leads to one of the roots. Shared by ROOT_CA_DIR and the
 * orchestrator's `cacerts` Secret.
 */
export const assemblePluggedTexts = (
  texts: PluggedTexts,
  origin: PluggedOrigin,
): Effect.Effect<LoadedMaterial, CaMaterialError> =>
  Effect.gen(function* () {
    const certPath = origin.cert
    const certs = yield* certsOf(texts.cert, certPath)
    const signingCert = certs[0]
    if (signingCert === undefined) return yield* fail(`${certPath}: no certificate`)
    const keyPath = origin.key
    const key = yield* importPrivateKeyPem(texts.key, keyPath)
    const matches = yield* Effect.promise(() => keyMatchesPublicKey(key, signingCert.publicKey.rawData))
    if (!matches) return yield* fail(`${keyPath} does not match the certificate in ${certPath}`)
    if (!isCa(signingCert)) return yield* fail(`${certPath}: the signing certificate is not a CA certificate`)
    const rootPath = origin.root
    const roots = yield* certsOf(texts.root, rootPath)
    if (roots.length === 0) return yield* fail(`${rootPath}: no certificate`)
    let chainCerts = certs.slice(1)
    if (texts.chain !== undefined) {
      chainCerts = [...chainCerts, ...(yield* certsOf(texts.chain, origin.chain ?? origin.bundle))]
    }
    const intermediates: Array<x509.X509Certificate> = []
    for (const c of chainCerts) {
      if (c.equal(signingCert) || roots.some((r) => r.equal(c)) || intermediates.some((i) => i.equal(c))) continue
      intermediates.push(c)
    }
    // Walk the chain: signing cert → intermediates → one of the roots.
    let top = signingCert
    for (const next of intermediates) {
      if (!(yield* signedBy(top, next))) {
        return yield* fail(
          `the chain in ${origin.bundle} is broken: "${top.subject}" is not signed by "${next.subject}"`,
        )
      }
      top = next
    }
    let root: x509.X509Certificate | undefined
    for (const candidate of roots) {
      if (yield* signedBy(top, candidate)) {
        root = candidate
        break
      }
    }
    if (root === undefined) {
      return yield* fail(
        `the chain in ${origin.bundle} does not lead to a root in ${rootPath}: "${top.subject}" is signed by none`,
      )
    }
    const trustBundle = [root, ...roots.filter((r) => !r.equal(root))]
    return {
      material: {
        signingCert,
        signingKey: key.privateKey,
        intermediates,
        root,
        trustBundle,
        source: "plugged" as const,
      },
      key,
      retired: [],
    }
  })

/** Checks and assembles the plugged-in material of a directory (also used on every hot reload). */
export const assemblePlugged = (
  dir: string,
  files: { cert: string; key: string; chain: string | undefined; root: string },
): Effect.Effect<LoadedMaterial, CaMaterialError> =>
  Effect.gen(function* () {
    const origin: PluggedOrigin = {
      cert: join(dir, files.cert),
      key: join(dir, files.key),
      chain: files.chain === undefined ? undefined : join(dir, files.chain),
      root: join(dir, files.root),
      bundle: dir,
    }
    const texts: PluggedTexts = {
      cert: yield* readText(origin.cert),
      key: yield* readText(origin.key),
      chain: origin.chain === undefined ? undefined : yield* readText(origin.chain),
      root: yield* readText(origin.root),
    }
    return yield* assemblePluggedTexts(texts, origin)
  })

/**
 * The plugged-in CA of `dir`: None when no file of either layout is present; an error for an
 * incomplete layout.
 */
export const loadPlugged = (
  dir: string,
): Effect.Effect<
  Option.Option<LoadedMaterial & { readonly files: (typeof PLUGGED_LAYOUTS)[number] }>,
  CaMaterialError
> =>
  Effect.gen(function* () {
    const found = pluggedFiles(dir).filter((f) => f.present.length > 0)
    const complete = found.find((f) => f.missing.length === 0)
    if (complete !== undefined) {
      const loaded = yield* assemblePlugged(dir, complete.layout)
      return Option.some({ ...loaded, files: complete.layout })
    }
    const partial = found[0]
    if (partial !== undefined) {
      return yield* fail(
        `the plugged-in CA in ROOT_CA_DIR=${dir} is incomplete: missing ${partial.missing.join(", ")} (a complete bundle is ${partial.names.join(", ")})`,
      )
    }
    return Option.none()
  })

export interface SelfSignedSettings {
  readonly stateDir: string
  readonly trustDomain: string
  readonly rsaKeySize: number
  readonly ttl: import("effect").Duration.Duration
}

export const STATE_FILES = {
  cert: "ca-cert.pem",
  key: "ca-key.pem",
  retired: "retired-roots.json",
  pending: "key-rotation.json",
  /** A plugged-in CA's replacement being published, and the roots kept after one (issue 43). */
  pluggedRotation: "plugged-rotation.json",
} as const

/**
 * Writes a state file through a temporary one and a rename. Synchronous on purpose: these are a
 * few small files, and each awaited step of an asynchronous write waits for a turn of the event
 * loop; at start-up on an orchestrator those turns are taken by the lists being read, and the
 * eleven steps of storing a new root took up to 500 ms, on the way to `/ready`.
 */
export const writeAtomic = (path: string, text: string, mode: number) =>
  Effect.try({
    try: () => {
      const tmp = `${path}.tmp-${process.pid}`
      writeFileSync(tmp, text, { mode })
      chmodSync(tmp, mode)
      renameSync(tmp, path)
    },
    catch: (e) => new CaMaterialError({ reason: `cannot write ${path}: ${(e as Error).message}` }),
  })

/** Writes the self-signed root, its key and the retired roots to the state directory. */
export const persistSelfSigned = (stateDir: string, loaded: LoadedMaterial) =>
  Effect.gen(function* () {
    yield* Effect.try({
      try: () => mkdirSync(stateDir, { recursive: true, mode: 0o700 }),
      catch: (e) => new CaMaterialError({ reason: `cannot create ${stateDir}: ${(e as Error).message}` }),
    })
    yield* writeAtomic(join(stateDir, STATE_FILES.key), loaded.key.privateKeyPem, 0o600)
    yield* writeAtomic(join(stateDir, STATE_FILES.cert), toPem(loaded.material.root), 0o644)
    yield* writeAtomic(join(stateDir, STATE_FILES.retired), retiredRootsJson(loaded), 0o644)
    const pendingPath = join(stateDir, STATE_FILES.pending)
    if (loaded.pending !== undefined) {
      // It holds a private key: the owner only, as ca-key.pem.
      yield* writeAtomic(pendingPath, pendingRootJson(loaded.pending), 0o600)
    } else {
      yield* Effect.try({
        try: () => rmSync(pendingPath, { force: true }),
        catch: (e) => new CaMaterialError({ reason: `cannot remove ${pendingPath}: ${(e as Error).message}` }),
      })
    }
  })

/** The pending root as stored (JSON): certificate, PKCS#8 key, when it was published. */
export const pendingRootJson = (pending: PendingRoot): string =>
  `${JSON.stringify({ cert: toPem(pending.cert), key: pending.key.privateKeyPem, publishedAtMs: pending.publishedAtMs }, null, 2)}\n`

/** Reads a stored pending root; its key must match its certificate. */
export const pendingRootFromJson = (text: string, origin: string): Effect.Effect<PendingRoot, CaMaterialError> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as { cert?: unknown; key?: unknown; publishedAtMs?: unknown },
      catch: (e) => new CaMaterialError({ reason: `${origin}: ${(e as Error).message}` }),
    })
    if (typeof parsed.cert !== "string" || typeof parsed.key !== "string" || typeof parsed.publishedAtMs !== "number") {
      return yield* fail(`${origin}: expected {cert, key, publishedAtMs}`)
    }
    const cert = (yield* certsOf(parsed.cert, origin))[0]
    if (cert === undefined) return yield* fail(`${origin}: no certificate`)
    const key = yield* importPrivateKeyPem(parsed.key, origin)
    if (!(yield* Effect.promise(() => keyMatchesPublicKey(key, cert.publicKey.rawData)))) {
      return yield* fail(`${origin}: the key does not match the certificate`)
    }
    return { cert, key, publishedAtMs: parsed.publishedAtMs }
  })

export const selfSignedMaterial = (
  root: x509.X509Certificate,
  key: KeyPair,
  retired: ReadonlyArray<RetiredRoot<x509.X509Certificate>>,
  pending?: PendingRoot,
): LoadedMaterial => ({
  material: {
    signingCert: root,
    signingKey: key.privateKey,
    intermediates: [],
    root,
    // The current root first, then the one being published, then the retired ones.
    trustBundle: [root, ...(pending !== undefined ? [pending.cert] : []), ...retired.map((r) => r.cert)],
    source: "self-signed",
  },
  key,
  retired,
  ...(pending !== undefined ? { pending } : {}),
})

/** The texts of a stored self-signed root: certificate, key, retired roots (JSON, optional). */
export interface SelfSignedTexts {
  readonly cert: string
  readonly key: string
  readonly retired: string | undefined
  /** `key-rotation.json`, when a rotation is publishing a new root. */
  readonly pending?: string | undefined
}

/** Reads a stored self-signed root from its texts; `origin` names them in error messages. */
export const selfSignedFromTexts = (
  texts: SelfSignedTexts,
  origin: { readonly cert: string; readonly key: string; readonly retired: string; readonly pending?: string },
): Effect.Effect<LoadedMaterial, CaMaterialError> =>
  Effect.gen(function* () {
    const certs = yield* certsOf(texts.cert, origin.cert)
    const root = certs[0]
    if (root === undefined) return yield* fail(`${origin.cert}: no certificate`)
    const key = yield* importPrivateKeyPem(texts.key, origin.key)
    const matches = yield* Effect.promise(() => keyMatchesPublicKey(key, root.publicKey.rawData))
    if (!matches) return yield* fail(`${origin.key} does not match ${origin.cert}`)
    const retired =
      texts.retired !== undefined && texts.retired.trim() !== ""
        ? yield* retiredRootsFromJson(texts.retired, origin.retired)
        : []
    const pending =
      texts.pending !== undefined && texts.pending.trim() !== ""
        ? yield* pendingRootFromJson(texts.pending, origin.pending ?? STATE_FILES.pending)
        : undefined
    return selfSignedMaterial(root, key, retired, pending)
  })

/** The retired roots as stored (JSON). */
export const retiredRootsJson = (loaded: Pick<LoadedMaterial, "retired">): string =>
  `${JSON.stringify(retiredRootsRecord(loaded.retired), null, 2)}\n`

/** The retired roots as a JSON value: PEM and end date of each. */
export const retiredRootsRecord = (retired: ReadonlyArray<RetiredRoot<x509.X509Certificate>>) =>
  retired.map((r) => ({ cert: toPem(r.cert), retainUntilMs: r.retainUntilMs }))

/** Reads stored retired roots (a JSON text or an already parsed value); `origin` names them in errors. */
export const retiredRootsFromJson = (
  json: string | unknown,
  origin: string,
): Effect.Effect<ReadonlyArray<RetiredRoot<x509.X509Certificate>>, CaMaterialError> =>
  Effect.try({
    try: () => {
      const value: unknown = typeof json === "string" ? JSON.parse(json) : json
      if (!Array.isArray(value)) throw new Error("expected a list of {cert, retainUntilMs}")
      return value.map((r: { cert?: unknown; retainUntilMs?: unknown }) => {
        if (typeof r?.cert !== "string" || typeof r.retainUntilMs !== "number") {
          throw new Error("expected a list of {cert, retainUntilMs}")
        }
        return { cert: new x509.X509Certificate(r.cert), retainUntilMs: r.retainUntilMs }
      })
    },
    catch: (e) => new CaMaterialError({ reason: `${origin}: ${(e as Error).message}` }),
  })

/** A new self-signed root and key. */
export const createSelfSigned = (settings: Omit<SelfSignedSettings, "stateDir">, nowMs: number) =>
  Effect.gen(function* () {
    const key = yield* generateRsaKey(settings.rsaKeySize)
    const root = yield* Effect.mapError(
      createSelfSignedRoot(key, { trustDomain: settings.trustDomain, ttl: settings.ttl, nowMs }),
      (e) => new CaMaterialError({ reason: e.reason }),
    )
    return selfSignedMaterial(root, key, [])
  })

/** The persisted self-signed root of a state directory, if there is one. */
export const loadSelfSignedDir = (stateDir: string): Effect.Effect<Option.Option<LoadedMaterial>, CaMaterialError> =>
  Effect.gen(function* () {
    const certPath = join(stateDir, STATE_FILES.cert)
    const keyPath = join(stateDir, STATE_FILES.key)
    if (!existsSync(certPath) || !existsSync(keyPath)) return Option.none()
    const retiredPath = join(stateDir, STATE_FILES.retired)
    const pendingPath = join(stateDir, STATE_FILES.pending)
    const loaded = yield* selfSignedFromTexts(
      {
        cert: yield* readText(certPath),
        key: yield* readText(keyPath),
        retired: existsSync(retiredPath) ? yield* readText(retiredPath) : undefined,
        pending: existsSync(pendingPath) ? yield* readText(pendingPath) : undefined,
      },
      { cert: certPath, key: keyPath, retired: retiredPath, pending: pendingPath },
    )
    return Option.some(loaded)
  })

/** Loads the persisted self-signed root, or creates and persists one. */
export const loadOrCreateSelfSigned = (settings: SelfSignedSettings, nowMs: number) =>
  Effect.gen(function* () {
    const stored = yield* loadSelfSignedDir(settings.stateDir)
    if (Option.isSome(stored)) {
      yield* Effect.logInfo(
        `self-signed CA: loaded root ${stored.value.material.root.serialNumber} from ${settings.stateDir}`,
      )
      return stored.value
    }
    const loaded = yield* createSelfSigned(settings, nowMs)
    yield* persistSelfSigned(settings.stateDir, loaded)
    yield* Effect.logInfo(`self-signed CA: created root ${loaded.material.root.serialNumber} in ${settings.stateDir}`)
    return loaded
  })
