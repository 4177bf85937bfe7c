/**
 * The xDS proxy of `mesh-agent proxy`: the local socket the proxy (or the gRPC application)
 * talks to, relayed to the discovery server — over TLS unless plaintext is configured, with the
 * workload's token and certificate.
 */
import { readFile } from "node:fs/promises"
import { Effect, Layer } from "effect"
import { WorkloadIdentity } from "../../../services/agent/identity/identity.js"
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
    return xdsProxyLayer({
      socketPath: setup.xdsSocket,
      upstream: setup.discoveryAddress,
      ...(setup.xdsTls ? { tls: setup.xdsTls } : {}),
      token: readToken(setup.tokenPath),
      clientCert: Effect.map(workload.current, (c) => ({ certPem: c.certChainPem, keyPem: c.keyPem })),
    })
  }),
)
