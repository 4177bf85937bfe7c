/**
 * Telemetry providers from mesh config `extensionProviders`: file loggers with their formats,
 * the gRPC access log services (HTTP on connection managers, TCP on TCP proxies), and the
 * zipkin / opentelemetry / datadog tracers, in the listeners the proxy gets.
 */
import { describe, expect, it } from "vitest"
import {
  defaultExtensionProviders,
  parseExtensionProviders,
} from "../../../../../src/services/mesh-config/extension-providers.js"
import { asProtoData, type ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import type { ProxyGenOptions, PushContext } from "../../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateForProxy } from "../../../../../src/services/xds/proxygen/generate.js"
import type { ProxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import {
  DEFAULT_JSON_FORMAT,
  DEFAULT_TEXT_FORMAT,
  telemetryForProxy,
} from "../../../../../src/services/xds/proxygen/telemetry/index.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import { baseInput, sidecar as reviewsSidecar, svc } from "../inbound/fixtures.js"
import { HCM_TYPE, hcm, policy, problems, pushOf, sidecar } from "./support.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const ROOT = "mesh-system"
const OBS = (name: string) => `${name}.observability.svc.cluster.local`

const extensionProviders = [
  ...parseExtensionProviders([
    { name: "plain", envoyFileAccessLog: { path: "" } },
    {
      name: "text",
      envoyFileAccessLog: { path: "/var/log/text.log", logFormat: { text: "%REQ(:METHOD)% %PROTOCOL%" } },
    },
    {
      name: "json",
      envoyFileAccessLog: { path: "/var/log/json.log", logFormat: { labels: { method: "%REQ(:METHOD)%", n: 1 } } },
    },
    {
      name: "http-als",
      envoyHttpAls: {
        service: OBS("als"),
        port: 9001,
        logName: "requests",
        additionalRequestHeadersToLog: ["x-request-id"],
      },
    },
    { name: "tcp-als", envoyTcpAls: { service: OBS("als"), port: 9001 } },
    { name: "lost-als", envoyHttpAls: { service: OBS("nowhere"), port: 9001 } },
    { name: "zipkin", zipkin: { service: OBS("zipkin"), port: 9411, maxTagLength: 128 } },
    { name: "zipkin64", zipkin: { service: OBS("zipkin"), port: 9411, enable64bitTraceId: true } },
    { name: "otel", opentelemetry: { service: OBS("otel"), port: 4317 } },
    { name: "dd", datadog: { service: OBS("dd"), port: 8126 } },
    { name: "ls", lightstep: { service: OBS("ls"), port: 8080 } },
  ]),
  ...defaultExtensionProviders,
]

const observability = (
  [
    ["als", 9001],
    ["zipkin", 9411],
    ["otel", 4317],
    ["dd", 8126],
  ] as const
).map(([name, port]) => svc(OBS(name), [{ name: "grpc", port, protocol: "GRPC" }], "observability"))

const telemetry = (name: string, spec: unknown, namespace = ROOT) => policy("Telemetry", name, spec, namespace)

const pushWith = (spec: unknown, options: Partial<ProxyGenOptions> = {}): PushContext =>
  pushOf(
    {
      services: [...baseInput().services, ...observability],
      endpoints: baseInput().endpoints,
      proxyConfig: { telemetries: [telemetry("root", spec)] },
    },
    { extensionProviders, ...options },
  )

const app = sidecar("default", { app: "reviews" })
const logsOf = (push: PushContext, proxy: ProxyView = app, direction: "inbound" | "outbound" = "outbound") =>
  telemetryForProxy(push, proxy, direction)

describe("access log providers", () => {
  it("file providers: their path (else /dev/stdout) and format; the built-in envoy one in the mesh's encoding", () => {
    const push = pushWith(
      { accessLogging: [{ providers: [{ name: "plain" }, { name: "text" }, { name: "json" }, { name: "envoy" }] }] },
      { accessLogEncoding: "JSON" },
    )
    const config = logsOf(push)
    expect(config.warnings).toEqual([])
    // Sorted by provider name: envoy, json, plain, text.
    const [envoy, json, plain, text] = config.accessLog as ReadonlyArray<J>
    expect([envoy, json, plain, text].map((l) => l.typed_config.path)).toEqual([
      "/dev/stdout",
      "/var/log/json.log",
      "/dev/stdout",
      "/var/log/text.log",
    ])
    // The built-in provider without a format takes the mesh's encoding (JSON here); another
    // provider without one gets the default text.
    expect(Object.keys(envoy.typed_config.log_format.json_format.fields).sort()).toEqual(
      Object.keys(DEFAULT_JSON_FORMAT).sort(),
    )
    expect(plain.typed_config.log_format).toEqual({ text_format_source: { inline_string: DEFAULT_TEXT_FORMAT } })
    // A text format gets its newline; labels become the JSON format as given.
    expect(text.typed_config.log_format).toEqual({
      text_format_source: { inline_string: "%REQ(:METHOD)% %PROTOCOL%\n" },
    })
    expect(json.typed_config.log_format).toEqual({
      json_format: { fields: { method: { stringValue: "%REQ(:METHOD)%" }, n: { numberValue: 1 } } },
    })
    // File loggers serve TCP proxies too.
    expect(config.tcpAccessLog).toEqual(config.accessLog)
  })

  it("gRPC access log services: HTTP on connection managers, TCP on TCP proxies, filtered alike", () => {
    const push = pushWith({
      accessLogging: [
        { providers: [{ name: "http-als" }, { name: "tcp-als" }], filter: { expression: "response.code >= 500" } },
      ],
    })
    const config = logsOf(push)
    expect(config.warnings).toEqual([])
    const filter = {
      extension_filter: {
        name: "envoy.access_loggers.extension_filters.cel",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter",
          expression: "response.code >= 500",
        },
      },
    }
    expect(config.accessLog).toEqual([
      {
        name: "envoy.access_loggers.http_grpc",
        filter,
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig",
          common_config: {
            log_name: "requests",
            grpc_service: { envoy_grpc: { cluster_name: `outbound|9001||${OBS("als")}`, authority: OBS("als") } },
            transport_api_version: "V3",
          },
          additional_request_headers_to_log: ["x-request-id"],
        },
      },
    ])
    expect(config.tcpAccessLog).toEqual([
      {
        name: "envoy.access_loggers.tcp_grpc",
        filter,
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.access_loggers.grpc.v3.TcpGrpcAccessLogConfig",
          common_config: {
            log_name: "tcp_envoy_accesslog",
            grpc_service: { envoy_grpc: { cluster_name: `outbound|9001||${OBS("als")}`, authority: OBS("als") } },
            transport_api_version: "V3",
          },
        },
      },
    ])
  })

  it("skips, with a warning each, providers that are unknown, of another kind, or at a missing service", () => {
    const push = pushWith({
      accessLogging: [{ providers: [{ name: "lost-als" }, { name: "zipkin" }, { name: "nope" }, { name: "plain" }] }],
    })
    const config = logsOf(push)
    expect((config.accessLog as ReadonlyArray<J>).map((l) => l.typed_config.path)).toEqual(["/dev/stdout"])
    expect(config.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        `provider "lost-als" skipped: could not find service ${OBS("nowhere")} in the service registry`,
      ),
      expect.stringContaining('provider "nope" skipped: no mesh config extension provider has this name'),
      expect.stringContaining('provider "zipkin" skipped: a zipkin provider writes no access log'),
    ])
  })
})

