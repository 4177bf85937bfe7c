/**
 * Mesh config `extensionProviders` → the typed view the proxy generators read: each kind the
 * generators implement with its fields, unsupported kinds kept by name, wrong fields reported.
 */
import { describe, expect, it } from "vitest"
import {
  defaultExtensionProviders,
  parseExtensionProvider,
  parseExtensionProviders,
} from "../../../src/services/mesh-config/extension-providers.js"
import { applyMeshConfig, defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { proxyMeshOf } from "../../../src/services/xds/model/proxy-mesh.js"

const appliedProviders = (yaml: string) => {
  const applied = applyMeshConfig("mesh.yaml", yaml)
  if (applied._tag === "Left") throw new Error(JSON.stringify(applied.left))
  return proxyMeshOf(applied.right.value).extensionProviders
}

describe("extension providers", () => {
  it("the defaults: the envoy file logger; prometheus and stackdriver kept as unsupported", () => {
    expect(defaultExtensionProviders).toEqual([
      { kind: "unsupported", name: "prometheus", providerKind: "prometheus" },
      { kind: "unsupported", name: "stackdriver", providerKind: "stackdriver" },
      { kind: "envoyFileAccessLog", name: "envoy", path: "/dev/stdout" },
    ])
    expect(proxyMeshOf(defaultMeshConfig()).extensionProviders).toEqual(defaultExtensionProviders)
  })

  it("parses the ext_authz kinds from a mesh config file, merged by name over the defaults", () => {
    const providers = appliedProviders(`
extensionProviders:
- name: authz-http
  envoyExtAuthzHttp:
    service: ext-authz.foo.svc.cluster.local
    port: 8000
    timeout: 1.5s
    pathPrefix: /check
    failOpen: true
    statusOnError: "503"
    includeRequestHeadersInCheck: [x-ext-authz, "x-b3-*"]
    includeAdditionalHeadersInCheck: { x-extra: "1" }
    headersToUpstreamOnAllow: [x-user]
    headersToDownstreamOnDeny: [x-reason]
    includeRequestBodyInCheck: { maxRequestBytes: 4096, allowPartialMessage: true }
- name: authz-grpc
  envoyExtAuthzGrpc:
    service: foo/ext-authz.foo.svc.cluster.local
    port: "9000"
- name: envoy
  envoyFileAccessLog:
    path: /var/log/proxy.log
    logFormat: { labels: { method: "%REQ(:METHOD)%" } }
`)
    expect(providers.map((p) => [p.name, p.kind])).toEqual([
      ["prometheus", "unsupported"],
      ["stackdriver", "unsupported"],
      ["envoy", "envoyFileAccessLog"],
      ["authz-http", "envoyExtAuthzHttp"],
      ["authz-grpc", "envoyExtAuthzGrpc"],
    ])
    expect(providers[2]).toEqual({
      kind: "envoyFileAccessLog",
      name: "envoy",
      path: "/var/log/proxy.log",
      logFormat: { labels: { method: "%REQ(:METHOD)%" } },
    })
    expect(providers[3]).toEqual({
      kind: "envoyExtAuthzHttp",
      name: "authz-http",
      service: "ext-authz.foo.svc.cluster.local",
      port: 8000,
      timeoutMs: 1500,
      failOpen: true,
      statusOnError: 503,
      includeRequestBodyInCheck: { maxRequestBytes: 4096, allowPartialMessage: true, packAsBytes: false },
      pathPrefix: "/check",
      includeRequestHeadersInCheck: ["x-ext-authz", "x-b3-*"],
      includeAdditionalHeadersInCheck: { "x-extra": "1" },
      headersToUpstreamOnAllow: ["x-user"],
      headersToDownstreamOnDeny: ["x-reason"],
      headersToDownstreamOnAllow: [],
    })
    expect(providers[4]).toEqual({
      kind: "envoyExtAuthzGrpc",
      name: "authz-grpc",
      service: "foo/ext-authz.foo.svc.cluster.local",
      port: 9000,
      failOpen: false,
    })
  })

  it("parses the access log services and tracers", () => {
    const [http, tcp, zipkin, otel, datadog, lightstep] = parseExtensionProviders([
      {
        name: "als",
        envoyHttpAls: { service: "als.obs.svc.cluster.local", port: 9001, additionalRequestHeadersToLog: ["x-a"] },
      },
      { name: "tcp-als", envoyTcpAls: { service: "als.obs.svc.cluster.local", port: 9001, logName: "tcp" } },
      { name: "zipkin", zipkin: { service: "zipkin.obs.svc.cluster.local", port: 9411, maxTagLength: 256 } },
      { name: "otel", opentelemetry: { service: "otel.obs.svc.cluster.local", port: 4317 } },
      { name: "dd", datadog: { service: "dd.obs.svc.cluster.local", port: 8126 } },
      { name: "ls", lightstep: { service: "ls.obs.svc.cluster.local", port: 8080 } },
    ])
    expect(http).toEqual({
      kind: "envoyHttpAls",
      name: "als",
      service: "als.obs.svc.cluster.local",
      port: 9001,
      logName: "",
      filterStateObjectsToLog: [],
      additionalRequestHeadersToLog: ["x-a"],
      additionalResponseHeadersToLog: [],
      additionalResponseTrailersToLog: [],
    })
    expect(tcp).toMatchObject({ kind: "envoyTcpAls", logName: "tcp", port: 9001 })
    expect(zipkin).toEqual({
      kind: "zipkin",
      name: "zipkin",
      service: "zipkin.obs.svc.cluster.local",
      port: 9411,
      maxTagLength: 256,
      enable64bitTraceId: false,
    })
    expect(otel).toMatchObject({ kind: "opentelemetry", port: 4317, maxTagLength: 0 })
    expect(datadog).toMatchObject({ kind: "datadog", port: 8126 })
    expect(lightstep).toEqual({ kind: "unsupported", name: "ls", providerKind: "lightstep" })
  })

  it("keeps a provider with wrong fields as invalid, with every problem", () => {
    expect(
      parseExtensionProvider({
        name: "bad",
        envoyExtAuthzHttp: {
          port: 70000,
          pathPrefix: "check",
          statusOnError: "999",
          timeout: "soon",
          headersToUpstreamOnAllow: ["*"],
          includeRequestBodyInCheck: {},
        },
      }),
    ).toEqual({
      kind: "invalid",
      name: "bad",
      providerKind: "envoyExtAuthzHttp",
      problems: [
        'pathPrefix must begin with "/", found: "check"',
        'timeout must be a duration such as "10s"',
        "unsupported statusOnError 999: not an HTTP status code the proxy knows",
        "includeRequestBodyInCheck.maxRequestBytes must be greater than 0",
        "service must be set",
        "port must be in the range [1, 65535], found: 70000",
        'headersToUpstreamOnAllow: a single wildcard ("*") is not supported, change it to either prefix or suffix match',
      ],
    })
    expect(parseExtensionProvider({ name: "none" })).toMatchObject({
      kind: "invalid",
      problems: ["no provider kind is set"],
    })
    expect(parseExtensionProvider({ name: "two", zipkin: {}, datadog: {} })).toMatchObject({
      kind: "invalid",
      problems: ["more than one provider kind is set: zipkin, datadog"],
    })
    expect(parseExtensionProvider({ name: "z", zipkin: { service: "z", port: 9411, maxTagLength: -1 } })).toMatchObject(
      { kind: "invalid", problems: ["maxTagLength must be a non-negative integer"] },
    )
  })
})
