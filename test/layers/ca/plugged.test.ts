/**
 * Plugged-in CA from ROOT_CA_DIR: both file layouts, start-up errors for incomplete or
 * inconsistent bundles, hot reload on change (a bad bundle keeps the last good CA), issued
 * chains verified by openssl through the intermediate, and a replacement under a different root
 * going through the key rotation's overlap (issue 43).
 */
import { copyFile, mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option, Ref, Stream } from "effect"
import { type CaSettings, makeCertificateAuthority } from "../../../src/layers/ca/authority.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { CertificateAuthorityShape } from "../../../src/services/ca/ca.js"
import { parseCsr } from "../../../src/services/ca/csr.js"
import { bundleVersion } from "../../../src/services/ca/key-rotation.js"
import { type SigningMaterial, trustBundlePem } from "../../../src/services/ca/material.js"
import { execFileAsync, makeCsr, opensslVerify, tempDir } from "./helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const openssl = (...args: Array<string>) => execFileAsync("openssl", args)

/** An EC root CA in `dir` (root.pem, root.key). */
const makeRoot = async (dir: string) => {
  await openssl(
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    join(dir, "root.key"),
    "-out",
    join(dir, "root.pem"),
    "-days",
    "30",
    "-subj",
    "/O=test/CN=Test Root CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  )
}

/** An intermediate CA signed by the root: `<name>.pem`, `<name>.key`. */
const makeIntermediate = async (dir: string, name: string, curve = "P-256") => {
  await writeFile(
    join(dir, "ext.cnf"),
    "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n",
  )
  await openssl(
    "req",
    "-new",
    "-newkey",
    "ec",
    "-pkeyopt",
    `ec_paramgen_curve:${curve}`,
    "-nodes",
    "-keyout",
    join(dir, `${name}.key`),
    "-out",
    join(dir, `${name}.csr`),
    "-subj",
    `/O=test/CN=${name}`,
  )
  await openssl(
    "x509",
    "-req",
    "-in",
    join(dir, `${name}.csr`),
    "-CA",
    join(dir, "root.pem"),
    "-CAkey",
    join(dir, "root.key"),
    "-CAcreateserial",
    "-days",
    "20",
    "-extfile",
    join(dir, "ext.cnf"),
    "-out",
    join(dir, `${name}.pem`),
  )
}

const text = (path: string) => readFile(path, "utf8")

/** Writes the reference layout into `target` (atomically per file). */
const plug = async (work: string, target: string, name: string) => {
  await mkdir(target, { recursive: true })
  const put = async (file: string, content: string) => {
    await writeFile(join(target, `.${file}.tmp`), content)
    await rename(join(target, `.${file}.tmp`), join(target, file))
  }
  await put("ca-key.pem", await text(join(work, `${name}.key`)))
  await put("cert-chain.pem", (await text(join(work, `${name}.pem`))) + (await text(join(work, "root.pem"))))
  await put("root-cert.pem", await text(join(work, "root.pem")))
  await put("ca-cert.pem", await text(join(work, `${name}.pem`)))
}

const settings = (rootCaDir: string, stateDir: string): CaSettings => ({
  trustDomain: "cluster.local",
  rootCaDir,
  stateDir,
  rsaKeySize: 2048,
  selfSignedTtl: Duration.hours(10),
  rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false },
  policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(24) },
  reloadDelay: Duration.millis(50),
})

const issue = (ca: CertificateAuthorityShape) =>
  Effect.gen(function* () {
    const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
    return yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 600 })
  })

const subjectOf = async (dir: string, pem: string) => {
  await writeFile(join(dir, "subj.pem"), pem)
  return (await openssl("x509", "-noout", "-subject", "-in", join(dir, "subj.pem"))).stdout.trim()
}