describe("tracing providers", () => {
  const tracingOf = (push: PushContext, proxy: ProxyView = app) => logsOf(push, proxy).tracing as J

  it("zipkin: the collector's cluster and hostname, 128-bit ids unless asked otherwise, the tag length", () => {
    const tracing = tracingOf(pushWith({ tracing: [{ providers: [{ name: "zipkin" }], randomSamplingPercentage: 5 }] }))
    expect(tracing).toEqual({
      client_sampling: { value: 100 },
      random_sampling: { value: 5 },
      overall_sampling: { value: 100 },
      provider: {
        name: "envoy.tracers.zipkin",
        typed_config: {
          "@type": "type.googleapis.com/envoy.config.trace.v3.ZipkinConfig",
          collector_cluster: `outbound|9411||${OBS("zipkin")}`,
          collector_endpoint: "/api/v2/spans",
          collector_endpoint_version: "HTTP_JSON",
          collector_hostname: OBS("zipkin"),
          trace_id_128bit: true,
          shared_span_context: { value: false },
        },
      },
      max_path_tag_length: { value: 128 },
    })
    const wide = tracingOf(pushWith({ tracing: [{ providers: [{ name: "zipkin64" }] }] }))
    expect(wide.provider.typed_config.trace_id_128bit).toBe(false)
    expect(wide.max_path_tag_length).toBeUndefined()
  })

  it("opentelemetry and datadog report under the workload's <app>.<namespace>", () => {
    const otel = tracingOf(pushWith({ tracing: [{ providers: [{ name: "otel" }] }] }))
    expect(otel.provider).toEqual({
      name: "envoy.tracers.opentelemetry",
      typed_config: {
        "@type": "type.googleapis.com/envoy.config.trace.v3.OpenTelemetryConfig",
        grpc_service: { envoy_grpc: { cluster_name: `outbound|4317||${OBS("otel")}`, authority: OBS("otel") } },
        service_name: "reviews.default",
      },
    })
    const dd = tracingOf(pushWith({ tracing: [{ providers: [{ name: "dd" }] }] }), sidecar("shop"))
    expect(dd.provider).toEqual({
      name: "envoy.tracers.datadog",
      typed_config: {
        "@type": "type.googleapis.com/envoy.config.trace.v3.DatadogConfig",
        collector_cluster: `outbound|8126||${OBS("dd")}`,
        service_name: "mesh-proxy.shop",
        collector_hostname: OBS("dd"),
      },
    })
  })

  it("the most specific entry's first provider counts; unusable ones leave the bootstrap tracer", () => {
    const push = pushOf(
      {
        services: observability,
        proxyConfig: {
          telemetries: [
            telemetry("root", { tracing: [{ providers: [{ name: "zipkin" }] }] }),
            telemetry("ns", { tracing: [{ providers: [{ name: "otel" }, { name: "dd" }] }] }, "default"),
          ],
        },
      },
      { extensionProviders },
    )
    const config = logsOf(push)
    expect((config.tracing as J).provider.name).toBe("envoy.tracers.opentelemetry")
    expect(config.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining("only the first provider (otel) is used; dd ignored"),
    ])
    expect(logsOf(push, sidecar("elsewhere")).tracing).toMatchObject({ provider: { name: "envoy.tracers.zipkin" } })

    const unusable = pushWith({ tracing: [{ providers: [{ name: "ls" }], randomSamplingPercentage: 7 }] })
    const fallback = logsOf(unusable)
    expect(fallback.tracing).toEqual({
      client_sampling: { value: 100 },
      random_sampling: { value: 7 },
      overall_sampling: { value: 100 },
    })
    expect(fallback.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        'provider "ls" not applied: a lightstep provider is not a tracer the generators implement',
      ),
    ])
  })
})

