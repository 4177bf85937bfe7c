/**
 * `CaConfig` swapped with a layer: the certificate authority, its serving certificate source and
 * the xDS guards built from `CaConfig.layer(overrides)` — no environment read.
 */
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as Authority from "../../../src/layers/ca/authority.js"
import {
  layerAuthenticators as caAuthenticatorsLayer,
  layerXdsGuards as xdsGuardsLayer,
} from "../../../src/layers/ca/callers.js"
import { servingCertSourceFromConfig } from "../../../src/layers/ca/serving-cert.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { CaAuthenticators } from "../../../src/services/ca/callers.js"
import { CaConfig } from "../../../src/services/ca/config.js"
import { XdsGuards } from "../../../src/services/xds/protocol/xds-guards.js"
import { tempDir } from "./helpers.js"

const dir = await tempDir("config")

describe("CaConfig.layer", () => {
  it.layer(
    Layer.mergeAll(Authority.layer, xdsGuardsLayer.pipe(Layer.provideMerge(caAuthenticatorsLayer))).pipe(
      Layer.provide(
        CaConfig.layer({
          trustDomain: "example.org",
          ROOT_CA_DIR: join(dir, "none"),
          stateDir: join(dir, "state"),
        }),
      ),
      Layer.provide(metricsLayer("test")),
    ),
  )("drives the CA and the callers", (it) => {
    it.effect("issues a self-signed root in the configured trust domain", () =>
      Effect.gen(function* () {
        const material = yield* (yield* CertificateAuthority).material
        expect(material.source).toBe("self-signed")
        expect(material.root.subject).toBe("O=example.org")
      }),
    )
    it.effect("builds the client-certificate authenticator and both xDS guards", () =>
      Effect.gen(function* () {
        const { authenticators, nodeAuthorizer } = yield* CaAuthenticators
        expect(authenticators.length).toBe(1)
        expect(nodeAuthorizer).toBeUndefined()
        const guards = yield* XdsGuards
        expect(guards.secure).not.toBe(guards.plaintext)
      }),
    )
  })

  it.effect("refuses a small root key before generating anything", () =>
    Effect.gen(function* () {
      const error = yield* Authority.layer.pipe(
        Layer.provide(CaConfig.layer({ MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: 1024 })),
        Layer.provide(metricsLayer("test")),
        Layer.build,
        Effect.scoped,
        Effect.flip,
      )
      expect(error.message).toBe("MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE=1024 is below 2048")
    }),
  )

  it("picks the serving certificate per --tlsCertFile/--tlsKeyFile and PILOT_CERT_PROVIDER", () => {
    const config = (provider: string, files: Partial<Record<"tlsCertFile" | "tlsKeyFile" | "caCertFile", string>>) => ({
      ...CaConfig.defaults(),
      PILOT_CERT_PROVIDER: provider,
      ...files,
    })
    // Files win over the provider, as the spec says.
    const files = servingCertSourceFromConfig(config("none", { tlsCertFile: "/c.crt", tlsKeyFile: "/c.key" }))
    expect(Either.isRight(files) && files.right !== undefined).toBe(true)
    expect(Either.isRight(servingCertSourceFromConfig(config("meshd", {})))).toBe(true)
    expect(Either.isRight(servingCertSourceFromConfig(config("custom", {})))).toBe(true)
    expect(servingCertSourceFromConfig(config("none", {}))).toEqual(Either.right(undefined))
    expect(servingCertSourceFromConfig(config("k8s.io/signer", {}))).toEqual(
      Either.left(
        "PILOT_CERT_PROVIDER=k8s.io/signer needs the orchestrator's certificate signer, which is not supported without an orchestrator: use meshd, or --tlsCertFile/--tlsKeyFile",
      ),
    )
    expect(servingCertSourceFromConfig(config("meshd", { tlsKeyFile: "/k" }))).toEqual(
      Either.left("--tlsKeyFile=/k is given without --tlsCertFile"),
    )
    expect(servingCertSourceFromConfig(config("meshd", { caCertFile: "/ca" }))).toEqual(
      Either.left("--caCertFile=/ca is given without --tlsCertFile/--tlsKeyFile"),
    )
  })
})
