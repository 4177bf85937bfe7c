/** The discovery CA wiring: env table values → CA layers (self-signed or disabled server). */
import { join } from "node:path"
import { type ConnectionOptions, connect } from "node:tls"
import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { ConfigProvider, Context, Effect, Either, Layer } from "effect"
import { metricsLayer } from "../../../src/layers/metrics.js"
import {
  caLayer,
  caServerTls,
  serverDnsNames,
  servingCertSourceFromEnv,
} from "../../../src/programs/mesh-discovery/ca-wiring.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { trustBundlePem } from "../../../src/services/ca/material.js"
import { discoveryEnv } from "../../../src/services/config/discovery-env.js"
import { envTableConfig } from "../../../src/services/config/env.js"
import { freePort } from "../../support/ports.js"
import { createCertificateCall, makeCsr, servingCertificate, tempDir } from "./helpers.js"

const loadEnv = (vars: Record<string, string>) =>
  Effect.withConfigProvider(envTableConfig(discoveryEnv), ConfigProvider.fromMap(new Map(Object.entries(vars))))

describe("discovery CA wiring", () => {
  it("names the serving certificate meshd.<ns>.svc, the revision and MESHD_CUSTOM_HOST", () => {
    expect(serverDnsNames({ MESHD_CUSTOM_HOST: "a.example, b.example,", REVISION: "" }, "mesh-system")).toEqual([
      "meshd.mesh-system.svc",
      "a.example",
      "b.example",
    ])
    expect(serverDnsNames({ MESHD_CUSTOM_HOST: "", REVISION: "canary" }, "ns")).toEqual([
      "meshd.ns.svc",
      "meshd-canary.ns.svc",
    ])
  })

  it.scopedLive("starts the CA and its TLS server from the environment on the secure gRPC address", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("wiring"))
      const port = yield* Effect.promise(() => freePort())
      const env = yield* loadEnv({ ROOT_CA_DIR: join(dir, "cacerts"), MESHD_CUSTOM_HOST: "ca.local" })
      const layer = caLayer(env, { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") })
      const context = yield* Layer.build(Layer.provide(layer, metricsLayer("test")))
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
        const env = yield* loadEnv({ ROOT_CA_DIR: join(dir, "cacerts"), ...extra })
        const layer = caLayer(env, { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") })
        const context = yield* Layer.build(Layer.provide(layer, metricsLayer("test")))
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
      const env = yield* loadEnv({ ROOT_CA_DIR: join(dir, "cacerts"), COMPLIANCE_POLICY: "fips-140-2" })
      const layer = caLayer(env, { secureGrpcAddr: { host: "127.0.0.1", port }, stateDir: join(dir, "state") })
      yield* Layer.build(Layer.provide(layer, metricsLayer("test")))
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

  it("maps --tls-cipher-suites to OpenSSL names and refuses unknown suites and policies", () => {
    expect(caServerTls("", [])).toEqual(Either.right({}))
    expect(caServerTls("", ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"])).toEqual(
      Either.right({ ciphers: "ECDHE-RSA-AES128-GCM-SHA256" }),
    )
    expect(Either.isLeft(caServerTls("", ["TLS_NOPE"]))).toBe(true)
    expect(Either.isLeft(caServerTls("pqc-maybe", []))).toBe(true)
  })

  it.scopedLive("fails start-up on a malformed JWT_RULE and on a small root key size", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("wiring-bad"))
      const options = { secureGrpcAddr: { host: "127.0.0.1", port: 0 }, stateDir: join(dir, "state") }
      const badRule = yield* loadEnv({ ROOT_CA_DIR: join(dir, "none"), JWT_RULE: "{" })
      const e1 = yield* Effect.flip(Layer.build(Layer.provide(caLayer(badRule, options), metricsLayer("test"))))
      expect(e1.message).toMatch(/JWT_RULE is not JSON/)
      const smallKey = yield* loadEnv({ ROOT_CA_DIR: join(dir, "none"), MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "1024" })
      const e2 = yield* Effect.flip(Layer.build(Layer.provide(caLayer(smallKey, options), metricsLayer("test"))))
      expect(e2.message).toBe("MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=1024 is below 2048")
    }),
  )

  it.effect("picks the serving certificate per --tlsCertFile/--tlsKeyFile and PILOT_CERT_PROVIDER", () =>
    Effect.gen(function* () {
      const env = (provider: string) => ({ PILOT_CERT_PROVIDER: provider, MESHD_CUSTOM_HOST: "", REVISION: "" })
      // Files win over the provider, as the spec says.
      const files = servingCertSourceFromEnv(env("none"), { tlsCertFile: "/c.crt", tlsKeyFile: "/c.key" })
      expect(Either.isRight(files) && files.right !== undefined).toBe(true)
      expect(Either.isRight(servingCertSourceFromEnv(env("meshd"), {}))).toBe(true)
      expect(Either.isRight(servingCertSourceFromEnv(env("custom"), {}))).toBe(true)
      expect(servingCertSourceFromEnv(env("none"), {})).toEqual(Either.right(undefined))
      expect(servingCertSourceFromEnv(env("k8s.io/signer"), {})).toEqual(
        Either.left(
          "PILOT_CERT_PROVIDER=k8s.io/signer needs the orchestrator's certificate signer, which is not supported without an orchestrator: use meshd, or --tlsCertFile/--tlsKeyFile",
        ),
      )
      expect(servingCertSourceFromEnv(env("meshd"), { tlsKeyFile: "/k" })).toEqual(
        Either.left("--tlsKeyFile=/k is given without --tlsCertFile"),
      )
      expect(servingCertSourceFromEnv(env("meshd"), { caCertFile: "/ca" })).toEqual(
        Either.left("--caCertFile=/ca is given without --tlsCertFile/--tlsKeyFile"),
      )
    }),
  )
})
