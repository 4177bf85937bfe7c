/**
 * The ADS server of `mesh-discovery` from `XdsConfig`: `layerDiscovery` (ads-server.ts) following the
 * PushContext inputs (their cross-resource warnings logged as they appear), plaintext streams
 * through the plaintext xDS guard; a bind failure names `--grpcAddr`.
 */
import { Effect, Layer, Option } from "effect"
import { listenError } from "../../services/net/listen-error.js"
import { ProxyConnections } from "../../services/registry/autoregistration/proxy-connections.js"
import { XdsConfig, xdsServerConfigOf } from "../../services/xds/config.js"
import { XdsGuards } from "../../services/xds/protocol/xds-guards.js"
import { XdsServer } from "../../services/xds/server.js"
import { layerDiscovery as xdsDiscoveryLayer } from "./ads-server.js"
import { logConfigWarnings } from "./config-warnings.js"
import { pushContextInputs } from "./push-inputs.js"

export const layer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* XdsConfig
    const guards = yield* XdsGuards
    // Optional: embedders and tests build the server without anyone following connections.
    const connections = yield* Effect.serviceOption(ProxyConnections)
    const server = xdsServerConfigOf(config)
    const inputs = pushContextInputs.pipe(logConfigWarnings(server.pushContext.domainSuffix))
    return xdsDiscoveryLayer(server, inputs, {
      plaintextGuard: guards.plaintext,
      ...(Option.isSome(connections) ? { proxyConnections: connections.value } : {}),
    }).pipe(
      Layer.mapError((error) =>
        error.bindFailed === true ? listenError("--grpcAddr", config.grpcAddr, error.cause) : error,
      ),
    )
  }),
)

/** Tells the user where to point a proxyless gRPC client once the ADS server is bound. */
export const layerAnnounce = Layer.effectDiscard(
  Effect.gen(function* () {
    const xds = yield* XdsServer
    const host = (yield* XdsConfig).grpcAddr.host ?? "127.0.0.1"
    yield* Effect.logInfo(
      `mesh-discovery is serving: point a proxyless gRPC client at xds:///<host>:<port> with GRPC_XDS_BOOTSTRAP naming ${host}:${xds.port} (insecure channel creds, node metadata GENERATOR=grpc)`,
    )
  }),
)
