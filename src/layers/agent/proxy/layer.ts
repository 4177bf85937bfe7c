/**
 * Sidecar mode: the proxy process started on the bootstrap `AgentSetup` wrote, supervised
 * (restarts with backoff, drain on shutdown). `AgentProxy` is the proxy, if any, and how long the
 * agent lives: until interrupted when proxyless; as long as the proxy in sidecar mode, whose
 * non-zero exit code fails the agent.
 */
import { Context, Deferred, Duration, Effect, Either, Layer } from "effect"
import { type ProxyProcessShape, proxyArgs } from "../../../services/agent/proxy/proxy.js"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { parseEnvValue } from "../../../services/config/env.js"
import { AgentSetup, ProxyAgentError } from "../setup.js"
import { superviseProxy } from "./supervisor.js"

export interface AgentProxyShape {
  /** The supervised proxy; undefined when proxyless. */
  readonly process: ProxyProcessShape | undefined
  /** Never ends when proxyless; ends with the proxy in sidecar mode (failing on a non-zero exit). */
  readonly lifetime: Effect.Effect<void, ProxyAgentError>
}

export class AgentProxy extends Context.Tag("mesh/agent/AgentProxy")<AgentProxy, AgentProxyShape>() {}

/** `terminationDrainDuration` of the ProxyConfig, or 5s when it does not parse. */
export const terminationDrain = (text: string): Duration.Duration =>
  Either.getOrElse(parseEnvValue("D", text), () => Duration.seconds(5))

export const layer = Layer.scoped(
  AgentProxy,
  Effect.gen(function* () {
    const config = yield* AgentConfig
    const setup = yield* AgentSetup
    if (setup.proxyless) return { process: undefined, lifetime: Effect.never }
    const pc = setup.proxyConfig
    const drainTime = parseEnvValue("D", pc.drainDuration)
    const supervisor = yield* superviseProxy({
      binaryPath: pc.binaryPath,
      args: proxyArgs({
        configFile: setup.proxyBootstrapFile,
        drainSeconds: Either.isRight(drainTime) ? Math.round(Duration.toSeconds(drainTime.right)) : 45,
        logLevel: config.proxyLogLevel,
        componentLogLevel: config.proxyComponentLogLevel,
        concurrency: config.concurrency || pc.concurrency,
      }),
      adminPort: pc.proxyAdminPort,
      maxRestarts: 10,
      restartBackoff: { base: Duration.millis(200), max: Duration.seconds(10) },
      drain: {
        minimumDrain: config.MINIMUM_DRAIN_DURATION,
        exitOnZeroActiveConnections: config.EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
        terminationDrain: terminationDrain(pc.terminationDrainDuration),
      },
      stopTimeout: Duration.seconds(10),
    })
    const process: ProxyProcessShape = {
      exited: supervisor.exited,
      ready: Effect.tryPromise(() => fetch(`http://127.0.0.1:${pc.proxyAdminPort}/ready`)).pipe(
        Effect.map((r) => r.status === 200),
        Effect.orElseSucceed(() => false),
      ),
    }
    const lifetime = Effect.flatMap(Deferred.await(supervisor.exited), (code) =>
      code !== 0 ? new ProxyAgentError({ message: `the proxy exited with code ${code}` }) : Effect.void,
    )
    return { process, lifetime }
  }),
)
