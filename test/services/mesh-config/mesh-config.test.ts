import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import {
  applyMeshConfig,
  defaultMeshConfig,
  parseMeshNetworks,
  resolveMeshConfig,
} from "../../../src/services/mesh-config/mesh-config.js"
import { layerMemory, MeshWatcher, MeshWatcherWriter } from "../../../src/services/mesh-config/watcher.js"

const ok = <A>(r: Either.Either<{ value: A; warnings: ReadonlyArray<string> }, unknown>) => {
  if (Either.isLeft(r)) throw new Error(`expected success, got ${JSON.stringify(r.left)}`)
  return r.right
}
const issues = (r: Either.Either<unknown, ReadonlyArray<{ path: string; message: string }>>) =>
  Either.isLeft(r) ? r.left.map((i) => `${i.path}: ${i.message}`) : []

describe("mesh config defaults", () => {
  it("match the reference's defaults with the mesh's names", () => {
    const d = defaultMeshConfig()
    expect(d).toMatchObject({
      trustDomain: "cluster.local",
      rootNamespace: "mesh-system",
      outboundTrafficPolicy: { mode: "ALLOW_ANY" },
      enableAutoMtls: true,
      ingressClass: "mesh",
      ingressService: "mesh-ingressgateway",
      ingressControllerMode: "STRICT",
      accessLogFile: "",
      defaultServiceExportTo: ["*"],
      defaultVirtualServiceExportTo: ["*"],
      defaultDestinationRuleExportTo: ["*"],
      enablePrometheusMerge: true,
      proxyListenPort: 15001,
      connectTimeout: "10s",
    })
    expect(d.defaultConfig).toMatchObject({
      discoveryAddress: "meshd.mesh-system.svc:15012",
      proxyAdminPort: 15000,
      statusPort: 15020,
      drainDuration: "45s",
      terminationDrainDuration: "5s",
      concurrency: 2,
    })
    expect(d.extensionProviders.map((p) => p.name)).toEqual(["prometheus", "stackdriver", "envoy"])
  })

  it("an empty file is the defaults", () => {
    expect(ok(applyMeshConfig("m", "")).value).toEqual(defaultMeshConfig())
  })
})

describe("applyMeshConfig", () => {
  it("fields override; defaultConfig merges field by field; proxyMetadata merges by key", () => {
    const base = ok(applyMeshConfig("m", "defaultConfig:\n  proxyMetadata: {A: '1', B: '1'}\n")).value
    const { value } = ok(
      applyMeshConfig(
        "m",
        `trustDomain: example.org
outboundTrafficPolicy: {mode: REGISTRY_ONLY}
defaultConfig:
  concurrency: 4
  proxyMetadata: {B: '2'}
`,
        base,
      ),
    )
    expect(value.trustDomain).toBe("example.org")
    expect(value.outboundTrafficPolicy.mode).toBe("REGISTRY_ONLY")
    expect(value.defaultConfig.concurrency).toBe(4)
    expect(value.defaultConfig.drainDuration).toBe("45s")
    expect(value.defaultConfig.proxyMetadata).toEqual({ A: "1", B: "2" })
  })

  it("extension providers merge by name; trust domain aliases accumulate", () => {
    const { value } = ok(
      applyMeshConfig(
        "m",
        `extensionProviders:
- name: envoy
  envoyFileAccessLog: {path: /dev/stderr}
- name: otel
  opentelemetry: {service: otel.ns, port: 4317}
trustDomainAliases: [b.org, a.org]
`,
      ),
    )
    expect(value.extensionProviders.map((p) => p.name)).toEqual(["prometheus", "stackdriver", "envoy", "otel"])
    expect(value.extensionProviders[2]).toEqual({ name: "envoy", envoyFileAccessLog: { path: "/dev/stderr" } })
    const again = ok(applyMeshConfig("m", "trustDomainAliases: [c.org, a.org]", value)).value
    expect(again.trustDomainAliases).toEqual(["a.org", "b.org", "c.org"])
  })

  it("unknown fields are ignored with a warning", () => {
    const r = ok(applyMeshConfig("m", "somethingNew: 1\ndefaultConfig: {futureField: x}\n"))
    expect(r.warnings).toEqual([
      "m: unknown field somethingNew ignored",
      "m: unknown field defaultConfig.futureField ignored",
    ])
  })

  it("reports every bad field with its path", () => {
    expect(
      issues(
        applyMeshConfig(
          "m",
          `proxyListenPort: 70000
connectTimeout: soon
outboundTrafficPolicy: {mode: SOMETIMES}
trustDomain: "bad domain"
defaultServiceExportTo: ["*", "ns1"]
defaultConfig:
  discoveryAddress: nohost
  concurrency: -1
  drainDuration: 1x
extensionProviders: [{name: a}, {name: a}]
`,
        ),
      ),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^proxyListenPort: /),
        expect.stringMatching(/^connectTimeout: /),
        expect.stringMatching(/^outboundTrafficPolicy\.mode: /),
        expect.stringMatching(/^trustDomain: invalid trust domain/),
        expect.stringMatching(/^defaultServiceExportTo: cannot have both/),
        expect.stringMatching(/^defaultConfig\.discoveryAddress: invalid address/),
        expect.stringMatching(/^defaultConfig\.concurrency: /),
        expect.stringMatching(/^defaultConfig\.drainDuration: /),
        expect.stringMatching(/^extensionProviders\[1\]\.name: duplicate/),
      ]),
    )
  })

  it("reports YAML errors and non-mapping documents", () => {
    expect(issues(applyMeshConfig("m", "a: [unclosed\n"))[0]).toMatch(/YAML syntax error/)
    expect(issues(applyMeshConfig("m", "- a\n- b\n"))).toEqual([": must be a YAML mapping"])
  })
})

