/**
 * Certificate files (OUTPUT_CERTS, FILE_MOUNTED_CERTS). Writing is atomic for the set: the
 * three files are written into a fresh version directory, then one rename swaps the `..data`
 * symlink to it; `key.pem`, `cert-chain.pem` and `root-cert.pem` are symlinks through `..data`.
 * A reader therefore never sees a half-written file, nor a key from one issue with the chain of
 * another when it resolves `..data` once.
 */
import { createPrivateKey, randomBytes, X509Certificate } from "node:crypto"
import { mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { CERT_FILES, IdentityError, type WorkloadCertificate } from "../../../services/agent/identity/identity.js"
import { parseCertificates, pemBlocks } from "../../../services/ca/x509.js"

export const DATA_LINK = "..data"

const fail = (what: string) => (e: unknown) => new IdentityError({ reason: `${what}: ${(e as Error).message}` })

/** Writes the key, chain and root into `dir` atomically as a set. */
export const writeCertFiles = (dir: string, cert: WorkloadCertificate) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dir, { recursive: true })
      const version = `..${new Date().toISOString().replace(/[:.]/g, "_")}.${randomBytes(4).toString("hex")}`
      const versionDir = join(dir, version)
      await mkdir(versionDir, { mode: 0o755 })
      await writeFile(join(versionDir, CERT_FILES.key), cert.keyPem, { mode: 0o600 })
      await writeFile(join(versionDir, CERT_FILES.chain), cert.certChainPem, { mode: 0o644 })
      await writeFile(join(versionDir, CERT_FILES.root), cert.rootCertPem, { mode: 0o644 })
      const previous = await readlink(join(dir, DATA_LINK)).catch(() => undefined)
      const tmpLink = join(dir, `..data_tmp.${randomBytes(4).toString("hex")}`)
      await symlink(version, tmpLink)
      await rename(tmpLink, join(dir, DATA_LINK))
      for (const name of Object.values(CERT_FILES)) {
        const target = join(DATA_LINK, name)
        const current = await readlink(join(dir, name)).catch(() => undefined)
        if (current === target) continue
        const tmp = join(dir, `.${name}.tmp.${randomBytes(4).toString("hex")}`)
        await symlink(target, tmp)
        // A regular file left by an older writer is replaced in one rename too.
        await rename(tmp, join(dir, name))
      }
      if (previous !== undefined && previous !== version) {
        await rm(join(dir, previous), { recursive: true, force: true })
      }
      // Stray version directories of an interrupted writer.
      for (const entry of await readdir(dir)) {
        if (entry.startsWith("..") && entry !== DATA_LINK && entry !== version && !entry.startsWith("..data")) {
          await rm(join(dir, entry), { recursive: true, force: true })
        }
      }
    },
    catch: fail(`cannot write certificates to ${dir}`),
  })

/** A WorkloadCertificate from PEM texts: key, chain (leaf first) and root. */
export const certificateFromPem = (
  keyPem: string,
  chainPem: string,
  rootPem: string,
): Effect.Effect<WorkloadCertificate, IdentityError> =>
  Effect.try({
    try: () => {
      const certs = parseCertificates(chainPem)
      const leaf = certs[0]
      if (leaf === undefined) throw new Error("the chain holds no certificate")
      if (pemBlocks(keyPem).length === 0) throw new Error("no private key")
      // A key from one issue with the chain of another (a half-replaced mount) must not be served.
      const leafPem = pemBlocks(chainPem, "CERTIFICATE")[0] ?? ""
      if (!new X509Certificate(leafPem).checkPrivateKey(createPrivateKey(keyPem))) {
        throw new Error("the private key does not match the certificate")
      }
      if (parseCertificates(rootPem).length === 0) throw new Error("no root certificate")
      const san = leaf.getExtension("2.5.29.17") as { names?: { items: Array<{ type: string; value: string }> } } | null
      const identity = san?.names?.items.find((n) => n.type === "url")?.value ?? ""
      return {
        keyPem,
        certChainPem: chainPem,
        rootCertPem: rootPem,
        notBefore: leaf.notBefore,
        notAfter: leaf.notAfter,
        identity,
      }
    },
    catch: fail("invalid certificate material"),
  })

/** Reads key, chain and root from `dir` (FILE_MOUNTED_CERTS). */
export const readCertFiles = (dir: string) =>
  Effect.gen(function* () {
    const [key, chain, root] = yield* Effect.tryPromise({
      try: () =>
        Promise.all([
          readFile(join(dir, CERT_FILES.key), "utf8"),
          readFile(join(dir, CERT_FILES.chain), "utf8"),
          readFile(join(dir, CERT_FILES.root), "utf8"),
        ]),
      catch: fail(`cannot read certificates from ${dir}`),
    })
    return yield* certificateFromPem(key, chain, root)
  })
