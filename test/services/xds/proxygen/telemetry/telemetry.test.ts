import { describe, expect, it } from "vitest"
import {
  DEFAULT_JSON_FORMAT,
  DEFAULT_TEXT_FORMAT,
  GATEWAY_NAME_LABEL,
  telemetryForProxy,
} from "../../../../../src/services/xds/proxygen/telemetry/index.js"
import { HCM_TYPE, hcm, policy, problems, pushOf, router, sidecar } from "./support.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const telemetry = (name: string, spec: unknown, namespace = "default") => policy("Telemetry", name, spec, namespace)
const ROOT = "mesh-system"
const app = sidecar("default", { app: "reviews" })

const paths = (logs: ReadonlyArray<J>) => logs.map((l) => l.typed_config.path)

describe("access logs", () => {
  it("none by default; the mesh config's file on every direction, in its encoding", () => {
    expect(telemetryForProxy(pushOf({}), app, "outbound").accessLog).toEqual([])
    const text = pushOf({}, { accessLogFile: "/dev/stdout" })
    for (const direction of ["inbound", "outbound", "gateway"] as const) {
      const [log] = telemetryForProxy(text, app, direction).accessLog as ReadonlyArray<J>
      expect(log).toEqual({
        name: "envoy.access_loggers.file",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog",
          path: "/dev/stdout",
          log_format: { text_format_source: { inline_string: DEFAULT_TEXT_FORMAT } },
        },
      })
    }
    const json = pushOf({}, { accessLogFile: "/var/log/proxy.log", accessLogEncoding: "JSON" })
    const [log] = telemetryForProxy(json, app, "inbound").accessLog as ReadonlyArray<J>
    expect(log.typed_config.path).toBe("/var/log/proxy.log")
    expect(Object.keys(log.typed_config.log_format.json_format.fields).sort()).toEqual(
      Object.keys(DEFAULT_JSON_FORMAT).sort(),
    )
    expect(log.typed_config.log_format.json_format.fields.method).toEqual({ stringValue: "%REQ(:METHOD)%" })
  })

  it("a mesh-wide Telemetry enables the envoy provider; a namespace's disables it there", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry("mesh-default", { accessLogging: [{ providers: [{ name: "envoy" }] }] }, ROOT),
          telemetry("quiet", { accessLogging: [{ disabled: true }] }, "quiet"),
        ],
      },
    })
    expect(paths(telemetryForProxy(push, app, "outbound").accessLog)).toEqual(["/dev/stdout"])
    expect(paths(telemetryForProxy(push, router("gateways"), "gateway").accessLog)).toEqual(["/dev/stdout"])
    expect(telemetryForProxy(push, sidecar("quiet"), "outbound").accessLog).toEqual([])
    expect(telemetryForProxy(push, sidecar("quiet"), "inbound").accessLog).toEqual([])
  })

  it("disabled: true removes the mesh config's log; match.mode limits it to one side", () => {
    const options = { accessLogFile: "/dev/stdout" }
    const off = pushOf(
      { proxyConfig: { telemetries: [telemetry("off", { accessLogging: [{ disabled: true }] }, ROOT)] } },
      options,
    )
    expect(telemetryForProxy(off, app, "outbound").accessLog).toEqual([])
    const serverOff = pushOf(
      {
        proxyConfig: {
          telemetries: [
            telemetry("server-off", { accessLogging: [{ match: { mode: "SERVER" }, disabled: true }] }, ROOT),
          ],
        },
      },
      options,
    )
    expect(telemetryForProxy(serverOff, app, "inbound").accessLog).toEqual([])
    expect(telemetryForProxy(serverOff, app, "outbound").accessLog).toHaveLength(1)
    // gateways are clients for the Telemetry API
    expect(telemetryForProxy(serverOff, router("default"), "gateway").accessLog).toHaveLength(1)
    const clientOnly = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry("client", { accessLogging: [{ match: { mode: "CLIENT" }, providers: [{ name: "envoy" }] }] }, ROOT),
        ],
      },
    })
    expect(telemetryForProxy(clientOnly, app, "outbound").accessLog).toHaveLength(1)
    expect(telemetryForProxy(clientOnly, app, "inbound").accessLog).toEqual([])
  })

  it("the most specific level wins: workload over namespace over root", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry("root", { accessLogging: [{ providers: [{ name: "envoy" }] }] }, ROOT),
          telemetry("ns", { accessLogging: [{ disabled: true }] }),
          telemetry("reviews", { selector: { matchLabels: { app: "reviews" } }, accessLogging: [{ disabled: false }] }),
        ],
      },
    })
    expect(telemetryForProxy(push, app, "outbound").accessLog).toHaveLength(1)
    expect(telemetryForProxy(push, sidecar("default", { app: "ratings" }), "outbound").accessLog).toEqual([])
  })

  it("a Gateway targetRef selects the gateway's pods by their gateway-name label", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry("gw", {
            targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "public" }],
            accessLogging: [{ providers: [{ name: "envoy" }] }],
          }),
        ],
      },
    })
    expect(
      telemetryForProxy(push, router("default", { [GATEWAY_NAME_LABEL]: "public" }), "gateway").accessLog,
    ).toHaveLength(1)
    expect(telemetryForProxy(push, router("default", { [GATEWAY_NAME_LABEL]: "other" }), "gateway").accessLog).toEqual(
      [],
    )
    expect(telemetryForProxy(push, app, "outbound").accessLog).toEqual([])
  })

  it("a filter expression becomes the CEL access log filter; unknown providers are reported", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry(
            "root",
            {
              accessLogging: [
                { providers: [{ name: "envoy" }, { name: "otel" }], filter: { expression: "response.code >= 400" } },
              ],
            },
            ROOT,
          ),
        ],
      },
    })
    const config = telemetryForProxy(push, app, "outbound")
    expect(config.accessLog).toHaveLength(1)
    expect((config.accessLog[0] as J).filter).toEqual({
      extension_filter: {
        name: "envoy.access_loggers.extension_filters.cel",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter",
          expression: "response.code >= 400",
        },
      },
    })
    expect(config.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('Telemetry mesh-system/root field accessLogging[0].providers: provider "otel" skipped'),
    ])
  })
})

