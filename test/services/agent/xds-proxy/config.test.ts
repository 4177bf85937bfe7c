/** The xDS proxy's environment: the spec's defaults (keepalive 30s/10s, conversion on) and overrides. */
import { ConfigProvider, Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { XdsProxyConfig } from "../../../../src/services/agent/xds-proxy/config.js"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.withConfigProvider(XdsProxyConfig.config, ConfigProvider.fromMap(new Map(Object.entries(env)))))

describe("XdsProxyConfig", () => {
  it("defaults to the spec's keepalive and conversion on", () => {
    const config = read({})
    expect(Duration.toMillis(config.GRPC_KEEPALIVE_INTERVAL)).toBe(30_000)
    expect(Duration.toMillis(config.GRPC_KEEPALIVE_TIMEOUT)).toBe(10_000)
    expect(config.MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION).toBe(true)
  })

  it("reads Go durations and booleans from the environment", () => {
    const config = read({
      GRPC_KEEPALIVE_INTERVAL: "1m30s",
      GRPC_KEEPALIVE_TIMEOUT: "500ms",
      MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION: "false",
    })
    expect(Duration.toMillis(config.GRPC_KEEPALIVE_INTERVAL)).toBe(90_000)
    expect(Duration.toMillis(config.GRPC_KEEPALIVE_TIMEOUT)).toBe(500)
    expect(config.MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION).toBe(false)
  })

  it("a bad value names its variable", () => {
    expect(() => read({ GRPC_KEEPALIVE_INTERVAL: "soon" })).toThrow(/GRPC_KEEPALIVE_INTERVAL/)
  })
})
