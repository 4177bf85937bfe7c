/**
 * The CA server's own certificate follows the CA: when the plugged-in CA is replaced, the
 * listener presents a certificate from the new signing CA without a restart, and clients
 * trusting the root keep working.
 */
import { copyFile, mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import { layerWith as certificateAuthorityLayer } from "../../../src/layers/ca/authority.js"
import { CaGrpcServer, layerServer as caGrpcServerLayer } from "../../../src/layers/ca/grpc-server.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { clientCertAuthenticator } from "../../../src/services/ca/authenticate.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { createCertificateCall, execFileAsync, makeCsr, servingCertificate, tempDir } from "./helpers.js"

const openssl = (...args: Array<string>) => execFileAsync("openssl", args)

const makeCa = async (dir: string) => {
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
    "/O=test/CN=Root",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  )
  await writeFile(join(dir, "ext.cnf"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n")
  for (const name of ["int-a", "int-b"]) {
    await openssl(
      "req",
      "-new",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
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
}

const plug = async (work: string, target: string, name: string) => {
  await mkdir(target, { recursive: true })
  const put = async (file: string, from: string) => {
    await copyFile(from, join(target, `.${file}.tmp`))
    await rename(join(target, `.${file}.tmp`), join(target, file))
  }
  await put("ca-key.pem", join(work, `${name}.key`))
  await put("cert-chain.pem", join(work, `${name}.pem`))
  await put("root-cert.pem", join(work, "root.pem"))
  await put("ca-cert.pem", join(work, `${name}.pem`))
}

describe("the CA server's serving certificate", () => {
  it.scopedLive("is re-issued by the new CA after a plugged-in CA reload, without restarting the listener", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("serving"))
      const caDir = join(work, "cacerts")
      yield* Effect.promise(async () => {
        await makeCa(work)
        await plug(work, caDir, "int-a")
      })
      const ca = certificateAuthorityLayer({
        trustDomain: "cluster.local",
        rootCaDir: caDir,
        stateDir: join(work, "state"),
        rsaKeySize: 2048,
        selfSignedTtl: Duration.hours(10),
        rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false },
        policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(24) },
        reloadDelay: Duration.millis(50),
      })
      const server = caGrpcServerLayer({
        address: { host: "127.0.0.1", port: 0 },
        dnsNames: ["meshd.mesh-system.svc"],
        authenticators: [clientCertAuthenticator()],
        nodeAuthorizer: undefined,
      })
      const context = yield* Layer.build(server.pipe(Layer.provideMerge(ca), Layer.provideMerge(metricsLayer("test"))))
      const { port } = Context.get(context, CaGrpcServer)
      const authority = Context.get(context, CertificateAuthority)

      const before = yield* Effect.promise(() => servingCertificate(port))
      expect(before.issuer.CN).toBe("int-a")

      const switched = yield* Effect.fork(
        authority.changes.pipe(
          Stream.filter((m) => m.signingCert.subject === "O=test, CN=int-b"),
          Stream.runHead,
          Effect.map(Option.getOrThrow),
        ),
      )
      yield* Effect.promise(() => plug(work, caDir, "int-b"))
      yield* Fiber.join(switched)
      // The serving certificate is re-issued right after the change: poll the listener for it.
      let issuer = before.issuer.CN
      for (let attempt = 0; attempt < 200 && issuer !== "int-b"; attempt++) {
        issuer = (yield* Effect.promise(() => servingCertificate(port))).issuer.CN
        if (issuer !== "int-b") yield* Effect.yieldNow()
      }
      expect(issuer).toBe("int-b")

      // A client trusting the root still reaches the service (refused: no credentials, but over TLS).
      const rootPem = yield* Effect.promise(() => readFile(join(work, "root.pem"), "utf8"))
      const { csrPem } = yield* Effect.promise(() => makeCsr(["spiffe://cluster.local/ns/a/sa/b"]))
      const result = yield* Effect.promise(() => createCertificateCall(port, rootPem, { csr: csrPem }))
      expect(result.error?.details).toMatch(/no verified client certificate/)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
