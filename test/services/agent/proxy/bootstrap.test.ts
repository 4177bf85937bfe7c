/** The sidecar bootstrap: template values, the template rendered to JSON, the override merged over it. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { bootstrapValues, composeBootstrap } from "../../../../src/services/agent/proxy/bootstrap.js"
import { proxyBootstrap } from "../../../../src/services/agent/proxy/proxy.js"
import { defaultProxyConfig } from "../../../../src/services/mesh-config/index.js"

const node = { id: "sidecar~10.0.0.1~a-1.ns~ns.svc.cluster.local", metadata: { NAMESPACE: "ns", LABELS: { app: "a" } } }
const proxyConfig = { ...defaultProxyConfig(), proxyAdminPort: 15100, extraStatTags: ["tag1"] }
const values = bootstrapValues({
  node,
  serviceCluster: "a.ns",
  proxyConfig,
  xdsSocket: "/x/XDS",
  sdsSocket: "/s/socket",
})
const builtIn = proxyBootstrap({
  node,
  serviceCluster: "a.ns",
  adminPort: 15100,
  xdsSocket: "/x/XDS",
  sdsSocket: "/s/socket",
})

const TEMPLATE = `{
  "node": {"id": "{{ .nodeID }}", "cluster": "{{ .cluster }}", "metadata": {{ .meta_json_str }}},
  "admin": {"address": {"socket_address": {"address": "{{ .localhost }}", "port_value": {{ .adminPort }}}}},
  "stats_config": {"stats_tags": {{ toJSON .extraStatTags }}, "name_length": {{ .config.statNameLength }}},
  "static_resources": {"clusters": [{"name": "xds-grpc", "pipe": "{{ .xdsSocket }}"}]}
}`

describe("bootstrapValues", () => {
  it("exposes the node, sockets, ports and the effective proxy config", () => {
    expect(values).toMatchObject({
      nodeID: node.id,
      cluster: "a.ns",
      meta_json_str: JSON.stringify(node.metadata),
      adminPort: 15100,
      xdsSocket: "/x/XDS",
      sdsSocket: "/s/socket",
      discoveryAddress: proxyConfig.discoveryAddress,
      statNameLength: 189,
      extraStatTags: ["tag1"],
    })
    expect((values.config as typeof proxyConfig).drainDuration).toBe("45s")
  })
})

describe("composeBootstrap", () => {
  it("without a template or override is the built-in bootstrap", () => {
    expect(composeBootstrap({ values, builtIn })).toEqual(Either.right(builtIn))
  })

  it("renders the template to a JSON object", () => {
    const out = composeBootstrap({ template: { file: "t.json", text: TEMPLATE }, values, builtIn })
    expect(out).toEqual(
      Either.right({
        node: { id: node.id, cluster: "a.ns", metadata: node.metadata },
        admin: { address: { socket_address: { address: "127.0.0.1", port_value: 15100 } } },
        stats_config: { stats_tags: ["tag1"], name_length: 189 },
        static_resources: { clusters: [{ name: "xds-grpc", pipe: "/x/XDS" }] },
      }),
    )
  })

  it("merges the override over the generated bootstrap (objects merge, lists replace)", () => {
    const out = composeBootstrap({
      template: { file: "t.json", text: TEMPLATE },
      override: { file: "o.yaml", text: "admin:\n  access_log_path: /dev/null\nstats_config:\n  stats_tags: []\n" },
      values,
      builtIn,
    })
    expect(Either.isRight(out) && out.right).toMatchObject({
      admin: { access_log_path: "/dev/null", address: { socket_address: { port_value: 15100 } } },
      stats_config: { stats_tags: [], name_length: 189 },
    })
  })

  it("the override applies over the built-in bootstrap too", () => {
    const out = composeBootstrap({
      override: { file: "o.json", text: '{"node": {"cluster": "other"}}' },
      values,
      builtIn,
    })
    expect(Either.isRight(out) && out.right).toMatchObject({ node: { id: node.id, cluster: "other" } })
  })

  it("template errors name the flag, the file and the field", () => {
    const out = composeBootstrap({ template: { file: "t.json", text: '{"id": "{{ .nodeId }}"}' }, values, builtIn })
    expect(out).toEqual(Either.left("--templateFile t.json:1: unknown field .nodeId"))
  })

  it("a template that does not render to a JSON object is an error", () => {
    const bad = composeBootstrap({ template: { file: "t.json", text: '{"id": {{ .nodeID }}}' }, values, builtIn })
    expect(Either.isLeft(bad) && bad.left).toMatch(/^--templateFile t\.json: the rendered bootstrap is not valid JSON/)
    const list = composeBootstrap({ template: { file: "t.json", text: "[1]" }, values, builtIn })
    expect(list).toEqual(Either.left("--templateFile t.json: the rendered bootstrap is not a JSON object"))
  })

  it("a bad override is an error naming the variable and file", () => {
    const out = composeBootstrap({ override: { file: "o.json", text: "[1]" }, values, builtIn })
    expect(out).toEqual(Either.left("MESH_BOOTSTRAP_OVERRIDE o.json: must hold one JSON/YAML object (mapping)"))
  })
})
