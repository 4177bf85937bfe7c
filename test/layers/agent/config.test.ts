/**
 * `AgentConfig` swapped with a layer: the agent's setup, its workload identity (from a fake CA)
 * and its gRPC bootstrap built from `AgentConfig.layer(overrides)` — no process.env read, no
 * file written outside a temporary directory.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import * as GrpcBootstrap from "../../../src/layers/agent/bootstrap/layer.js"
import * as Identity from "../../../src/layers/agent/identity/layer.js"
import * as Setup from "../../../src/layers/agent/setup.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { WorkloadIdentity } from "../../../src/services/agent/identity/identity.js"
import { AgentConfig } from "../../../src/services/config/agent-config.js"
import { makeFakeCa } from "./identity/fake-ca.js"

const dir = await mkdtemp(join(tmpdir(), "mesh-agent-config-"))
const rootFile = join(dir, "root-cert.pem")
const tokenFile = join(dir, "token")
await writeFile(rootFile, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
await writeFile(tokenFile, "header.payload.signature\n")

/** A proxyless agent of ns1/sa1 in example.org, talking plaintext to a local discovery server. */
const proxylessValues = {
  DISABLE_PROXY: true,
  PROXY_CONFIG: "discoveryAddress: 127.0.0.1:15010",
  TRUST_DOMAIN: "example.org",
  CA_ROOT_CA: rootFile,
  ECC_SIGNATURE_ALGORITHM: "ECDSA",
  OUTPUT_CERTS: join(dir, "certs"),
  GRPC_XDS_BOOTSTRAP: join(dir, "bootstrap.json"),
  meshConfig: join(dir, "no-mesh-config"),
  namespace: "ns1",
  serviceAccount: "sa1",
  tokenPath: tokenFile,
  secretTtl: "1h",
} as const
const proxyless = AgentConfig.layer(proxylessValues)

const fakeCa = Layer.unwrapEffect(Effect.map(makeFakeCa(Duration.hours(1)), (ca) => ca.layer))

describe("AgentConfig.layer", () => {
  it.layer(
    Layer.mergeAll(Identity.layerWorkload.pipe(Layer.provide(fakeCa)), GrpcBootstrap.layer).pipe(
      Layer.provideMerge(Setup.layer),
      Layer.provide(proxyless),
      Layer.provide(metricsLayer("test")),
    ),
  )("drives the agent's subsystems", (it) => {
    it.effect("settles identity, key, lifetime and plaintext xDS from the config", () =>
      Effect.gen(function* () {
        const setup = yield* Setup.AgentSetup
        expect(setup.identity).toBe("spiffe://example.org/ns/ns1/sa/sa1")
        expect(setup.keySpec).toEqual({ kind: "EC", curve: "P-256" })
        expect(setup.ttlSeconds).toBe(3600)
        expect(setup.caAddress).toBe("127.0.0.1:15010")
        expect(setup.xdsTls).toBeUndefined()
        expect(setup.writeGrpcBootstrap).toBe(true)
      }),
    )

    it.effect("issues the workload certificate for that identity", () =>
      Effect.gen(function* () {
        const cert = yield* (yield* WorkloadIdentity).current
        expect(cert.identity).toBe("spiffe://example.org/ns/ns1/sa/sa1")
        const written = yield* Effect.promise(() => readFile(join(dir, "certs", "cert-chain.pem"), "utf8"))
        expect(written).toContain("BEGIN CERTIFICATE")
      }),
    )

    it.effect("writes the gRPC bootstrap toward the xDS proxy's socket", () =>
      Effect.gen(function* () {
        expect((yield* GrpcBootstrap.GrpcBootstrapWritten).written).toBe(true)
        const bootstrap = JSON.parse(yield* Effect.promise(() => readFile(join(dir, "bootstrap.json"), "utf8")))
        expect(bootstrap.xds_servers[0].server_uri).toMatch(/^unix:.*etc\/mesh\/proxy\/XDS$/)
        expect(bootstrap.node.id).toContain("ns1")
      }),
    )
  })

  it.effect("fails the setup on a bad MESH_ORCH_APP_PROBERS, naming it", () =>
    Effect.gen(function* () {
      const error = yield* Setup.layer.pipe(
        Layer.provide(AgentConfig.layer({ ...proxylessValues, MESH_ORCH_APP_PROBERS: "{" })),
        Layer.build,
        Effect.scoped,
        Effect.flip,
      )
      expect(error.message).toMatch(/^MESH_ORCH_APP_PROBERS: /)
    }),
  )
})
