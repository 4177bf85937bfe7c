/**
 * ECDS Wasm conversion rules against what the discovery server really writes for a WasmPlugin
 * (wasm-config.ts): the remote source and the agent's hints are read, the rewrite loads the
 * local file and strips the agent-only variables, and the RBAC replacements pass the proxy's
 * proto validation (allow-all enforces nothing, deny-all denies any request).
 */
import { describe, expect, it } from "vitest"
import {
  fetchFailureReplacement,
  planConversion,
  withLocalModule,
} from "../../../../src/services/agent/xds-proxy/wasm-conversion.js"
import type { ProtoObject } from "../../../../src/services/xds/cache/resource-spec.js"
import { wasmFilterConfig, wasmResourceName } from "../../../../src/services/xds/proxygen/ecds/wasm-config.js"
import type { WasmPluginResource } from "../../../../src/services/xds/proxygen/ecds/wasm-plugins.js"
import { ExtensionConfigType, TypedConfig } from "../../../../src/services/xds/proxygen/well-known.js"
import { policy, problems } from "../../xds/proxygen/telemetry/support.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const SHA = "b".repeat(64)

/** The ECDS resource the control plane sends for a plugin with `spec`. */
const extensionConfig = (spec: Record<string, unknown>, resourceVersion = "42"): ProtoObject => {
  const plugin = policy("WasmPlugin", "auth", spec, "default", { resourceVersion }) as unknown as WasmPluginResource
  const built = wasmFilterConfig(plugin)
  if ("problem" in built) throw new Error(built.problem)
  return { name: wasmResourceName(plugin), typed_config: built.config }
}

describe("planConversion", () => {
  it("reads the remote URI, checksum and the agent's hints off a remote plugin", () => {
    const plan = planConversion(
      extensionConfig({
        url: "oci://registry.example/filters/auth:v1",
        sha256: SHA,
        imagePullPolicy: "Always",
        failStrategy: "FAIL_OPEN",
      }),
    )
    expect(plan).toEqual({
      kind: "fetch",
      failOpen: true,
      request: {
        url: "oci://registry.example/filters/auth:v1",
        sha256: SHA,
        pullPolicy: "Always",
        resourceVersion: "42",
      },
    })
  })

  it("a plugin without pull policy uses the default; fail-closed is the default strategy", () => {
    const plan = planConversion(extensionConfig({ url: "https://modules.example/auth.wasm" }))
    expect(plan).toMatchObject({ kind: "fetch", failOpen: false, request: { pullPolicy: "" } })
  })

  it("local modules and other filter configs are left alone", () => {
    expect(planConversion(extensionConfig({ url: "file:///opt/auth.wasm" }))).toEqual({ kind: "no-remote-load" })
    expect(planConversion({ name: "x", typed_config: { "@type": TypedConfig.rbac } })).toEqual({ kind: "not-wasm" })
  })

  it("remote code without an HTTP URI is a missing fetch hint", () => {
    const config = extensionConfig({ url: "oci://registry.example/a:1", failStrategy: "FAIL_OPEN" }) as J
    delete config.typed_config.config.vm_config.code.remote.http_uri
    expect(planConversion(config)).toEqual({ kind: "missing-uri", failOpen: true })
  })
})

describe("withLocalModule", () => {
  it("loads the fetched file and strips only the agent's variables", () => {
    const original = extensionConfig({
      url: "oci://registry.example/filters/auth:v1",
      sha256: SHA,
      pluginName: "root",
      pluginConfig: { header: "x-auth" },
      vmConfig: {
        env: [
          { name: "MODE", value: "strict" },
          { name: "HOSTNAME", valueFrom: "HOST" },
        ],
      },
      failStrategy: "FAIL_OPEN",
    })
    const rewritten = withLocalModule(original, "/var/lib/mesh/wasm/abc.wasm") as J
    const config = rewritten.typed_config.config
    expect(rewritten.name).toBe((original as J).name)
    expect(config.vm_config.code).toEqual({ local: { filename: "/var/lib/mesh/wasm/abc.wasm" } })
    expect(config.vm_config.environment_variables).toEqual({
      host_env_keys: ["HOSTNAME"],
      key_values: { MODE: "strict" },
    })
    expect(config.vm_config.runtime).toBe("envoy.wasm.runtime.v8")
    expect(config.root_id).toBe("root")
    expect(config.fail_open).toBe(true)
    expect(config.configuration).toEqual((original as J).typed_config.config.configuration)
    expect(problems(ExtensionConfigType, rewritten)).toEqual([])
  })

  it("drops the environment when only the agent's variables were in it", () => {
    const rewritten = withLocalModule(extensionConfig({ url: "oci://r.example/a:1" }), "/tmp/a.wasm") as J
    expect(rewritten.typed_config.config.vm_config.environment_variables).toBeUndefined()
  })
})

describe("fetchFailureReplacement", () => {
  const original = extensionConfig({ url: "oci://registry.example/filters/auth:v1" })

  it("fail open: an RBAC filter without rules, under the plugin's name", () => {
    const replacement = fetchFailureReplacement(original, true) as J
    expect(replacement).toEqual({ name: (original as J).name, typed_config: { "@type": TypedConfig.rbac } })
    expect(problems(ExtensionConfigType, replacement)).toEqual([])
  })

  it("fail closed: an RBAC filter denying any request from anyone", () => {
    const replacement = fetchFailureReplacement(original, false) as J
    expect(replacement.name).toBe((original as J).name)
    expect(replacement.typed_config["@type"]).toBe(TypedConfig.rbac)
    const rules = replacement.typed_config.rules
    expect(rules.action).toBe("DENY")
    const policies = Object.values(rules.policies) as J[]
    expect(policies).toHaveLength(1)
    expect(policies[0].permissions).toEqual([{ any: true }])
    expect(policies[0].principals).toEqual([{ any: true }])
    expect(problems(ExtensionConfigType, replacement)).toEqual([])
  })
})
