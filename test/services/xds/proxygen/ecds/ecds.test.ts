import { describe, expect, it } from "vitest"
import {
  generateExtensionConfigs,
  placeWasmFilters,
  WASM_IMAGE_PULL_POLICY_ENV,
  WASM_RESOURCE_VERSION_ENV,
  wasmFilterRefs,
  wasmPluginsForProxy,
} from "../../../../../src/services/xds/proxygen/ecds/index.js"
import { GATEWAY_NAME_LABEL } from "../../../../../src/services/xds/proxygen/telemetry/index.js"
import { ExtensionConfigType } from "../../../../../src/services/xds/proxygen/well-known.js"
import { HCM_TYPE, hcm, policy, problems, pushOf, router, sidecar } from "../telemetry/support.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const SHA = "a".repeat(64)
const plugin = (name: string, spec: Record<string, unknown>, namespace = "default", resourceVersion?: string) =>
  policy(
    "WasmPlugin",
    name,
    { url: "oci://registry.example/filters/auth:v1", ...spec },
    namespace,
    resourceVersion !== undefined ? { resourceVersion } : {},
  )
const ROOT = "mesh-system"
const app = sidecar("default", { app: "reviews" })
const names = (list: ReadonlyArray<{ meta: { namespace: string; name: string } }>) =>
  list.map((p) => `${p.meta.namespace}/${p.meta.name}`)
const filterName = (ns: string, name: string) => `extensions.mesh.io/wasmplugin/${ns}.${name}`

describe("WasmPlugin selection and order", () => {
  it("root namespace and own namespace plugins whose selector matches", () => {
    const push = pushOf({
      proxyConfig: {
        wasmPlugins: [
          plugin("mesh-wide", {}, ROOT),
          plugin("root-selected", { selector: { matchLabels: { app: "reviews" } } }, ROOT),
          plugin("ns-wide", {}),
          plugin("for-ratings", { selector: { matchLabels: { app: "ratings" } } }),
          plugin("elsewhere", {}, "other"),
          plugin("gw-only", { targetRefs: [{ kind: "Gateway", group: "gateway.networking.k8s.io", name: "public" }] }),
        ],
      },
    })
    expect(names(wasmPluginsForProxy(push, app))).toEqual([
      "mesh-system/mesh-wide",
      "mesh-system/root-selected",
      "default/ns-wide",
    ])
    expect(names(wasmPluginsForProxy(push, router("default", { [GATEWAY_NAME_LABEL]: "public" })))).toEqual([
      "mesh-system/mesh-wide",
      "default/gw-only", // same age: by name
      "default/ns-wide",
    ])
  })

  it("by phase (AUTHN, AUTHZ, STATS, unspecified), then priority highest first, unset last", () => {
    const push = pushOf({
      proxyConfig: {
        wasmPlugins: [
          plugin("stats", { phase: "STATS" }),
          plugin("low", { phase: "AUTHN", priority: 1 }),
          plugin("none", { phase: "AUTHN" }),
          plugin("high", { phase: "AUTHN", priority: 100 }),
          plugin("plain", {}),
          plugin("authz", { phase: "AUTHZ", priority: -5 }),
          plugin("root-authn", { phase: "AUTHN", priority: 1 }, ROOT),
        ],
      },
    })
    expect(names(wasmPluginsForProxy(push, app))).toEqual([
      "default/high",
      "mesh-system/root-authn",
      "default/low",
      "default/none",
      "default/authz",
      "default/stats",
      "default/plain",
    ])
    expect(names(wasmPluginsForProxy(push, app, "AUTHZ"))).toEqual(["default/authz"])
  })

  it("match: mode per direction (gateways take both), ports only for listeners of that port", () => {
    const push = pushOf({
      proxyConfig: {
        wasmPlugins: [
          plugin("server", { match: [{ mode: "SERVER" }] }),
          plugin("client", { match: [{ mode: "CLIENT" }] }),
          plugin("port-8080", { match: [{ ports: [{ number: 8080 }] }] }),
          plugin("network", { type: "NETWORK" }),
        ],
      },
    })
    const refs = (direction: "inbound" | "outbound" | "gateway", port?: number) =>
      wasmFilterRefs(push, direction === "gateway" ? router("default") : app, direction, port).map(
        (r) => (r.filter as J).name,
      )
    expect(refs("inbound")).toEqual([filterName("default", "server")])
    expect(refs("outbound")).toEqual([filterName("default", "client")])
    expect(refs("gateway")).toEqual([filterName("default", "client"), filterName("default", "server")])
    expect(refs("inbound", 8080)).toEqual([filterName("default", "port-8080"), filterName("default", "server")])
  })
})