describe("tracing", () => {
  const sampling = (push: ReturnType<typeof pushOf>, proxy = app, direction: "inbound" | "outbound" = "outbound") =>
    (telemetryForProxy(push, proxy, direction).tracing as J)?.random_sampling.value

  it("mesh config: PILOT_TRACE_SAMPLING when tracing is enabled, none when disabled", () => {
    expect(telemetryForProxy(pushOf({}, { traceSampling: 2.5 }), app, "outbound").tracing).toEqual({
      client_sampling: { value: 100 },
      random_sampling: { value: 2.5 },
      overall_sampling: { value: 100 },
    })
    expect(telemetryForProxy(pushOf({}, { enableTracing: false }), app, "outbound").tracing).toBeUndefined()
  })

  it("sampling precedence: workload, then namespace, then root, then PILOT_TRACE_SAMPLING", () => {
    const root = telemetry("root", { tracing: [{ randomSamplingPercentage: 10 }] }, ROOT)
    const ns = telemetry("ns", { tracing: [{ randomSamplingPercentage: 20 }] })
    const workload = telemetry("w", {
      selector: { matchLabels: { app: "reviews" } },
      tracing: [{ randomSamplingPercentage: 30 }],
    })
    const tagsOnly = telemetry("w", {
      selector: { matchLabels: { app: "reviews" } },
      tracing: [{ customTags: { a: { literal: { value: "b" } } } }],
    })
    const options = { traceSampling: 1 }
    expect(sampling(pushOf({ proxyConfig: { telemetries: [root, ns, workload] } }, options))).toBe(30)
    expect(sampling(pushOf({ proxyConfig: { telemetries: [root, ns, tagsOnly] } }, options))).toBe(20)
    expect(sampling(pushOf({ proxyConfig: { telemetries: [root] } }, options))).toBe(10)
    expect(sampling(pushOf({ proxyConfig: { telemetries: [telemetry("ns", { tracing: [{}] })] } }, options))).toBe(1)
    // a Telemetry's tracing applies even when the mesh config disables tracing
    expect(sampling(pushOf({ proxyConfig: { telemetries: [root] } }, { enableTracing: false }))).toBe(10)
  })

  it("match.mode per direction, custom tags, disableSpanReporting, providers reported", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry(
            "root",
            {
              tracing: [
                {
                  match: { mode: "SERVER" },
                  providers: [{ name: "zipkin" }],
                  randomSamplingPercentage: 50,
                  customTags: {
                    cluster: { environment: { name: "CLUSTER_ID", defaultValue: "unknown" } },
                    team: { literal: { value: "payments" } },
                    user: { header: { name: "x-user" } },
                  },
                },
                { match: { mode: "CLIENT" }, disableSpanReporting: true },
              ],
            },
            ROOT,
          ),
        ],
      },
    })
    const inbound = telemetryForProxy(push, app, "inbound")
    expect(inbound.tracing).toEqual({
      client_sampling: { value: 100 },
      random_sampling: { value: 50 },
      overall_sampling: { value: 100 },
      custom_tags: [
        { tag: "cluster", environment: { name: "CLUSTER_ID", default_value: "unknown" } },
        { tag: "team", literal: { value: "payments" } },
        { tag: "user", request_header: { name: "x-user" } },
      ],
    })
    expect(inbound.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining(
        'Telemetry mesh-system/root field tracing[0].providers: provider "zipkin" not applied: no mesh config extension provider has this name',
      ),
    ])
    expect(sampling(push, app, "outbound")).toBe(0)
  })
})