describe("SHARED_MESH_CONFIG precedence", () => {
  it("defaults, then shared, then standard: the standard mesh config wins", () => {
    const { value } = ok(
      resolveMeshConfig({
        shared: {
          file: "shared",
          text: "trustDomain: shared.org\ningressClass: shared\ndefaultConfig: {concurrency: 8, statusPort: 16000}\n",
        },
        standard: { file: "mesh", text: "trustDomain: standard.org\ndefaultConfig: {concurrency: 3}\n" },
      }),
    )
    expect(value.trustDomain).toBe("standard.org")
    expect(value.ingressClass).toBe("shared")
    expect(value.defaultConfig.concurrency).toBe(3)
    expect(value.defaultConfig.statusPort).toBe(16000)
  })

  it("either source may be absent; a bad source is reported", () => {
    expect(ok(resolveMeshConfig({})).value).toEqual(defaultMeshConfig())
    expect(ok(resolveMeshConfig({ shared: { file: "s", text: "rootNamespace: shared-ns" } })).value.rootNamespace).toBe(
      "shared-ns",
    )
    const bad = resolveMeshConfig({
      shared: { file: "s", text: "enableAutoMtls: perhaps" },
      standard: { file: "m", text: "" },
    })
    expect(Either.isLeft(bad) && bad.left.map((i) => `${i.file} ${i.path}`)).toEqual(["s enableAutoMtls"])
  })
})

describe("parseMeshNetworks", () => {
  it("reads networks and checks endpoints and gateways", () => {
    const { value } = ok(
      parseMeshNetworks(
        "n",
        `networks:
  net1:
    endpoints: [{fromRegistry: Orchestrator}]
    gateways: [{address: 1.2.3.4, port: 15443}]
`,
      ),
    )
    expect(Object.keys(value.networks ?? {})).toEqual(["net1"])
    expect(ok(parseMeshNetworks("n", "")).value).toEqual({ networks: {} })
    expect(
      issues(
        parseMeshNetworks(
          "n",
          "networks:\n  x:\n    endpoints: [{fromCidr: a, fromRegistry: b}]\n    gateways: [{port: 0}]\n",
        ),
      ),
    ).toEqual(
      expect.arrayContaining([
        "networks.x.endpoints[0]: exactly one of fromCidr or fromRegistry must be set",
        expect.stringMatching(/^networks\.x\.gateways\[0\]\.port: /),
      ]),
    )
  })
})

describe("MeshWatcher layerMemory", () => {
  it.scoped("publishes the current config, then only real changes", () =>
    Effect.gen(function* () {
      const watcher = yield* MeshWatcher
      const writer = yield* MeshWatcherWriter
      expect((yield* watcher.config).trustDomain).toBe("cluster.local")
      expect(yield* writer.setConfig(defaultMeshConfig())).toBe(false)
      expect(yield* writer.setConfig({ ...defaultMeshConfig(), trustDomain: "x.org" })).toBe(true)
      const first = yield* watcher.configChanges.pipe(Stream.take(1), Stream.runCollect)
      expect(Chunk.unsafeHead(first).trustDomain).toBe("x.org")
    }).pipe(Effect.provide(layerMemory())),
  )
})