describe("filter references", () => {
  const push = pushOf({
    proxyConfig: {
      wasmPlugins: [
        plugin("authn", { phase: "AUTHN" }),
        plugin("authz", { phase: "AUTHZ" }),
        plugin("stats", { phase: "STATS" }),
        plugin("plain", {}),
        plugin("broken", { url: "ftp://example.com/x.wasm" }),
      ],
    },
  })
  const refs = wasmFilterRefs(push, app, "inbound")

  it("ECDS entries waiting for their config over ADS; unsupported URLs left out", () => {
    expect(refs.map((r) => [(r.filter as J).name, r.phase, r.before])).toEqual([
      [filterName("default", "authn"), "AUTHN", "envoy.filters.http.jwt_authn"],
      [filterName("default", "authz"), "AUTHZ", "envoy.filters.http.rbac"],
      [filterName("default", "stats"), "STATS", undefined],
      [filterName("default", "plain"), "UNSPECIFIED_PHASE", undefined],
    ])
    expect(refs[0]!.filter).toEqual({
      name: filterName("default", "authn"),
      config_discovery: {
        config_source: { ads: {}, initial_fetch_timeout: { seconds: "0" }, resource_api_version: "V3" },
        type_urls: [
          "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
          "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
        ],
      },
    })
  })

  it("placed AUTHN before JWT, AUTHZ before RBAC, STATS and unspecified before the tail", () => {
    const f = (name: string) => ({ name })
    const order = (filters: ReadonlyArray<{ name: string }>) =>
      placeWasmFilters(filters, refs).map((x) =>
        String(x.name).replace("extensions.mesh.io/wasmplugin/default.", "wasm:"),
      )
    expect(
      order([
        f("istio.alpn"),
        f("envoy.filters.http.jwt_authn"),
        f("envoy.filters.http.rbac"),
        f("envoy.filters.http.rbac"),
        f("envoy.filters.http.cors"),
        f("envoy.filters.http.fault"),
        f("envoy.filters.http.router"),
      ]),
    ).toEqual([
      "istio.alpn",
      "wasm:authn",
      "envoy.filters.http.jwt_authn",
      "wasm:authz",
      "envoy.filters.http.rbac",
      "envoy.filters.http.rbac",
      "wasm:stats",
      "wasm:plain",
      "envoy.filters.http.cors",
      "envoy.filters.http.fault",
      "envoy.filters.http.router",
    ])
    expect(order([f("envoy.filters.http.rbac.deny"), f("envoy.filters.http.router")])).toEqual([
      "wasm:authn",
      "wasm:authz",
      "envoy.filters.http.rbac.deny",
      "wasm:stats",
      "wasm:plain",
      "envoy.filters.http.router",
    ])
    expect(order([f("envoy.filters.http.jwt_authn"), f("envoy.filters.http.router")])).toEqual([
      "wasm:authn",
      "envoy.filters.http.jwt_authn",
      "wasm:authz",
      "wasm:stats",
      "wasm:plain",
      "envoy.filters.http.router",
    ])
    expect(order([f("envoy.filters.http.router")])).toEqual([
      "wasm:authn",
      "wasm:authz",
      "wasm:stats",
      "wasm:plain",
      "envoy.filters.http.router",
    ])
  })

  it("an HCM with the references passes the proxy's protos and validate.rules", () => {
    const http = placeWasmFilters(hcm({}).http_filters as ReadonlyArray<J>, refs)
    expect(problems(HCM_TYPE, hcm({ http_filters: http }))).toEqual([])
  })
})

