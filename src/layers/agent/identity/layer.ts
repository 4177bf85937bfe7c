/**
 * The workload identity of `mesh-agent proxy`: certificates from the CA at `CA_ADDR` (verified
 * against the CA roots and `MESHD_SAN`, `MESH_META_CERT_SIGNER` passed on), renewed and written
 * to the certificate directory; or, with `FILE_MOUNTED_CERTS`, read and watched where mounted.
 */
import { resolve } from "node:path"
import { Effect, Layer } from "effect"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { AgentSetup } from "../setup.js"
import { layer as caClientLayer, hostOf } from "./ca-client.js"
import { layer as workloadIdentityLayer } from "./identity.js"
import { DEFAULT_MOUNTED_WATCH } from "./mounted.js"

/** The CA client toward `CA_ADDR` (else the discovery address). */
export const caClientFromConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    return caClientLayer({
      address: setup.caAddress,
      rootCaPem: setup.caRootPem,
      serverName: config.MESHD_SAN || hostOf(setup.caAddress),
      ...(config.MESH_META_CERT_SIGNER ? { certSigner: config.MESH_META_CERT_SIGNER } : {}),
    })
  }),
)

/** The workload identity from any `CaClient` (tests give a fake one). */
export const layerWorkload = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    return workloadIdentityLayer({
      identity: setup.identity,
      keySpec: setup.keySpec,
      ttlSeconds: setup.ttlSeconds,
      tokenPath: setup.tokenPath,
      ...(setup.certDir !== "" ? { outputDir: resolve(setup.certDir) } : {}),
      ...(config.FILE_MOUNTED_CERTS
        ? {
            mountedDir: setup.mountedDir,
            mountedWatch: { ...DEFAULT_MOUNTED_WATCH, debounce: config.FILE_DEBOUNCE_DURATION },
          }
        : {}),
    })
  }),
)

export const layer = layerWorkload.pipe(Layer.provide(caClientFromConfig))
