/**
 * Typed configs of Envoy types the server's codec does not load (an EnvoyFilter's Lua filter)
 * reach the wire encoded, not as the empty Any the codec would make of their inline form.
 */
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../../src/layers/xds/protos.js"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import { encodeForeignTypedConfigs } from "../../../../../src/services/xds/proxygen/envoy-filter/foreign-types.js"
import { codecKnowsType, messageTypeOfUrl } from "../../../../../src/services/xds/proxygen/envoy-filter/proto-types.js"
import { TypedConfig } from "../../../../../src/services/xds/proxygen/well-known.js"

const LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener"
const LUA = "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
const source = "function envoy_on_request(h) h:headers():add('x-lua', '1') end"

const listenerWith = (luaConfig: ProtoObject): ProtoObject => ({
  name: "0.0.0.0_80",
  filter_chains: [
    {
      filters: [
        {
          name: "envoy.filters.network.http_connection_manager",
          typed_config: {
            "@type": TypedConfig.httpConnectionManager,
            stat_prefix: "outbound_0.0.0.0_80",
            http_filters: [
              { name: "envoy.filters.http.lua", typed_config: luaConfig },
              { name: "envoy.filters.http.router", typed_config: { "@type": TypedConfig.router } },
            ],
          },
        },
      ],
    },
  ],
})

const inlineLua = { "@type": LUA, default_source_code: { inline_string: source } }

/** The Lua filter's typed config as the codec put it on the wire, decoded. */
const luaOnTheWire = (listener: ProtoObject) => {
  const { codec } = loadXdsProtos()
  const decoded = codec.decode(LISTENER, codec.encode(LISTENER, listener)) as {
    filter_chains: Array<{ filters: Array<{ typed_config: { http_filters: Array<{ typed_config: ProtoObject }> } }> }>
  }
  return decoded.filter_chains[0]!.filters[0]!.typed_config.http_filters[0]!.typed_config
}

describe("EnvoyFilter typed configs of types the codec does not load", () => {
  it("knows which types the codec loads", () => {
    expect(codecKnowsType(TypedConfig.httpConnectionManager)).toBe(true)
    expect(codecKnowsType(TypedConfig.router)).toBe(true)
    expect(codecKnowsType(LUA)).toBe(false)
  })

  it("the codec alone loses a Lua config: its inline form goes out empty", () => {
    const wire = luaOnTheWire(listenerWith(inlineLua))
    const bytes = (wire.value ?? Buffer.alloc(0)) as Uint8Array
    expect(bytes.length).toBe(0)
  })

  it("encoded first, the Lua config reaches the wire whole; the known types around it stay inline", () => {
    const listener = listenerWith(inlineLua)
    const sealed = encodeForeignTypedConfigs(listener) as ProtoObject
    const hcm = (sealed.filter_chains as Array<{ filters: Array<{ typed_config: ProtoObject }> }>)[0]!.filters[0]!
      .typed_config
    expect(hcm["@type"]).toBe(TypedConfig.httpConnectionManager)
    const wire = luaOnTheWire(sealed)
    expect(wire.type_url).toBe(LUA)
    const lua = messageTypeOfUrl(LUA)!
    const decoded = lua.toObject(lua.decode(wire.value as Uint8Array)) as {
      default_source_code?: { inline_string?: string }
    }
    expect(decoded.default_source_code?.inline_string).toBe(source)
    // The input is not changed.
    expect(
      (listener.filter_chains as Array<{ filters: Array<{ typed_config: ProtoObject }> }>)[0]!.filters[0]!.typed_config
        .http_filters,
    ).toContainEqual({ name: "envoy.filters.http.lua", typed_config: inlineLua })
  })

  it("returns the same object when nothing is foreign, and leaves unknown types as they are", () => {
    const plain = listenerWith({ "@type": TypedConfig.fault })
    expect(encodeForeignTypedConfigs(plain)).toBe(plain)
    const unknown = { "@type": "type.googleapis.com/acme.v1.Config", x: 1 }
    expect(encodeForeignTypedConfigs(unknown)).toBe(unknown)
  })
})
