/**
 * The xDS proxy of `mesh-agent proxy`: the local socket the proxy (or the gRPC application)
 * talks to, relayed to the discovery server — over TLS unless plaintext is configured, with the
 * workload's token and certificate, and the upstream keepalive of `GRPC_KEEPALIVE_*`.
 *
 * Optional collaborators, used when the composition provides them (they are looked up, not
 * required): the DNS proxy's `NameTableSink` (NDS is then subscribed to and consumed) and the
 * `WasmFetcher` (ECDS remote modules are then rewritten to local files, unless
 * `MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION` is false).
 */
import { readFile } from "node:fs/promises"
import { Effect, Layer, Option } from "effect"
import { NameTableSink } from "../../../services/agent/dns/name-table-sink.js"
import { WorkloadIdentity } from "../../../services/agent/identity/identity.js"
import { WasmFetcher } from "../../../services/agent/wasm/contract.js"
import { XdsProxyConfig } from "../../../services/agent/xds-proxy/config.js"
import { withScope } from "../../../services/logging/logging.js"
import { AgentSetup } from "../setup.js"
import { layer as xdsProxyLayer } from "./xds-proxy.js"

const readToken = (path: string) =>
  Effect.promise(() =>
    readFile(path, "utf8").then(
      (t) => t.trim() || undefined,
      () => undefined,
    ),
  )

export const layer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const setup = yield* AgentSetup
    const workload = yield* WorkloadIdentity
    const env = yield* XdsProxyConfig.config
    const nameTableSink = yield* Effect.serviceOption(NameTableSink)
    const wasmFetcher = yield* Effect.serviceOption(WasmFetcher)
    const convertWasm = env.MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION && Option.isSome(wasmFetcher)
    if (env.MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION && Option.isNone(wasmFetcher))
      yield* Effect.logWarning(
        "MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION is on but no Wasm fetcher runs: remote Wasm modules reach the proxy unconverted",
      ).pipe(withScope("wasm"))
    return xdsProxyLayer({
      socketPath: setup.xdsSocket,
      upstream: setup.discoveryAddress,
      ...(setup.xdsTls ? { tls: setup.xdsTls } : {}),
      token: readToken(setup.tokenPath),
      clientCert: Effect.map(workload.current, (c) => ({ certPem: c.certChainPem, keyPem: c.keyPem })),
      meshRoots: Effect.map(workload.current, (c) => c.rootCertPem),
      keepalive: { interval: env.GRPC_KEEPALIVE_INTERVAL, timeout: env.GRPC_KEEPALIVE_TIMEOUT },
      ...(Option.isSome(nameTableSink) ? { nameTableSink: nameTableSink.value } : {}),
      ...(convertWasm ? { wasmFetcher: Option.getOrThrow(wasmFetcher) } : {}),
    })
  }),
)
