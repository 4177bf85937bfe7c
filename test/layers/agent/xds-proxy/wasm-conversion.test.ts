/**
 * ECDS through the agent's xDS proxy with a Wasm fetcher (MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION):
 * remote modules reach the downstream as local files without the agent's variables; a module
 * that cannot be fetched becomes allow-all RBAC (fail open) or deny-all RBAC (fail closed);
 * responses stay in order while a fetch is under way; without a fetcher nothing is rewritten.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect } from "effect"
import { makeXdsProxy } from "../../../../src/layers/agent/xds-proxy/xds-proxy.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { makeAdsClient } from "../../../../src/layers/xds-client/ads-client.js"
import {
  WasmFetchError,
  type WasmFetcherShape,
  type WasmModuleRequest,
} from "../../../../src/services/agent/wasm/contract.js"
import type { ProtoObject } from "../../../../src/services/xds/cache/resource-spec.js"
import { plainToStruct } from "../../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { wasmFilterConfig, wasmResourceName } from "../../../../src/services/xds/proxygen/ecds/wasm-config.js"
import type { WasmPluginResource } from "../../../../src/services/xds/proxygen/ecds/wasm-plugins.js"
import { TypedConfig } from "../../../../src/services/xds/proxygen/well-known.js"
import type { ClientSnapshot, ResponseEvent } from "../../../../src/services/xds-client/client.js"
import { policy } from "../../../services/xds/proxygen/telemetry/support.js"
import { metricValue, poll } from "../../../support/metrics.js"
import { fakeUpstream } from "./fake-upstream.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely in assertions
type J = any

const WAIT = "10 seconds"
const ECDS = TypeUrl.ExtensionConfig
const node = { id: "sidecar~10.0.0.9~client.default~default.svc.cluster.local", metadata: plainToStruct({}) }
const SHA = "c".repeat(64)

/** The ECDS resource the discovery server writes for a WasmPlugin `name` with `spec`. */
const plugin = (name: string, spec: Record<string, unknown>): ProtoObject => {
  const resource = policy("WasmPlugin", name, spec, "default", {
    resourceVersion: "7",
  }) as unknown as WasmPluginResource
  const built = wasmFilterConfig(resource)
  if ("problem" in built) throw new Error(built.problem)
  return { "@type": ECDS, name: wasmResourceName(resource), typed_config: built.config }
}
const nameOf = (name: string) => `extensions.mesh.io/wasmplugin/default.${name}`

/** Fetches succeed with a path derived from the URL, except URLs containing "unreachable"; `gate` holds them. */
const testFetcher = (gate?: Deferred.Deferred<void>) => {
  const requests: Array<WasmModuleRequest> = []
  const fetcher: WasmFetcherShape = {
    fetch: (request) =>
      Effect.gen(function* () {
        requests.push(request)
        if (gate !== undefined) yield* Deferred.await(gate)
        if (request.url.includes("unreachable"))
          return yield* new WasmFetchError({ url: request.url, reason: "connection refused" })
        return `/var/lib/mesh/wasm/${request.url.slice(request.url.lastIndexOf("/") + 1)}.wasm`
      }),
  }
  return { requests, fetcher }
}

const setup = (mode: "sotw" | "delta", fetcher: WasmFetcherShape | undefined) =>
  Effect.gen(function* () {
    const upstream = yield* fakeUpstream
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-xdsproxy-wasm-"))),
      (d) => Effect.promise(() => rm(d, { recursive: true, force: true })),
    )
    const socketPath = join(dir, "XDS")
    yield* makeXdsProxy({
      socketPath,
      upstream: `127.0.0.1:${upstream.port}`,
      retry: { base: Duration.millis(20), max: Duration.millis(200) },
      ...(fetcher !== undefined ? { wasmFetcher: fetcher } : {}),
    })
    const events: Array<ResponseEvent> = []
    const client = yield* makeAdsClient({
      address: `unix://${socketPath}`,
      mode,
      node,
      onResponse: (e) => events.push(e),
    })
    yield* client.subscribe(ECDS, [nameOf("ok"), nameOf("open"), nameOf("closed"), nameOf("local")])
    yield* poll(
      Effect.sync(() => upstream.streams.length),
      (n) => n === 1,
      WAIT,
    )
    return { stream: upstream.streams[0]!, client, events }
  })

const four = [
  plugin("ok", { url: "oci://registry.example/filters/ok:v1", sha256: SHA, imagePullPolicy: "Always" }),
  plugin("open", { url: "oci://unreachable.example/filters/open:v1", failStrategy: "FAIL_OPEN" }),
  plugin("closed", { url: "https://unreachable.example/closed.wasm" }),
  plugin("local", { url: "file:///opt/local.wasm" }),
]
const held = (s: ClientSnapshot, name: string): J => s.types.get(ECDS)?.resources.get(nameOf(name))?.resource

