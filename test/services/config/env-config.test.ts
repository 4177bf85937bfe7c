/**
 * Config services derived from env tables (`EnvConfig`): `layerFromEnv` reads only the slice,
 * with the table's parsing and error texts; `layerFromValues` takes it from a parsed table and
 * `layer(overrides)` reads nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigError, ConfigProvider, Duration, Effect, Layer } from "effect"
import { InstallCniConfig } from "../../../src/services/config/cni-config.js"
import { MonitoringConfig, RegistryInputsConfig, WebhookConfig } from "../../../src/services/config/discovery-config.js"
import { discoveryEnv } from "../../../src/services/config/discovery-env.js"
import { describeConfigError, envTableConfig } from "../../../src/services/config/env.js"
import { MeshctlEnv } from "../../../src/services/config/meshctl-env.js"
import { colorAllowed } from "../../../src/services/config/terminal-env.js"
import { XdsConfig, xdsServerConfigOf } from "../../../src/services/xds/config.js"

const withEnv = (vars: Record<string, string>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(vars))))

describe("EnvConfig", () => {
  it.effect("layerFromEnv reads the slice and merges the given fields over the defaults", () =>
    Effect.gen(function* () {
      const config = yield* XdsConfig.pipe(
        Effect.provide(
          XdsConfig.layerFromEnv({ domain: "example.local" }).pipe(
            Layer.provide(withEnv({ PILOT_DEBOUNCE_AFTER: "250ms", MESH_DELTA_XDS: "false" })),
          ),
        ),
      )
      expect(Duration.toMillis(config.PILOT_DEBOUNCE_AFTER)).toBe(250)
      expect(config.MESH_DELTA_XDS).toBe(false)
      expect(config.domain).toBe("example.local")
      expect(config.grpcAddr).toEqual({ host: undefined, port: 15010 })
      // Only the slice is read: a variable of another subsystem is not in it.
      expect("ENABLE_CA_SERVER" in config).toBe(false)
    }),
  )

  it.effect("layerFromValues picks the slice from a parsed table and reads no environment", () =>
    Effect.gen(function* () {
      const table = yield* envTableConfig(discoveryEnv).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["REVISION", "canary"]]))),
      )
      const config = yield* RegistryInputsConfig.pipe(
        Effect.provide(
          RegistryInputsConfig.layerFromValues({ ...table, CLUSTER_ID: "flag-cluster" }).pipe(
            // An environment that would fail the slice: layerFromValues must not look at it.
            Layer.provide(withEnv({ REVISION: "other", PILOT_REMOTE_CLUSTER_TIMEOUT: "never" })),
          ),
        ),
      )
      expect(config.REVISION).toBe("canary")
      expect(config.CLUSTER_ID).toBe("flag-cluster")
      expect(Duration.toSeconds(config.PILOT_REMOTE_CLUSTER_TIMEOUT)).toBe(30)
      expect(Object.keys(config).sort()).toEqual([...RegistryInputsConfig.names].sort())
    }),
  )

  it.effect("layerFromValues takes fields known only at start-up from an effect, still reading no environment", () =>
    Effect.gen(function* () {
      const table = yield* envTableConfig(discoveryEnv).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PILOT_DEBOUNCE_AFTER", "250ms"]]))),
      )
      const config = yield* XdsConfig.pipe(
        Effect.provide(
          XdsConfig.layerFromValues(table, Effect.succeed({ trustDomain: "example.org" })).pipe(
            Layer.provide(withEnv({ PILOT_DEBOUNCE_AFTER: "soon" })),
          ),
        ),
      )
      expect(Duration.toMillis(config.PILOT_DEBOUNCE_AFTER)).toBe(250)
      expect(config.trustDomain).toBe("example.org")
      expect(config.grpcAddr).toEqual({ host: undefined, port: 15010 })
    }),
  )

  it.effect("install-cni's Tag is its whole table: a bad variable anywhere in it fails the read", () =>
    Effect.gen(function* () {
      const error = yield* InstallCniConfig.pipe(
        Effect.provide(
          InstallCniConfig.layerFromEnv().pipe(
            Layer.provide(withEnv({ CNI_READINESS_PORT: "http", REPAIR_ENABLED: "maybe" })),
          ),
        ),
        Effect.flip,
      )
      expect(describeConfigError(error as ConfigError.ConfigError)).toEqual([
        'environment variable REPAIR_ENABLED: expected a boolean (true or false), got "maybe"',
        'environment variable CNI_READINESS_PORT: expected an integer, got "http"',
      ])
    }),
  )

  it.effect("meshctl's variables arrive through MeshctlEnv, defaults when unset", () =>
    Effect.gen(function* () {
      const config = yield* MeshctlEnv.pipe(
        Effect.provide(MeshctlEnv.layerFromEnv().pipe(Layer.provide(withEnv({ NO_COLOR: "1", KUBECONFIG: "/k" })))),
      )
      expect(config).toEqual({
        NO_COLOR: "1",
        TERM: "",
        KUBECONFIG: "/k",
        MESHCTL_PROXY_ADMIN_PORT: 15000,
        ENABLE_NATIVE_SIDECARS: "",
        COMPLIANCE_POLICY: "",
      })
      expect(colorAllowed(config, true)).toBe(false)
      expect(colorAllowed({ NO_COLOR: "", TERM: "xterm" }, true)).toBe(true)
      expect(colorAllowed({ NO_COLOR: "", TERM: "dumb" }, true)).toBe(false)
      expect(colorAllowed({ NO_COLOR: "", TERM: "xterm" }, false)).toBe(false)
    }),
  )

  it.effect("layerFromEnv takes fields known only at start-up from an effect", () =>
    Effect.gen(function* () {
      const config = yield* WebhookConfig.pipe(
        Effect.provide(
          WebhookConfig.layerFromEnv(Effect.succeed({ httpsAddr: { host: "127.0.0.1", port: 0 } })).pipe(
            Layer.provide(withEnv({ INJECT_ENABLED: "0" })),
          ),
        ),
      )
      expect(config).toEqual({ INJECT_ENABLED: false, httpsAddr: { host: "127.0.0.1", port: 0 } })
    }),
  )

  it.effect("a bad variable fails with the table's text, every bad one reported", () =>
    Effect.gen(function* () {
      const error = yield* XdsConfig.pipe(
        Effect.provide(
          XdsConfig.layerFromEnv().pipe(
            Layer.provide(withEnv({ PILOT_DEBOUNCE_AFTER: "soon", PILOT_PUSH_THROTTLE: "many" })),
          ),
        ),
        Effect.flip,
      )
      expect(ConfigError.isConfigError(error)).toBe(true)
      expect(describeConfigError(error as ConfigError.ConfigError)).toEqual([
        'environment variable PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms, 30s or 1h0m0s, got "soon"',
        'environment variable PILOT_PUSH_THROTTLE: expected an integer, got "many"',
      ])
    }),
  )

  it.effect("layer(overrides) starts from the table's defaults and reads no environment", () =>
    Effect.gen(function* () {
      const config = yield* XdsConfig.pipe(
        Effect.provide(XdsConfig.layer({ PILOT_XDS_CACHE_SIZE: 10, trustDomain: "example.org" })),
        // An environment that would fail if it were read.
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["PILOT_DEBOUNCE_AFTER", "soon"]]))),
      )
      const server = xdsServerConfigOf(config)
      expect(server.cache.maxSize).toBe(10)
      expect(server.pushContext.trustDomain).toBe("example.org")
      expect(Duration.toMillis(server.debounce.debounceAfter)).toBe(100)
      expect(server.maxRecvMsgSize).toBe(4194304)
      expect(server.port).toBe(15010)
    }),
  )

  it("defaults the monitoring listeners to the spec's ports and switches", () => {
    expect(MonitoringConfig.defaults()).toEqual({
      ENABLE_DEBUG_ON_HTTP: true,
      UNSAFE_ENABLE_ADMIN_ENDPOINTS: false,
      METRICS_LOCALHOST_ACCESS_ONLY: false,
      httpAddr: { host: undefined, port: 8080 },
      monitoringAddr: { host: undefined, port: 15014 },
      introspectionAddr: { host: "localhost", port: 9876 },
      // --profile: /debug/pprof/ is served only when asked for
      profile: false,
    })
  })
})
