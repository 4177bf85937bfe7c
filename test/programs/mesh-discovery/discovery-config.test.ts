/**
 * mesh-discovery reads its environment once per start (issue 38): the whole table is parsed at
 * start (`envTableConfig(discoveryEnv)`), and every config Tag of the binary is built from that
 * parse. Reads are counted through the ConfigProvider the start runs under.
 */
import { Options } from "@effect/cli"
import * as CliConfig from "@effect/cli/CliConfig"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Option } from "effect"
import { discoveryConfigLayer, discoverySettingsLayer } from "../../../src/programs/mesh-discovery/discovery-config.js"
import { type DiscoveryArgs, discoveryFlags } from "../../../src/programs/mesh-discovery/discovery-flags.js"
import { CaConfig } from "../../../src/services/ca/config.js"
import {
  ControllersConfig,
  MonitoringConfig,
  RegistryInputsConfig,
  WebhookConfig,
} from "../../../src/services/config/discovery-config.js"
import { discoveryEnv } from "../../../src/services/config/discovery-env.js"
import { envTableConfig } from "../../../src/services/config/env.js"
import { GatewayApiSettings } from "../../../src/services/gateway-api/push-view.js"
import { InjectionWebhookConfig } from "../../../src/services/injection/webhook-config.js"
import { JwksConfig } from "../../../src/services/jwks/config.js"
import { MemoryConfig } from "../../../src/services/memory/memory-config.js"
import { layerMemory as fixedMeshConfig } from "../../../src/services/mesh-config/watcher.js"
import { LocalCluster } from "../../../src/services/orchestrator/local-cluster.js"
import { XdsConfig } from "../../../src/services/xds/config.js"

/** A ConfigProvider over `vars` that counts how often each variable is looked up. */
const countingProvider = (vars: Record<string, string>) => {
  const reads = new Map<string, number>()
  const inner = ConfigProvider.fromMap(new Map(Object.entries(vars))).flattened
  const provider = ConfigProvider.fromFlat(
    ConfigProvider.makeFlat({
      load: (path, config, split) => {
        const name = path.join(".")
        reads.set(name, (reads.get(name) ?? 0) + 1)
        return inner.load(path, config, split)
      },
      enumerateChildren: inner.enumerateChildren,
      patch: inner.patch,
    }),
  )
  return { provider, reads }
}

/** The flags of `mesh-discovery discovery` as given on a command line (their env fallbacks empty). */
const parseFlags = (argv: ReadonlyArray<string>) =>
  Options.processCommandLine(Options.all(discoveryFlags), argv, CliConfig.defaultConfig).pipe(
    Effect.map(([, , args]) => args as DiscoveryArgs),
    Effect.provide(NodeContext.layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map())),
  )

describe("mesh-discovery settings", () => {
  it.effect("each variable of the table is read once per start and reaches its Tags", () =>
    Effect.gen(function* () {
      const args = yield* parseFlags(["--namespace", "meshns", "--domain", "example.local"])
      expect(args.clusterID).toBe("Orchestrator")
      const { provider, reads } = countingProvider({
        PILOT_DEBOUNCE_AFTER: "250ms",
        MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "3072",
        ENABLE_DEBUG_ON_HTTP: "false",
        PILOT_JWT_ENABLE_REMOTE_JWKS: "true",
        MESH_MEMORY_LIMIT: "1Gi",
        REVISION: "canary",
        CLUSTER_ID: "from-env",
        ENABLE_LEADER_ELECTION: "false",
        PILOT_GATEWAY_API_CONTROLLER_NAME: "example.org/gateway",
      })
      const tags = yield* Effect.gen(function* () {
        // What the start does: the whole table once, then the Tags from it.
        const env = yield* envTableConfig(discoveryEnv)
        // XdsConfig and CaConfig also read the mesh config and the LocalCluster (none here).
        const settings = discoveryConfigLayer(args, env).pipe(
          Layer.provide(Layer.merge(fixedMeshConfig(), Layer.succeed(LocalCluster, Option.none()))),
          Layer.merge(discoverySettingsLayer(args, env)),
        )
        return yield* Effect.all({
          xds: XdsConfig,
          ca: CaConfig,
          monitoring: MonitoringConfig,
          webhook: WebhookConfig,
          injection: InjectionWebhookConfig,
          jwks: JwksConfig,
          memory: MemoryConfig,
          inputs: RegistryInputsConfig,
          controllers: ControllersConfig,
          gatewayApi: GatewayApiSettings,
        }).pipe(Effect.provide(settings))
      }).pipe(Effect.withConfigProvider(provider), Effect.scoped)

      const readTwice = [...reads].filter(([, n]) => n > 1).map(([name, n]) => `${name}: read ${n} times`)
      expect(readTwice).toEqual([])
      expect([...reads.keys()].sort()).toEqual(Object.keys(discoveryEnv).sort())
      // The values set arrive, and so do the flags.
      expect(Duration.toMillis(tags.xds.PILOT_DEBOUNCE_AFTER)).toBe(250)
      expect(tags.xds.domain).toBe("example.local")
      expect(tags.ca.MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE).toBe(3072)
      expect(tags.ca.namespace).toBe("meshns")
      expect(tags.monitoring.ENABLE_DEBUG_ON_HTTP).toBe(false)
      expect(tags.jwks.PILOT_JWT_ENABLE_REMOTE_JWKS).toBe("true")
      expect(tags.memory.MESH_MEMORY_LIMIT).toBe("1Gi")
      expect(tags.injection.REVISION).toBe("canary")
      expect(tags.injection.namespace).toBe("meshns")
      expect(tags.controllers.REVISION).toBe("canary")
      expect(tags.controllers.ENABLE_LEADER_ELECTION).toBe(false)
      expect(tags.controllers.namespace).toBe("meshns")
      expect(tags.controllers.domain).toBe("example.local")
      expect(tags.gatewayApi.controllerName).toBe("example.org/gateway")
      // --clusterID wins over CLUSTER_ID (the flag's own fallback reads the variable, not the table).
      expect(tags.inputs.CLUSTER_ID).toBe("Orchestrator")
    }),
  )
})