const expectConverted = (s: ClientSnapshot) => {
  const ok = held(s, "ok").typed_config
  expect(ok["@type"]).toBe(TypedConfig.wasmHttp)
  expect(ok.config.vm_config.code.local.filename).toBe("/var/lib/mesh/wasm/ok:v1.wasm")
  expect(ok.config.vm_config.code.remote).toBeUndefined()
  expect(ok.config.vm_config.environment_variables).toBeUndefined()
  expect(held(s, "open").typed_config).toEqual({ "@type": TypedConfig.rbac })
  const closed = held(s, "closed").typed_config
  expect(closed["@type"]).toBe(TypedConfig.rbac)
  expect(closed.rules.action).toBe("DENY")
  // a local module passes unchanged, agent variables and all
  const local = held(s, "local").typed_config.config.vm_config
  expect(local.code.local.filename).toBe("/opt/local.wasm")
  expect(local.environment_variables.key_values.MESH_META_WASM_PLUGIN_RESOURCE_VERSION).toBe("7")
}

describe("xDS proxy: ECDS Wasm conversion", () => {
  it.scopedLive("SotW: fetched modules become local files; failures become allow-all or deny-all RBAC", () =>
    Effect.gen(function* () {
      const { requests, fetcher } = testFetcher()
      const { stream, client } = yield* setup("sotw", fetcher)
      stream.send({ version_info: "e1", type_url: ECDS, nonce: "n1", resources: four })
      const s = yield* client.waitFor((s) => (s.types.get(ECDS)?.acks ?? 0) === 1, WAIT)
      expectConverted(s)
      expect(requests.find((r) => r.url.endsWith("ok:v1"))).toEqual({
        url: "oci://registry.example/filters/ok:v1",
        sha256: SHA,
        pullPolicy: "Always",
        resourceVersion: "7",
      })
      // the downstream ACKed the converted response: its version and nonce survived the rewrite
      expect(s.types.get(ECDS)?.version).toBe("e1")
      expect(yield* metricValue("wasm_config_conversion_count", { result: "success" })).toBe(1)
      expect(yield* metricValue("wasm_config_conversion_count", { result: "fetch_failure" })).toBe(2)
      expect(yield* metricValue("wasm_config_conversion_count", { result: "no_remote_load" })).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("delta: the same conversion on delta resources", () =>
    Effect.gen(function* () {
      const { fetcher } = testFetcher()
      const { stream, client } = yield* setup("delta", fetcher)
      stream.send({
        system_version_info: "e1",
        type_url: ECDS,
        nonce: "n1",
        resources: four.map((resource, i) => ({ name: resource.name, version: `v${i}`, resource })),
      })
      const s = yield* client.waitFor((s) => (s.types.get(ECDS)?.acks ?? 0) === 1, WAIT)
      expectConverted(s)
      expect(s.types.get(ECDS)?.resources.get(nameOf("ok"))?.version).toBe("v0")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("responses keep their order while a fetch is under way", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { requests, fetcher } = testFetcher(gate)
      const { stream, client, events } = yield* setup("sotw", fetcher)
      yield* client.subscribe(TypeUrl.Cluster)
      stream.send({ version_info: "e1", type_url: ECDS, nonce: "n1", resources: [four[0]!] })
      stream.send({ version_info: "c1", type_url: TypeUrl.Cluster, nonce: "n2", resources: [] })
      // both have reached the agent, the fetch is waiting: nothing may overtake the ECDS response
      yield* poll(metricValue("xds_proxy_responses"), (n) => n >= 2, WAIT)
      yield* poll(
        Effect.sync(() => requests.length),
        (n) => n === 1,
        WAIT,
      )
      yield* Effect.sleep("100 millis")
      expect(events).toEqual([])
      yield* Deferred.succeed(gate, undefined)
      yield* poll(
        Effect.sync(() => events.length),
        (n) => n === 2,
        WAIT,
      )
      expect(events.map((e) => [e.typeUrl, e.version])).toEqual([
        [ECDS, "e1"],
        [TypeUrl.Cluster, "c1"],
      ])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("without a fetcher (conversion off) ECDS passes through unchanged", () =>
    Effect.gen(function* () {
      const { stream, client } = yield* setup("sotw", undefined)
      stream.send({ version_info: "e1", type_url: ECDS, nonce: "n1", resources: four })
      const s = yield* client.waitFor((s) => (s.types.get(ECDS)?.acks ?? 0) === 1, WAIT)
      expect(held(s, "ok").typed_config.config.vm_config.code.remote.http_uri.uri).toBe(
        "oci://registry.example/filters/ok:v1",
      )
      expect(held(s, "closed").typed_config["@type"]).toBe(TypedConfig.wasmHttp)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
