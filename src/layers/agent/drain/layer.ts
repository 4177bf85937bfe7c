/**
 * The drain rule of spec 001 §1 rule 1 at shutdown: wait `MINIMUM_DRAIN_DURATION`, then (with
 * `EXIT_ON_ZERO_ACTIVE_CONNECTIONS`) until the xDS proxy's streams are gone or the termination
 * drain ends — proxyless, nothing but those streams holds connections.
 */
import { Duration, Effect, Layer } from "effect"
import { drain } from "../../../services/agent/status/drain.js"
import { XdsProxy } from "../../../services/agent/xds-proxy/xds-proxy.js"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { parseEnvValue } from "../../../services/config/env.js"
import { AgentSetup } from "../setup.js"

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    const proxy = yield* XdsProxy
    const terminationDrain = parseEnvValue("D", setup.proxyConfig.terminationDrainDuration)
    const settings = {
      minimumDrain: config.MINIMUM_DRAIN_DURATION,
      exitOnZeroActiveConnections: config.EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
      terminationDrain:
        terminationDrain._tag === "Right"
          ? Duration.min(terminationDrain.right, config.MINIMUM_DRAIN_DURATION)
          : config.MINIMUM_DRAIN_DURATION,
    }
    yield* Effect.addFinalizer(() => drain(settings, proxy.activeStreams))
  }),
)