describe("providers in the proxy's listeners", () => {
  const listeners = (push: PushContext) => {
    const generated = generateForProxy(push, TypeUrl.Listener, { wildcard: true, names: [], proxy: reviewsSidecar() })
    const built = generated.resources.map((r) => asProtoData(r.build()))
    expectConformant(TypeUrl.Listener, built)
    return { built: built as ReadonlyArray<J>, keys: generated.resources.map((r) => r.key) }
  }
  const filtersOf = (listener: J): ReadonlyArray<J> =>
    [
      ...(listener.filter_chains ?? []),
      ...(listener.default_filter_chain ? [listener.default_filter_chain] : []),
    ].flatMap((c: J) => c.filters ?? [])
  const ofType = (all: ReadonlyArray<J>, suffix: string) =>
    all.filter((f) => String(f.typed_config?.["@type"]).endsWith(suffix))

  it("HTTP connection managers get the HTTP logs and the tracer, TCP proxies the TCP logs; all conformant", () => {
    const push = pushWith({
      accessLogging: [{ providers: [{ name: "http-als" }, { name: "tcp-als" }, { name: "json" }] }],
      tracing: [{ providers: [{ name: "otel" }] }],
    })
    const { built } = listeners(push)
    const inbound = built.find((l) => l.name === "virtualInbound")!
    const hcms = ofType(filtersOf(inbound), "HttpConnectionManager")
    const tcps = ofType(filtersOf(inbound), "TcpProxy")
    expect(hcms.length).toBeGreaterThan(0)
    expect(tcps.length).toBeGreaterThan(0)
    for (const h of hcms) {
      expect(h.typed_config.access_log.map((l: J) => l.name)).toEqual([
        "envoy.access_loggers.http_grpc",
        "envoy.access_loggers.file",
      ])
      expect(h.typed_config.tracing.provider.typed_config.service_name).toBe("reviews.default")
    }
    for (const t of tcps)
      expect(t.typed_config.access_log.map((l: J) => l.name)).toEqual([
        "envoy.access_loggers.file",
        "envoy.access_loggers.tcp_grpc",
      ])
  })

  it("listener keys follow the providers' settings", () => {
    const spec = {
      accessLogging: [{ providers: [{ name: "http-als" }] }],
      tracing: [{ providers: [{ name: "zipkin" }] }],
    }
    const a = listeners(pushWith(spec)).keys
    expect(listeners(pushWith(spec)).keys).toEqual(a)
    const renamed = extensionProviders.map((p) =>
      p.name === "http-als" && p.kind === "envoyHttpAls" ? { ...p, logName: "other" } : p,
    )
    const b = listeners(pushWith(spec, { extensionProviders: renamed })).keys
    expect(b.filter((k) => !a.includes(k)).length).toBeGreaterThan(0)
  })

  it("the HCM with tracer and gRPC log passes the proxy's protos alone too", () => {
    const config = logsOf(
      pushWith({ accessLogging: [{ providers: [{ name: "http-als" }] }], tracing: [{ providers: [{ name: "dd" }] }] }),
    )
    expect(problems(HCM_TYPE, hcm({ access_log: config.accessLog, tracing: config.tracing as ProtoObject }))).toEqual(
      [],
    )
  })
})