describe("metrics, keys, conformance", () => {
  it("metrics overrides are reported, not applied", () => {
    const push = pushOf({
      proxyConfig: {
        telemetries: [
          telemetry(
            "root",
            { metrics: [{ overrides: [{ match: { metric: "REQUEST_COUNT" }, disabled: true }] }] },
            ROOT,
          ),
        ],
      },
    })
    const config = telemetryForProxy(push, app, "outbound")
    expect(config.accessLog).toEqual([])
    expect(config.warnings.map((w) => [w.scope, w.message])).toEqual([
      ["model", expect.stringContaining("Telemetry mesh-system/root field metrics: not applied")],
    ])
  })

  it("keys: shared by proxies treated alike, changed by the Telemetries, the direction and the options", () => {
    const t = telemetry("root", { accessLogging: [{ providers: [{ name: "envoy" }] }] }, ROOT)
    const push = pushOf({ proxyConfig: { telemetries: [t] } })
    const a = telemetryForProxy(push, sidecar("default", { app: "x" }, {}, "10.0.0.1"), "outbound").key
    expect(telemetryForProxy(push, sidecar("default", { app: "x" }, {}, "10.0.0.2"), "outbound").key).toBe(a)
    expect(telemetryForProxy(push, sidecar("other", { app: "y" }), "outbound").key).toBe(a)
    expect(telemetryForProxy(push, sidecar("default", { app: "x" }), "inbound").key).not.toBe(a)
    const changed = pushOf({
      proxyConfig: { telemetries: [telemetry("root", { accessLogging: [{ disabled: true }] }, ROOT)] },
    })
    expect(telemetryForProxy(changed, sidecar("default", { app: "x" }), "outbound").key).not.toBe(a)
    expect(
      telemetryForProxy(pushOf({ proxyConfig: { telemetries: [t] } }, { traceSampling: 5 }), app, "outbound").key,
    ).not.toBe(a)
  })

  it("access logs (text, JSON, filtered) and tracing pass the proxy's protos and validate.rules", () => {
    const push = pushOf(
      {
        proxyConfig: {
          telemetries: [
            telemetry(
              "root",
              {
                accessLogging: [{ providers: [{ name: "envoy" }], filter: { expression: "response.code >= 400" } }],
                tracing: [
                  {
                    randomSamplingPercentage: 12.5,
                    customTags: {
                      a: { literal: { value: "b" } },
                      c: { environment: { name: "POD_NAME" } },
                      d: { header: { name: "x-d", defaultValue: "none" } },
                    },
                  },
                ],
              },
              ROOT,
            ),
          ],
        },
      },
      { accessLogFile: "/dev/stdout" },
    )
    const text = telemetryForProxy(push, app, "outbound")
    expect(problems(HCM_TYPE, hcm({ access_log: text.accessLog, tracing: text.tracing }))).toEqual([])
    const json = telemetryForProxy(
      pushOf({}, { accessLogFile: "/dev/stdout", accessLogEncoding: "JSON" }),
      app,
      "inbound",
    )
    expect(problems(HCM_TYPE, hcm({ access_log: json.accessLog, tracing: json.tracing }))).toEqual([])
  })
})
