/**
 * The discovery CA and its secure listener from `CaConfig` read from an environment (a
 * ConfigProvider, not process.env): self-signed CA, disabled server, FIPS policy, bad settings.
 */
import { join } from "node:path"
import { type ConnectionOptions, connect } from "node:tls"
import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { layerCaOnly as caLayer } from "../../../src/programs/mesh-discovery/secure-grpc.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { CaConfig, type CaFields } from "../../../src/services/ca/config.js"
import { trustBundlePem } from "../../../src/services/ca/material.js"
import { createCertificateCall, makeCsr, servingCertificate, tempDir } from "../../layers/ca/helpers.js"
import { freePort } from "../../support/ports.js"

/** `caLayer` with its `CaConfig` read from `vars` and `fields`. */
const caFromEnv = (vars: Record<string, string>, fields: Partial<CaFields>) =>
  caLayer.pipe(
    Layer.provide(CaConfig.layerFromEnv(fields)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))),
    Layer.provide(metricsLayer("test")),
  )

describe("discovery CA and secure listener from CaConfig", () => {
  it.scopedLive("starts the CA and its TLS server from the environment on the secure gRPC address", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("wiring"))
      const port = yield* Effect.promise(() => freePort())
      const layer = caFromEnv(
        { ROOT_CA_DIR: join(dir, "cacerts"), MESHD_CUSTOM_HOST: "ca.local" },
        { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") },
      )
      const context = yield* Layer.build(layer)
      const material = yield* Context.get(context, CertificateAuthority).material
      expect(material.source).toBe("self-signed")
      expect(material.root.subject).toBe("O=cluster.local")
      const served = yield* Effect.promise(() => servingCertificate(port))
      expect(served.subjectaltname).toBe("DNS:meshd.mesh-system.svc, DNS:ca.local")
      const { csrPem } = yield* Effect.promise(() => makeCsr(["spiffe://cluster.local/ns/a/sa/b"]))
      const result = yield* Effect.promise(() => createCertificateCall(port, trustBundlePem(material), { csr: csrPem }))
      expect(result.error?.code).toBe(grpc.status.UNAUTHENTICATED)
    }),
  )

  const noServer = [
    {
      title: "keeps the CA but starts no server when ENABLE_CA_SERVER is false",
      name: "wiring-off",
      env: { ENABLE_CA_SERVER: "false" },
    },
    {
      title: "serves nothing on the secure address with PILOT_CERT_PROVIDER=none and no files",
      name: "wiring-none",
      env: { PILOT_CERT_PROVIDER: "none" },
    },
  ]
  for (const { title, name, env: extra } of noServer) {
    it.scopedLive(title, () =>
      Effect.gen(function* () {
        const dir = yield* Effect.promise(() => tempDir(name))
        const port = yield* Effect.promise(() => freePort())
        const layer = caFromEnv(
          { ROOT_CA_DIR: join(dir, "cacerts"), ...extra },
          { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") },
        )
        const context = yield* Layer.build(layer)
        expect((yield* Context.get(context, CertificateAuthority).material).source).toBe("self-signed")
        const refused = yield* Effect.promise(() =>
          servingCertificate(port).then(
            () => "connected",
            (e: Error) => e.message,
          ),
        )
        expect(refused).toMatch(/ECONNREFUSED/)
      }),
    )
  }

  it.scopedLive("honours COMPLIANCE_POLICY=fips-140-2 on the CA listener: TLS 1.2 with ECDHE AES-GCM only", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("wiring-fips"))
      const port = yield* Effect.promise(() => freePort())
      const layer = caFromEnv(
        { ROOT_CA_DIR: join(dir, "cacerts"), COMPLIANCE_POLICY: "fips-140-2" },
        { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") },
      )
      yield* Layer.build(layer)
      const handshake = (options: ConnectionOptions) =>
        new Promise<string>((resolve) => {
          const socket = connect({
            host: "127.0.0.1",
            port,
            ALPNProtocols: ["h2"],
            rejectUnauthorized: false,
            ...options,
          })
          socket.once("secureConnect", () => {
            resolve(`${socket.getProtocol()} ${socket.getCipher().name}`)
            socket.destroy()
          })
          socket.once("error", (e) => resolve(`error: ${e.message}`))
        })
      expect(yield* Effect.promise(() => handshake({}))).toMatch(/^TLSv1\.2 ECDHE-ECDSA-AES(128|256)-GCM-SHA(256|384)$/)
      expect(yield* Effect.promise(() => handshake({ minVersion: "TLSv1.3" }))).toMatch(/^error:/)
      expect(
        yield* Effect.promise(() => handshake({ maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-CHACHA20-POLY1305" })),
      ).toMatch(/^error:/)
    }),
  )

  it.scopedLive("fails start-up on a malformed JWT_RULE and on a small root key size", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("wiring-bad"))
      const options = { secureGrpcAddr: { host: "127.0.0.1", port: 0 }, stateDir: join(dir, "state") }
      const badRule = caFromEnv({ ROOT_CA_DIR: join(dir, "none"), JWT_RULE: "{" }, options)
      const e1 = yield* Effect.flip(Layer.build(badRule))
      expect(e1.message).toMatch(/JWT_RULE is not JSON/)
      const smallKey = caFromEnv(
        { ROOT_CA_DIR: join(dir, "none"), MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "1024" },
        options,
      )
      const e2 = yield* Effect.flip(Layer.build(smallKey))
      expect(e2.message).toBe("MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=1024 is below 2048")
    }),
  )
})