describe("ECDS resources", () => {
  const push = pushOf({
    proxyConfig: {
      wasmPlugins: [
        plugin(
          "auth",
          {
            phase: "AUTHN",
            sha256: SHA,
            pluginName: "basic_auth",
            pluginConfig: { realm: "mesh", users: [{ name: "a" }] },
            failStrategy: "FAIL_OPEN",
            imagePullPolicy: "Always",
            vmConfig: {
              env: [
                { name: "MODE", value: "strict" },
                { name: "POD_NAME", valueFrom: "HOST" },
              ],
            },
          },
          "default",
          "42",
        ),
        plugin("local", { url: "file:///opt/filters/local.wasm" }),
        plugin("bare", { url: "registry.example/filters/bare:v2" }),
        plugin("broken", { url: "ftp://example.com/x.wasm", failStrategy: "FAIL_CLOSE" }),
      ],
    },
  })

  it("TypedExtensionConfig with the Wasm filter: remote (oci) source, fail_open, env, configuration", () => {
    const generated = generateExtensionConfigs(push, app, [filterName("default", "auth")])
    expect(generated.resources.map((r) => r.name)).toEqual([filterName("default", "auth")])
    expect(generated.resources[0]!.build()).toEqual({
      name: filterName("default", "auth"),
      typed_config: {
        "@type": "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm",
        config: {
          name: "default.auth",
          root_id: "basic_auth",
          vm_config: {
            runtime: "envoy.wasm.runtime.v8",
            code: {
              remote: {
                http_uri: { uri: "oci://registry.example/filters/auth:v1", cluster: "_", timeout: { seconds: "30" } },
                sha256: SHA,
              },
            },
            environment_variables: {
              host_env_keys: ["POD_NAME"],
              key_values: { [WASM_IMAGE_PULL_POLICY_ENV]: "Always", [WASM_RESOURCE_VERSION_ENV]: "42", MODE: "strict" },
            },
          },
          configuration: {
            "@type": "type.googleapis.com/google.protobuf.StringValue",
            value: JSON.stringify({ realm: "mesh", users: [{ name: "a" }] }),
          },
          fail_open: true,
        },
      },
    })
    expect(problems(ExtensionConfigType, generated.resources[0]!.build())).toEqual([])
  })

  it("file:// as a local file, bare references as oci://, fail-closed by default", () => {
    const all = generateExtensionConfigs(push, app, [])
    const byName = new Map(all.resources.map((r) => [r.name, r.build() as J]))
    const local = byName.get(filterName("default", "local"))
    expect(local.typed_config.config.vm_config.code).toEqual({ local: { filename: "/opt/filters/local.wasm" } })
    expect(local.typed_config.config.fail_open).toBeUndefined()
    expect(problems(ExtensionConfigType, local)).toEqual([])
    const bare = byName.get(filterName("default", "bare"))
    expect(bare.typed_config.config.vm_config.code.remote.http_uri.uri).toBe("oci://registry.example/filters/bare:v2")
    expect(byName.has(filterName("default", "broken"))).toBe(false)
    expect(all.warnings).toEqual([
      {
        level: "warning",
        scope: "wasm",
        message: expect.stringContaining('WasmPlugin default/broken field url: unsupported scheme "ftp"'),
      },
    ])
  })

  it("names of no applying plugin have no resource; keys follow the plugin only", () => {
    expect(generateExtensionConfigs(push, sidecar("other"), [filterName("default", "auth")]).resources).toEqual([])
    const key = (p: ReturnType<typeof pushOf>, proxy = app) =>
      generateExtensionConfigs(p, proxy, [filterName("default", "local")]).resources[0]!.key
    expect(key(push, sidecar("default", { app: "other" }))).toBe(key(push))
    const changed = pushOf({
      proxyConfig: { wasmPlugins: [plugin("local", { url: "file:///opt/filters/local-v2.wasm" })] },
    })
    expect(key(changed)).not.toBe(key(push))
  })
})