describe("plugged-in CA", () => {
  it.scopedLive(
    "signs through the intermediate, and hot-reloads a new signing cert; a broken bundle keeps the last good one",
    () =>
      Effect.gen(function* () {
        const work = yield* Effect.promise(() => tempDir("plug"))
        const caDir = join(work, "cacerts")
        yield* Effect.promise(async () => {
          await makeRoot(work)
          await makeIntermediate(work, "int-a")
          await makeIntermediate(work, "int-b", "P-384")
          await plug(work, caDir, "int-a")
        })
        const ca = yield* makeCertificateAuthority(settings(caDir, join(work, "state")))
        const material = yield* ca.material
        expect(material.source).toBe("plugged")
        expect(material.signingCert.subject).toBe("O=test, CN=int-a")
        expect(material.intermediates).toHaveLength(0)

        const chain = yield* issue(ca)
        expect(chain).toHaveLength(3)
        const rootPem = yield* Effect.promise(() => text(join(work, "root.pem")))
        expect(chain[2]!.trim()).toBe(rootPem.trim())
        expect(yield* Effect.promise(() => opensslVerify(work, chain, rootPem))).toContain("leaf.pem: OK")
        expect(yield* Effect.promise(() => subjectOf(work, chain[1]!))).toBe("subject=O = test, CN = int-a")

        // Record every published CA, then break the bundle (key of int-b with the cert of int-a).
        const seen = yield* Ref.make<Array<string>>([])
        yield* Effect.forkScoped(
          Stream.runForEach(ca.changes, (m) => Ref.update(seen, (list) => [...list, m.signingCert.subject])),
        )
        yield* Effect.promise(() => copyFile(join(work, "int-b.key"), join(caDir, "ca-key.pem")))
        // Then plug int-b completely: the CA must switch to it, never to the broken pair.
        const switched = yield* Effect.fork(
          ca.changes.pipe(
            Stream.filter((m) => m.signingCert.subject === "O=test, CN=int-b"),
            Stream.runHead,
            Effect.map(Option.getOrThrow),
          ),
        )
        yield* Effect.promise(() => plug(work, caDir, "int-b"))
        yield* Fiber.join(switched)
        const after = yield* issue(ca)
        expect(yield* Effect.promise(() => opensslVerify(work, after, rootPem))).toContain("leaf.pem: OK")
        expect(yield* Effect.promise(() => subjectOf(work, after[1]!))).toBe("subject=O = test, CN = int-b")
        expect(new Set(yield* Ref.get(seen))).toEqual(new Set(["O=test, CN=int-a", "O=test, CN=int-b"]))
      }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("reads the tls.crt / tls.key / ca.crt layout", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("tls"))
      const caDir = join(work, "cacerts")
      yield* Effect.promise(async () => {
        await makeRoot(work)
        await makeIntermediate(work, "int-a")
        await mkdir(caDir)
        await writeFile(
          join(caDir, "tls.crt"),
          (await text(join(work, "int-a.pem"))) + (await text(join(work, "root.pem"))),
        )
        await copyFile(join(work, "int-a.key"), join(caDir, "tls.key"))
        await copyFile(join(work, "root.pem"), join(caDir, "ca.crt"))
      })
      const ca = yield* makeCertificateAuthority(settings(caDir, join(work, "state")))
      const chain = yield* issue(ca)
      const rootPem = yield* Effect.promise(() => text(join(work, "root.pem")))
      expect(yield* Effect.promise(() => opensslVerify(work, chain, rootPem))).toContain("leaf.pem: OK")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("fails start-up on an incomplete bundle, naming the missing files", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("incomplete"))
      const caDir = join(work, "cacerts")
      yield* Effect.promise(async () => {
        await makeRoot(work)
        await makeIntermediate(work, "int-a")
        await mkdir(caDir)
        await copyFile(join(work, "int-a.pem"), join(caDir, "ca-cert.pem"))
        await copyFile(join(work, "int-a.key"), join(caDir, "ca-key.pem"))
      })
      const exit = yield* Effect.exit(makeCertificateAuthority(settings(caDir, join(work, "state"))))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        expect(exit.cause.error.message).toBe(
          `the plugged-in CA in ROOT_CA_DIR=${caDir} is incomplete: missing cert-chain.pem, root-cert.pem (a complete bundle is ca-cert.pem, ca-key.pem, cert-chain.pem, root-cert.pem)`,
        )
      }
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("fails start-up when the key does not match or the chain does not reach the root", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("mismatch"))
      const caDir = join(work, "cacerts")
      const other = join(work, "other")
      yield* Effect.promise(async () => {
        await makeRoot(work)
        await makeIntermediate(work, "int-a")
        await makeIntermediate(work, "int-b")
        await plug(work, caDir, "int-a")
        await copyFile(join(work, "int-b.key"), join(caDir, "ca-key.pem"))
        await mkdir(other)
        await makeRoot(other)
      })
      const mismatch = yield* Effect.flip(makeCertificateAuthority(settings(caDir, join(work, "state"))))
      expect(mismatch.message).toMatch(/ca-key.pem does not match the certificate in .*ca-cert.pem/)
      yield* Effect.promise(async () => {
        await plug(work, caDir, "int-a")
        await copyFile(join(other, "root.pem"), join(caDir, "root-cert.pem"))
        await writeFile(join(caDir, "cert-chain.pem"), await text(join(work, "int-a.pem")))
      })
      const broken = yield* Effect.flip(makeCertificateAuthority(settings(caDir, join(work, "state"))))
      expect(broken.message).toMatch(/does not lead to a root in .*root-cert.pem/)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive(
    "a replacement under a new root is published first, signs once agents have it, then the old root retires",
    () =>
      Effect.gen(function* () {
        const work = yield* Effect.promise(() => tempDir("plug-rotate"))
        const caDir = join(work, "cacerts")
        const next = join(work, "next")
        yield* Effect.promise(async () => {
          await makeRoot(work)
          await makeIntermediate(work, "int-a")
          await plug(work, caDir, "int-a")
          await mkdir(next)
          await makeRoot(next)
          await makeIntermediate(next, "int-b")
        })
        const ca = yield* makeCertificateAuthority({
          ...settings(caDir, join(work, "state")),
          // Long enough for openssl to verify a leaf on a busy machine; phase (c) lasts as long.
          policy: { defaultTtl: Duration.seconds(8), maxTtl: Duration.seconds(8) },
          keyRotation: {
            checkInterval: Duration.millis(50),
            publishMinWait: Duration.millis(200),
            publishTimeout: Duration.seconds(30),
            rotateOnKeyMismatch: false,
            maxWatchers: 10,
          },
        })
        const rotation = ca.keyRotation!
        const version = Effect.map(ca.material, (m) => bundleVersion(trustBundlePem(m)))
        const agent = yield* rotation.watch.register("spiffe://cluster.local/ns/default/sa/sleep", "peer")
        yield* rotation.watch.ack(agent, yield* version)
        const oldRoot = (yield* ca.material).root
        const until = (done: (m: SigningMaterial) => boolean) =>
          ca.changes.pipe(Stream.filter(done), Stream.runHead, Effect.map(Option.getOrThrow))

        // (a) the new CA's root joins the bundle; int-a keeps signing while the agent lacks it.
        const published = yield* Effect.fork(until((m) => m.trustBundle.length === 2))
        yield* Effect.promise(() => plug(next, caDir, "int-b"))
        const both = yield* Fiber.join(published)
        expect(both.signingCert.subject).toBe("O=test, CN=int-a")
        yield* Effect.sleep(Duration.millis(500))
        expect((yield* ca.material).signingCert.subject).toBe("O=test, CN=int-a")
        expect((yield* rotation.status).phase).toBe("publishing")

        // (b) acknowledged: int-b signs, the old root stays trusted.
        const switched = yield* Effect.fork(until((m) => m.signingCert.subject === "O=test, CN=int-b"))
        yield* rotation.watch.ack(agent, yield* version)
        const after = yield* Fiber.join(switched)
        expect(after.trustBundle).toHaveLength(2)
        expect(after.trustBundle[1]!.equal(oldRoot)).toBe(true)
        const newRootPem = yield* Effect.promise(() => text(join(next, "root.pem")))
        const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
        const chain = yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 0 })
        expect(yield* Effect.promise(() => opensslVerify(work, chain, trustBundlePem(after)))).toContain("leaf.pem: OK")
        expect(yield* Effect.promise(() => opensslVerify(work, chain, newRootPem))).toContain("leaf.pem: OK")

        // (c) MAX_WORKLOAD_CERT_TTL (8 s) later only the new root is left.
        const single = yield* until((m) => m.trustBundle.length === 1)
        expect(single.trustBundle[0]!.equal(after.root)).toBe(true)
      }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
